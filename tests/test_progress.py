"""What the sweep prints: readable numbers, the progress line with its ETA, the farm's strongest-attacker line."""
from __future__ import annotations

from collections import Counter

from ray.tune.experiment import Trial

from core.numbers import readable
from platform.figures.figure_parts import short_labels
from platform.results.clock import clock
from platform.run.farm import strongest_line
from platform.run.progress import eta, progress_line


def test_numbers_keep_significant_digits_and_integers_stay_integers() -> None:
    assert [readable(v) for v in (0.0001, 0.81234, 1.0, 10.0, 0.05, 12.3456, float("inf"), 2.5e-5)] == [
        "0.0001", "0.812", "1", "10", "0.05", "12.3", "inf", "2.5e-05"]


def test_eta_extrapolates_the_pace_of_finished_trials() -> None:
    assert eta(elapsed=120, done=0, planned=15) is None
    assert eta(elapsed=120, done=3, planned=15) == 480  # 40 s per finished trial, 12 to go
    assert eta(elapsed=120, done=15, planned=15) == 0
    assert clock(3725) == "1:02:05" and clock(59.6) == "1:00"


def test_progress_line_counts_done_running_failed() -> None:
    counts = Counter({Trial.TERMINATED: 3, Trial.RUNNING: 2, Trial.ERROR: 1, Trial.PENDING: 9})
    # 4 ended in 4 min, 11 to go
    assert progress_line(counts, 15, 240) == "trials 3/15 done, 2 running, 1 failed · 4:00 elapsed · ETA 11:00"


def test_strongest_attacker_line_and_short_plot_labels() -> None:
    line = strongest_line("alpha=2 lam=1 adv_steps=1", 4, {"deep": 0.75, "thickness": 0.8123, "deep_raw": 0.7})
    assert line == "[alpha=2 lam=1 adv_steps=1] checkpoint 4: strongest attacker thickness 0.812 " \
                   "(deep 0.75, deep_raw 0.7, thickness 0.812)"
    assert short_labels(["alpha=inf lam=0.0001 adv_steps=1", "alpha=2 lam=3 adv_steps=1"]) == ["α=∞ λ=0.0001", "α=2 λ=3"]

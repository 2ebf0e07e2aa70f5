"""The front points' saturation estimates: when a sweep draws them, how the terminal table and the front figure show
them, and a real smoke sweep that draws them (slow)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from conftest import SharedSweep, store
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from core.pareto_axis import Axis
from platform.figures.front import draw_saturation
from platform.results.summary import SATURATION, format_summary, summarise
from platform.sweep import learning_curves

UTILITY = Axis("utility/fresh_accuracy", True, 0.0, 1.0)
PRIVACY = Axis("attack/max/accuracy", False, 1.0, 0.5)


@pytest.mark.parametrize(("asked", "profile", "drawn"), [
    (None, "quick", True), (None, "paper", True), (None, "smoke", False), (True, "smoke", True), (False, "quick", False)])
def test_curves_are_on_by_default_but_in_smoke_and_the_flag_wins(asked: bool | None, profile: str, drawn: bool) -> None:
    assert learning_curves(asked, profile) is drawn


def trials() -> pd.DataFrame:
    """Three finished trials; the two front points carry a saturation estimate, the dominated one none."""
    return pd.DataFrame({"name": ["a", "b", "c"], "status": ["FINISHED"] * 3, "lam": [0.0, 1.0, 2.0],
                         "utility/fresh_accuracy": [0.9, 0.8, 0.7], "attack/max/accuracy": [0.9, 0.7, 0.75],
                         "attack/max/train_records": [5000.0] * 3, SATURATION: [0.95, 0.78, np.nan]})


def test_the_terminal_table_shows_each_points_saturation_and_says_the_number_is_a_lower_bound() -> None:
    text = format_summary(summarise(trials(), [UTILITY, PRIVACY], ("lam",)), ("lam",))
    header, *rows = text.splitlines()[:4]
    assert header.split()[-1] == "saturation"
    assert rows[0].split()[-1] == "0.95" and rows[1].split()[-1] == "0.78" and rows[2].split()[-1] == "NaN"
    assert "trained on the release of 5,000 records: a lower bound" in text


def test_the_front_figure_draws_a_whisker_from_the_measured_to_the_estimated_value() -> None:
    # privacy on the vertical axis: one vertical segment per point with an estimate, at its utility, from its
    # attack/max/accuracy to its saturation; none for the point without one, and none where privacy is not drawn.
    fig = Figure()
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    draw_saturation(ax, trials(), [UTILITY, PRIVACY])
    segments = sorted((tuple(line.get_xdata()), tuple(line.get_ydata())) for line in ax.get_lines())
    assert segments == [((0.8, 0.8), (0.7, 0.78)), ((0.9, 0.9), (0.9, 0.95))]
    flipped = fig.add_subplot()
    draw_saturation(flipped, trials(), [PRIVACY, UTILITY])  # privacy across: horizontal whiskers
    assert sorted(tuple(line.get_xdata()) for line in flipped.get_lines()) == [(0.7, 0.78), (0.9, 0.95)]
    untouched = fig.add_subplot()
    draw_saturation(untouched, trials(), [UTILITY, Axis("utility/psnr", True, 0.0, 40.0)])
    assert not untouched.get_lines()


@pytest.mark.slow  # a real smoke sweep with its front's learning curves: about two minutes on 2 busy cores
def test_a_sweep_logs_each_front_points_saturation_beside_its_privacy(noise_sweep: SharedSweep) -> None:
    # run in the README's environment (no PYTHONPATH): the curves' Ray tasks must load in a worker as a user starts it
    out, client = noise_sweep, store(noise_sweep.folder)
    exp = client.get_experiment_by_name("putlab-noise")
    assert exp is not None
    front = client.search_runs([exp.experiment_id], filter_string="tags.`putlab.pareto_front` = 'true'")
    assert front and re.search(rf"learning curves: refitting the strongest attacker of {len(front)} front point", out.stdout)
    for run in front:
        metrics, winner = run.data.metrics, run.data.tags["putlab.strongest_attacker"]
        # 25/50/100 % of the trial's 512 records and 200 %: AMNIST holds 1,024 outside its test split
        assert [metrics[f"attack/{winner}/curve/{p}/records"] for p in (25, 50, 100, 200)] == [128, 256, 512, 1024]
        assert metrics[f"attack/{winner}/curve/100/records"] == metrics["attack/max/train_records"]
        low, high = metrics[f"{SATURATION}/ci_low"], metrics[f"{SATURATION}/ci_high"]
        assert low <= metrics[SATURATION] <= high <= 1.0
        half = (metrics[f"attack/{winner}/curve/200/ci_high"] - metrics[f"attack/{winner}/curve/200/ci_low"]) / 2
        assert metrics[SATURATION] >= metrics[f"attack/{winner}/curve/200"] - half - 1e-12
        line = rf"\[{re.escape(run.info.run_name)}\] checkpoint \d+: {winner} at 25/50/100/200 % of 512 records"
        assert re.search(line, out.stdout)
    table = out.stdout.split("Pareto front:")[0]
    assert any(line.split()[-1:] == ["saturation"] for line in table.splitlines())  # the table's last column
    assert "a lower bound on leakage" in out.stdout

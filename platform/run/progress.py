"""A sweep's progress on the terminal: trials done of planned, running, failed, elapsed time and an ETA.

A Tune ``ProgressReporter`` (Tune calls it after every trial state change and result), printing one line when the
counts change and otherwise at most once a minute. Tune's legacy reporting path drives it, which also keeps Tune's
configuration box and TensorBoard hint off the terminal (see ``core.quiet``).

Tune calls it a last time (``done``) after its final save of the experiment state and before it stops the trials.
After a Ctrl+C that is where the trials' actors are killed: Tune would otherwise wait up to 5 s for the trials'
running steps (each actor's ``stop`` queues behind its ``train``) before killing them itself, and the state that
``--resume`` reads is already saved.
"""
from __future__ import annotations

import time
from collections import Counter
from typing import Any

import ray
from ray.tune import ProgressReporter
from ray.tune.experiment import Trial

from platform.results.clock import clock
from platform.run.interrupts import stop_requested

HEARTBEAT_S = 60.0


def eta(elapsed: float, done: int, planned: int) -> float | None:
    """Seconds left at the pace so far (finished trials per second of wall time); None before the first finishes."""
    if done <= 0 or planned <= done:
        return None if done <= 0 else 0.0
    return elapsed / done * (planned - done)


def progress_line(counts: Counter, planned: int, elapsed: float) -> str:
    """'trials 3/15 done, 2 running, 0 failed · 4:12 elapsed · ETA 16:48' from trial-status counts."""
    done, failed = counts[Trial.TERMINATED], counts[Trial.ERROR]
    left = eta(elapsed, done + failed, planned)
    return (f"trials {done}/{planned} done, {counts[Trial.RUNNING]} running, {failed} failed"
            f" · {clock(elapsed)} elapsed · ETA {'…' if left is None else clock(left)}")


def kill_trial_actors(trials: list[Trial]) -> None:
    """Kill the Ray actors of the trials that have one (``ray.kill``)."""
    for trial in trials:
        if trial.temporary_state.ray_actor is not None:
            ray.kill(trial.temporary_state.ray_actor, no_restart=True)


class SweepProgress(ProgressReporter):
    """Prints ``progress_line`` whenever the trial counts change, and every ``HEARTBEAT_S`` seconds while running."""

    def __init__(self, planned: int) -> None:
        self.planned = planned
        self._start = time.time()
        self._last: tuple = ()
        self._printed = 0.0

    def setup(self, start_time: float | None = None, total_samples: int | None = None, metric: str | None = None,
              mode: str | None = None, **kwargs: Any) -> None:
        self._start = start_time or time.time()
        self.planned = max(self.planned, total_samples or 0)

    def _counts(self, trials: list[Trial]) -> Counter:
        return Counter(t.status for t in trials)

    def _changed(self, trials: list[Trial]) -> bool:
        return tuple(sorted(self._counts(trials).items())) != self._last

    def should_report(self, trials: list[Trial], done: bool = False) -> bool:
        return done or self._changed(trials) or time.time() - self._printed >= HEARTBEAT_S

    def report(self, trials: list[Trial], done: bool, *sys_info: str) -> None:
        """Print the progress line (at the end only if the counts changed); at the end of a stopped run, kill the
        trials' actors."""
        if done and stop_requested():
            kill_trial_actors(trials)
        if done and not self._changed(trials):
            return
        counts = self._counts(trials)
        self._last = tuple(sorted(counts.items()))
        self._printed = time.time()
        print(progress_line(counts, self.planned, self._printed - self._start), flush=True)

"""The Ray Tune side of an epoch-by-epoch mechanism game: report, checkpoint, resume, and inject faults.

Shared by every AMNIST mechanism: the game yields one outcome per epoch; this loop reports its metrics, writes a
checkpoint on checkpoint epochs, restores from Tune's checkpoint after a restart, and (for resilience tests) kills
its own worker once after a chosen epoch.
"""
from __future__ import annotations

import logging
import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol


class Outcome(Protocol):
    """What a game yields per epoch."""

    epoch: int
    checkpoint: bool
    metrics: dict[str, float]


Restore = Callable[[Any], int]  # loads a checkpoint into the game's models, returns the epochs already done


def report_game(game: Callable[[Restore | None], Iterator[Outcome]], load: Callable[[str, Any], int],
                write: Callable[[Any, Path], None], kill_worker_after_epoch: int = -1) -> None:
    """Run ``game`` inside a Tune trial: resume from Tune's checkpoint if any, report every epoch with the Ray node
    it ran on (``node_id``: where a multi-node sweep placed the trial)."""
    import ray
    from ray import tune  # only here: the game loops themselves run without Ray (e.g. benchmarks/bench_gpu.py)

    # Ray logs every persisted checkpoint at INFO; the driver already prints one line per epoch.
    logging.getLogger("ray.train._internal.storage").setLevel(logging.WARNING)
    checkpoint = tune.get_checkpoint()

    def restore(models: Any) -> int:
        with checkpoint.as_directory() as directory:
            return load(directory, models)

    node = {"node_id": ray.get_runtime_context().get_node_id()}  # the driver tags the trial's run with it
    for outcome in game(restore if checkpoint is not None else None):
        if outcome.checkpoint:
            with tempfile.TemporaryDirectory() as directory:
                write(outcome, Path(directory))
                tune.report(outcome.metrics | node, checkpoint=tune.Checkpoint.from_directory(directory))
        else:
            tune.report(outcome.metrics | node)
        if outcome.epoch == kill_worker_after_epoch and checkpoint is None:
            os.kill(os.getpid(), signal.SIGKILL)  # fault injection for resilience tests: dies once, then resumes


def timed_epochs(start: int, epochs: int, checkpoint_every: int, setup_s: float,
                 train: Callable[[], dict[str, float]],
                 evaluate: Callable[[bool], tuple[dict[str, float], Any]]) -> Iterator[tuple[int, bool, dict[str, float], Any]]:
    """Epochs ``start+1 .. epochs``: train, evaluate (attacking on checkpoint epochs), and add the shared bookkeeping.

    Every ``checkpoint_every``-th epoch and the last are checkpoint epochs. Yields (epoch, checkpoint, metrics, what
    ``evaluate`` returned beside its metrics, e.g. the released test split).
    """
    for epoch in range(start, epochs):
        checkpoint = (epoch + 1) % checkpoint_every == 0 or epoch + 1 == epochs
        t0 = time.perf_counter()
        metrics = train()
        t1 = time.perf_counter()
        eval_metrics, extra = evaluate(checkpoint)
        metrics |= eval_metrics | {
            "epoch": epoch + 1, "train/resumed_from_epoch": start, "time/train_s": t1 - t0,
            "time/eval_s": time.perf_counter() - t1, "time/setup_s": setup_s if epoch == start else 0.0,
        }
        yield epoch + 1, checkpoint, metrics, extra

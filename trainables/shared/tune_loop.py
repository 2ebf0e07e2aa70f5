"""The one Ray Tune loop every mechanism runs in: restore, pretrain, epochs, reports, checkpoints and figures.

:func:`epochs` drives a :class:`~trainables.shared.mechanism.Mechanism` epoch by epoch without Ray (benchmarks and tests use
it); :func:`run_trial` wraps it as a Tune function trainable that reports every epoch with the Ray node it ran on,
checkpoints on checkpoint epochs and resumes from Tune's checkpoint after a restart. For resilience tests only, the
environment variable ``PUTLAB_KILL_WORKER_AFTER_EPOCH`` makes a trial kill its own worker once after that epoch.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from trainables.shared.mechanism import EPOCH_FILE, STATE_FILE, Mechanism, read_checkpoint

KILL_ENV = "PUTLAB_KILL_WORKER_AFTER_EPOCH"  # test hook: the epoch after which a fresh trial's worker dies once


@dataclass
class Outcome:
    """One epoch of a run: its number (1-based), whether it checkpoints, and its metrics."""

    epoch: int
    checkpoint: bool
    metrics: dict[str, float]


def epochs(mechanism: Mechanism, restore: str | Path | None = None) -> Iterator[Outcome]:
    """Set up ``mechanism`` (pretrained, or restored from the checkpoint directory ``restore``, read at once) and play
    its epochs.

    Adds the shared bookkeeping to each epoch's metrics (``epoch``, ``train/resumed_from_epoch``, ``time/train_s``,
    ``time/eval_s``, ``time/setup_s``, ``time/pretrain_s``: pretraining's share of the setup, on the first epoch,
    with the mechanism's ``pretrain_metrics``); the mechanism's own attackers run on checkpoint epochs only.
    """
    t0 = time.perf_counter()
    restored = None if restore is None else (read_checkpoint(restore), restore)
    return _play(mechanism, restored, t0)


def _play(mechanism: Mechanism, restored: tuple[tuple[dict, int], str | Path] | None, t0: float) -> Iterator[Outcome]:
    """:func:`epochs` once the checkpoint (if any) is read: ``restored`` is ((state, epoch), its directory)."""
    mechanism.setup()
    pretrain = 0.0
    if restored is None:
        start, warm = 0, time.perf_counter()
        mechanism.pretrain()
        pretrain = time.perf_counter() - warm
    else:
        (state, start), directory = restored
        mechanism.load_checkpoint(state, start, directory)
    mechanism.epoch = start
    mechanism.begin(start)
    setup = time.perf_counter() - t0
    for epoch in range(start + 1, mechanism.epochs + 1):
        checkpoint = mechanism.checkpoint_epoch(epoch)
        t0 = time.perf_counter()
        metrics = mechanism.train_epoch()
        t1 = time.perf_counter()
        metrics |= mechanism.evaluate(checkpoint)
        mechanism.epoch = epoch
        metrics |= {"epoch": epoch, "train/resumed_from_epoch": start, "time/train_s": t1 - t0,
                    "time/eval_s": time.perf_counter() - t1, "time/setup_s": setup if epoch == start + 1 else 0.0,
                    "time/pretrain_s": pretrain if epoch == start + 1 else 0.0}
        if epoch == start + 1:
            metrics |= mechanism.pretrain_metrics
        yield Outcome(epoch, checkpoint and mechanism.checkpoints, metrics)


def write_checkpoint(mechanism: Mechanism, directory: Path) -> None:
    """The mechanism's state (with its epoch and config), its epoch alone as JSON, and its figures, into
    ``directory``."""
    torch.save({"models": mechanism.state(), "epoch": mechanism.epoch, "config": mechanism.cfg.as_dict()},
               directory / STATE_FILE)
    (directory / EPOCH_FILE).write_text(json.dumps({"epoch": mechanism.epoch}))
    mechanism.write_figures(directory, mechanism.epoch)


def kill_after_epoch() -> int:
    """The epoch after which a fresh trial kills its worker (``PUTLAB_KILL_WORKER_AFTER_EPOCH``; -1: never)."""
    value = os.environ.get(KILL_ENV, "").strip()
    try:
        return int(value) if value else -1
    except ValueError:
        raise ValueError(f"{KILL_ENV} must be an integer epoch (got {value!r})") from None


def run(mechanism_class: type[Mechanism], config: dict) -> None:
    """Run one trial of ``mechanism_class`` inside Ray Tune: resume from Tune's checkpoint if any, report every epoch
    with the Ray node it ran on (``node_id``: where a multi-node sweep placed the trial)."""
    import ray
    from ray import tune  # only here: the epochs themselves run without Ray (e.g. benchmarks/bench_gpu.py)

    # Ray logs every persisted checkpoint at INFO; the driver already prints one line per epoch.
    logging.getLogger("ray.train._internal.storage").setLevel(logging.WARNING)
    mechanism = mechanism_class.create(config)
    kill_after = kill_after_epoch()
    checkpoint = tune.get_checkpoint() if mechanism.checkpoints else None
    # the driver tags the trial's run with it (outside Ray, e.g. a test calling the trainable, there is no node)
    node = {"node_id": ray.get_runtime_context().get_node_id()} if ray.is_initialized() else {}
    if checkpoint is None:
        outcomes = epochs(mechanism)
    else:
        with checkpoint.as_directory() as directory:  # read at once: the directory may be temporary
            outcomes = epochs(mechanism, directory)
    for outcome in outcomes:
        if outcome.checkpoint:
            with tempfile.TemporaryDirectory() as directory:
                write_checkpoint(mechanism, Path(directory))
                tune.report(outcome.metrics | node, checkpoint=tune.Checkpoint.from_directory(directory))
        else:
            tune.report(outcome.metrics | node)
        if outcome.epoch == kill_after and checkpoint is None:
            os.kill(os.getpid(), signal.SIGKILL)  # fault injection for resilience tests: dies once, then resumes


def run_trial(mechanism_class: type[Mechanism]) -> Callable[[dict], None]:
    """The Tune function trainable of ``mechanism_class`` (named by its ``trainable_name``, which names its trials)."""

    def trainable(config: dict) -> None:
        run(mechanism_class, config)

    trainable.__name__ = mechanism_class.trainable_name
    trainable.__doc__ = f"Ray Tune function trainable of the {mechanism_class.name} mechanism."
    return trainable

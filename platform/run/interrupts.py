"""Truthful endings of a sweep: SIGINT/SIGTERM stop Tune gracefully and leave the sweep KILLED; a crash leaves it FAILED.

Tune's own Ctrl+C handler ends ``fit()`` normally and marks interrupted trials TERMINATED, so from the results alone
an interrupted sweep looks finished. :class:`SweepEnding` takes the signals instead, asks Tune for the same graceful
stop (its SIGUSR1 handler, which saves the experiment state with the unfinished trials still resumable) and
remembers that the sweep was interrupted, so the driver can record KILLED, print the resume command and exit 130.
"""
from __future__ import annotations

import os
import shlex
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any, Literal

from mlflow.tracking import MlflowClient

from core.commands import executable
from platform.results import tracking

EXIT_INTERRUPTED = 130
SIGNALS = (signal.SIGINT, signal.SIGTERM)
UNFINISHED = ("RUNNING", "SCHEDULED")
# what signal.signal accepts and returns: a handler function, SIG_DFL or SIG_IGN, or None (set outside Python)
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


def close_sweep(client: MlflowClient, exp_id: str, parent_id: str, status: str) -> None:
    """End the parent run with ``status`` and every child run (trials and baselines) still running with KILLED."""
    for run in [*tracking.child_runs(client, exp_id, parent_id), *tracking.baseline_runs(client, exp_id, parent_id)]:
        if run.info.status in UNFINISHED:
            client.set_terminated(run.info.run_id, "KILLED")
    client.set_terminated(parent_id, status)


class SweepEnding:
    """Context of a whole sweep command: signals become a graceful stop; once :meth:`attach` names the parent run,
    an interruption marks it KILLED and a crash marks it FAILED."""

    def __init__(self) -> None:
        self.client: MlflowClient | None = None
        self.exp_id = self.parent_id = ""
        self.resume: list[str] = []
        self.signal: int | None = None
        self._fitting = False
        self._previous: dict[int, _Handler] = {}

    def attach(self, client: MlflowClient, exp_id: str, parent_id: str, resume: list[str]) -> None:
        """The sweep's parent run now exists: endings are recorded on it; ``resume`` is the command that continues it."""
        self.client, self.exp_id, self.parent_id, self.resume = client, exp_id, parent_id, resume

    def __enter__(self) -> SweepEnding:
        os.environ["TUNE_DISABLE_SIGINT_HANDLER"] = "1"  # ours forwards to Tune's SIGUSR1 stop instead
        self._previous = {s: signal.signal(s, self._on_signal) for s in SIGNALS}
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        if kind is None:
            return False
        if issubclass(kind, KeyboardInterrupt):
            self.signal = self.signal or signal.SIGINT
            raise SystemExit(self.interrupted()) from None
        if self.client is not None and not issubclass(kind, SystemExit):
            close_sweep(self.client, self.exp_id, self.parent_id, "FAILED")
            print(f"sweep failed; its MLflow run is marked FAILED. To retry: {shlex.join(self.resume)}", file=sys.stderr)
        return False

    @contextmanager
    def fitting(self) -> Iterator[None]:
        """While Tune runs: a signal asks Tune to stop gracefully (Tune installs its SIGUSR1 handler inside fit)."""
        previous = signal.getsignal(signal.SIGUSR1)
        for s in SIGNALS:  # ray.init puts its own (fatal) SIGTERM handler in place: ours goes back on top
            signal.signal(s, self._on_signal)
        self._fitting = True
        try:
            yield
        finally:
            self._fitting = False
            signal.signal(signal.SIGUSR1, previous)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        first = self.signal is None
        self.signal = self.signal or signum
        tune_stop = signal.getsignal(signal.SIGUSR1)
        if first and self._fitting and callable(tune_stop):
            print(f"{signal.Signals(signum).name}: stopping the sweep, saving its state (again to stop at once)",
                  file=sys.stderr, flush=True)
            tune_stop(signal.SIGUSR1, frame)
        else:
            raise KeyboardInterrupt

    def interrupted(self, reason: str | None = None) -> int:
        """Record an unfinished sweep (parent and unfinished children KILLED), print the resume command; exit code."""
        reason = reason or f"interrupted ({signal.Signals(self.signal or signal.SIGINT).name})"
        if self.client is None:
            print(f"{reason} before the sweep started; nothing was recorded", file=sys.stderr, flush=True)
            return EXIT_INTERRUPTED
        close_sweep(self.client, self.exp_id, self.parent_id, "KILLED")
        print(f"sweep {reason}; continue with:  {shlex.join(self.resume)}", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED


def resume_command(preset: str, sweep: str, options: dict[str, str | None]) -> list[str]:
    """The exact command that continues ``sweep``: its preset, name and every option that locates its state."""
    command = [executable("python"), "-m", "platform.sweep", preset, "--resume", sweep]
    for flag, value in options.items():
        if value is not None:
            command += [flag, str(value)]
    return command

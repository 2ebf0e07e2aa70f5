"""Truthful endings of a sweep: SIGINT/SIGTERM stop it within seconds and leave it KILLED; a crash leaves it FAILED.

Tune's own Ctrl+C handler ends ``fit()`` normally and marks interrupted trials TERMINATED, so from the results alone
an interrupted sweep looks finished. :class:`SweepEnding` takes the signals instead. While Tune runs, the first one
asks Tune to stop (its SIGUSR1 handler: the loop ends after its current step and saves the experiment state with the
unfinished trials still resumable) and raises :func:`stop_requested`, on which the sweep's waits end at once: the
trials' actors are killed once the state is saved (``platform.run.progress``), the farm's attacks in flight are
cancelled (``platform.run.farm``) and so are raw-data reference points under way. Anywhere else, and on a second signal, it
raises KeyboardInterrupt where the driver is. Either way the driver records KILLED, prints the resume command and
exits 130; ``--resume`` runs what was cancelled.
"""
from __future__ import annotations

import math
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any, Literal

from core.commands import executable
from platform.results import tracking
from platform.results.drivers import end_sweep
from platform.results.store import Store, defer_interrupt

EXIT_INTERRUPTED = 130
SIGNALS = (signal.SIGINT, signal.SIGTERM)
# what signal.signal accepts and returns: a handler function, SIG_DFL or SIG_IGN, or None (set outside Python)
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None
_STOP = threading.Event()  # signals are the process's: so is the request to stop


def stop_requested() -> bool:
    """Whether SIGINT or SIGTERM asked this process's sweep to stop: whatever waits on Ray work cancels it and returns."""
    return _STOP.is_set()


class SweepEnding:
    """Context of a whole sweep command: signals become a graceful stop; once :meth:`attach` names the parent run,
    an interruption marks it KILLED and a crash marks it FAILED."""

    def __init__(self) -> None:
        self.store: Store | None = None
        self.exp_id = self.parent_id = ""
        self.resume: list[str] = []
        self.signal: int | None = None
        self._active_before, self._attached_at = 0.0, time.monotonic()
        self._fitting = False
        self._previous: dict[int, _Handler] = {}

    def attach(self, store: Store, exp_id: str, parent_id: str, resume: list[str],
               active_before: float = 0.0) -> None:
        """The sweep's parent run now exists: endings are recorded on it; ``resume`` is the command that continues it,
        ``active_before`` the minutes earlier commands worked on it (its clock starts now). Unrecorded earlier minutes
        (NaN: a command killed before it could end the run) count as none, said once, so later endings stay numbers."""
        self.store, self.exp_id, self.parent_id, self.resume = store, exp_id, parent_id, resume
        if not math.isfinite(active_before):
            print("note: this sweep's earlier minutes of work were never recorded (a command was killed before it "
                  f"ended the run); {tracking.ACTIVE_MINUTES} counts from now", file=sys.stderr, flush=True)
            active_before = 0.0
        self._active_before, self._attached_at = active_before, time.monotonic()
        self._take_signals()  # ray.init put its own (fatal) SIGTERM handler in place

    def close(self, status: str) -> None:
        """End the sweep with ``status`` (``end_sweep``), its minutes of work so far logged first: the earlier
        commands' and this one's, the pauses between them left out."""
        assert self.store is not None, "close() needs attach()"
        minutes = self._active_before + (time.monotonic() - self._attached_at) / 60
        self.store.log_metric(self.parent_id, tracking.ACTIVE_MINUTES, minutes)
        end_sweep(self.store, self.exp_id, self.parent_id, status)

    def __enter__(self) -> SweepEnding:
        os.environ["TUNE_DISABLE_SIGINT_HANDLER"] = "1"  # ours forwards to Tune's SIGUSR1 stop instead
        _STOP.clear()
        self._previous = {s: signal.getsignal(s) for s in SIGNALS}
        self._take_signals()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        _STOP.clear()  # what waited on Ray work has ended
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        if kind is None:
            return False
        if issubclass(kind, KeyboardInterrupt):
            self.signal = self.signal or signal.SIGINT
            raise SystemExit(self.interrupted()) from None
        if self.store is not None and not issubclass(kind, SystemExit):
            self.close("FAILED")
            print(f"sweep failed; its MLflow run is marked FAILED. To retry: {shlex.join(self.resume)}", file=sys.stderr)
        return False

    @contextmanager
    def fitting(self) -> Iterator[None]:
        """While Tune runs: a signal asks Tune to stop gracefully (Tune installs its SIGUSR1 handler inside fit)."""
        previous = signal.getsignal(signal.SIGUSR1)
        self._take_signals()
        self._fitting = True
        try:
            yield
        finally:
            self._fitting = False
            signal.signal(signal.SIGUSR1, previous)

    def _take_signals(self) -> None:
        for s in SIGNALS:
            signal.signal(s, self._on_signal)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        """The first signal while Tune runs: Tune stops after its step and saves its state, and every wait on Ray work
        cancels it; otherwise (outside Tune, or a second signal) a KeyboardInterrupt where the driver is, or, for a
        first signal during a store call, as that call returns (``platform.results.store.defer_interrupt``)."""
        first = self.signal is None
        self.signal = self.signal or signum
        _STOP.set()
        tune_stop = signal.getsignal(signal.SIGUSR1)
        if first and self._fitting and callable(tune_stop):
            print(f"{signal.Signals(signum).name}: stopping the sweep: saving its state, cancelling the work in flight "
                  "(again to stop at once)", file=sys.stderr, flush=True)
            tune_stop(signal.SIGUSR1, frame)
        elif not (first and defer_interrupt()):
            raise KeyboardInterrupt

    def interrupted(self, reason: str | None = None) -> int:
        """Record an unfinished sweep (parent and unfinished children KILLED), print the resume command; exit code."""
        reason = reason or f"interrupted ({signal.Signals(self.signal or signal.SIGINT).name})"
        if self.store is None:
            print(f"{reason} before the sweep started; nothing was recorded", file=sys.stderr, flush=True)
            return EXIT_INTERRUPTED
        self.close("KILLED")
        print(f"sweep {reason}; continue with:  {shlex.join(self.resume)}", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED


def resume_command(preset: str, sweep: str, options: dict[str, str | None]) -> list[str]:
    """The exact command that continues ``sweep``: its preset, name and every option that locates its state."""
    command = [executable("python"), "-m", "platform.sweep", preset, "--resume", sweep]
    for flag, value in options.items():
        if value is not None:
            command += [flag, str(value)]
    return command

"""What finished sweeps took on this machine, kept outside any one MLflow store, so that a sweep is priced from this
machine's own runs whichever store it writes to: one JSON line per finished sweep in ``~/.cache/putlab/sweep_costs.jsonl``
(or the file ``$PUTLAB_COST_LEDGER`` names).

A line holds what the sweep's pace depends on (``like``: its parent run's params of preset, profile, farm, learning
curves, comparison grids, config and machine, as strings), its name, its finished trials, its minutes of work and the
machine's speed when it started.
"""
from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

LEDGER_ENV = "PUTLAB_COST_LEDGER"


@dataclass(frozen=True)
class Measured:
    """A finished sweep another can be priced from: its name, trials (its own and its baselines' that it ran), wall
    seconds of work once its parent run was open, where it was found ("this store" or "this machine"), the seconds
    its last command took to get there (imports, data checks, Ray's start: the same for any number of trials), and
    the machine's speed then (``probe_s``: ``platform.run.speed_probe``; 0 where none was kept)."""

    name: str
    trials: int
    wall_s: float
    where: str = "this store"
    startup_s: float = 0.0
    probe_s: float = 0.0


def ledger_path() -> Path:
    """``$PUTLAB_COST_LEDGER``, else ``~/.cache/putlab/sweep_costs.jsonl``."""
    return Path(os.environ.get(LEDGER_ENV) or "~/.cache/putlab/sweep_costs.jsonl").expanduser()


def record(like: Mapping[str, str], measured: Measured) -> None:
    """Append a finished sweep to the ledger; a ledger that cannot be written costs the next estimate, not this sweep
    (one line on stderr says so)."""
    line = {"like": dict(like), "date": time.strftime("%Y-%m-%d %H:%M:%S")} | asdict(measured)
    path = ledger_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as ledger:
            ledger.write(json.dumps(line, sort_keys=True) + "\n")
    except OSError as exc:
        print(f"warning: the sweep's cost is not kept for the next estimate ({path}: {exc.strerror or exc})",
              file=sys.stderr, flush=True)


def newest(like: Mapping[str, str]) -> Measured | None:
    """The newest finished sweep in the ledger whose pace depends on exactly ``like``; None without one (or without a
    ledger). Lines that are not a ledger's (hand-edited, cut short) are skipped."""
    try:
        lines = ledger_path().read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for text in reversed(lines):
        entry = parsed(text)
        if entry is not None and entry[0] == dict(like):
            return entry[1]
    return None


def parsed(text: str) -> tuple[dict[str, str], Measured] | None:
    """A ledger line as (like, the sweep on this machine), None when it is not one."""
    try:
        line = json.loads(text)
        measured = Measured(str(line["name"]), int(line["trials"]), float(line["wall_s"]), "this machine",
                            float(line.get("startup_s", 0.0)), float(line.get("probe_s", 0.0)))
        like = line["like"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(like, dict) or measured.trials < 1 or not measured.wall_s > 0:
        return None
    return like, measured

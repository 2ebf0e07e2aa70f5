"""What the driver ships to Ray workers must import there. A worker starts with the standard ``platform`` module
already loaded and finds the repository on sys.path only afterwards, so nothing it unpickles may live in (or import)
the driver's ``platform`` package: a sweep's tasks would fail with "The remote function failed to import on the
worker". The tests' sweeps put the repository on PYTHONPATH, which hides this; here a worker's start is mimicked."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import cloudpickle
from conftest import REPO

from attacks.audits.learning_curve import run_lane
from attacks.farm.checkpoint import run_farm
from platform.run.learning_curves import lanes
from search_spaces import presets

# a Ray worker's start: the standard platform module first, the repository appended later; prints what fails to load
WORKER = """
import pickle, platform, sys
sys.path.append(sys.argv[1])
for name, payload in pickle.loads(sys.stdin.buffer.read()).items():
    try:
        pickle.loads(payload)
    except Exception as exc:
        print(name, type(exc).__name__, exc)
"""


def shipped() -> dict[str, object]:
    """Every callable the driver submits as a Ray task or Tune trainable, by a readable name."""
    tasks: dict[str, object] = {"run_lane": run_lane, "run_farm": run_farm}
    for name, preset in presets().items():
        entries = {"trainable": preset.trainable, "raw_references": preset.raw_references,
                   "checkpoint_inputs": preset.checkpoint_inputs}
        tasks |= {f"{name}.{entry}": fn for entry, fn in entries.items() if fn is not None}
    return tasks


def failing_in_a_worker(objects: dict[str, object], tmp_path: Path) -> list[str]:
    """The names of ``objects`` that a freshly started worker cannot unpickle (run outside the repository, without
    PYTHONPATH, as Ray starts its workers for ``python -m platform.sweep`` in the repository root)."""
    payload = pickle.dumps({name: cloudpickle.dumps(obj) for name, obj in objects.items()})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", WORKER, str(REPO)], input=payload, capture_output=True, cwd=tmp_path,
                         env=env, timeout=300, check=True)
    return [line.split()[0] for line in out.stdout.decode().splitlines() if line.strip()]


def test_every_task_the_driver_ships_loads_in_a_worker_and_a_driver_function_does_not(tmp_path: Path) -> None:
    tasks = shipped()
    assert {"run_lane", "run_farm", "amnist.trainable", "amnist.checkpoint_inputs"} <= set(tasks)
    assert failing_in_a_worker(tasks | {"control": lanes}, tmp_path) == ["control"]

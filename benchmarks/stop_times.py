"""How long Ctrl+C (or SIGTERM) takes to stop a sweep at four points: the game, the farm wait, the comparison grid
and publishing.

Runs ``python -m platform.sweep amnist`` at a profile (default smoke) on a store of its own, sends SIGINT to the
sweep's process group (as a terminal's Ctrl+C does) or, with ``--signal TERM``, SIGTERM to the driver alone (as
``kill PID``, ``timeout`` or a scheduler does) as soon as its output says it reached the point, and times the exit;
each later point is reached by the ``--resume`` of the sweep stopped before, and a last ``--resume`` finishes it.
Prints one line per point: seconds from the signal to the exit, the exit code, the runs the store still calls
RUNNING, and the machine's load. Not a test: timings vary by machine and load (tests/test_interrupts.py holds the
bound).

    .venv/bin/python benchmarks/stop_times.py [--profile smoke] [--signal INT|TERM] [--workdir DIR]
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
POINTS = {  # point: the output line that says the sweep is there
    "game": r"^trials 1/\d+ done, 1 running",  # a trial trains, the first one's checkpoint is with the farm
    "farm wait": r"^attack farm: waiting for \d+ checkpoint attack",  # Tune is done, attacks in flight
    "comparison grid": r"^trials 0/\d+ done, 1 running",  # the noise preset's trials after the sweep's own
    "report": r"publishing its summary, figures and report",
}


def sweep(workdir: Path, profile: str, *extra: str) -> subprocess.Popen:
    """The sweep (or its resume) in a process group of its own, its output merged into one pipe."""
    cmd = [sys.executable, "-m", "platform.sweep", "amnist", "--profile", profile, *extra,
           "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--storage", str(workdir / "runs")]
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def stop_at(proc: subprocess.Popen, line: str, sig: signal.Signals) -> tuple[float | None, int]:
    """Send ``sig`` when the output matches ``line`` (SIGINT to the group, SIGTERM to the driver); (seconds from then to
    the exit, None when it never got there; the exit code)."""
    assert proc.stdout is not None
    sent = None
    for out in proc.stdout:
        if sent is None and re.search(line, out):
            sent = time.monotonic()
            (os.killpg if sig == signal.SIGINT else os.kill)(proc.pid, sig)
    code = proc.wait()
    return None if sent is None else time.monotonic() - sent, code


def running(workdir: Path) -> int:
    """How many runs of the store say RUNNING."""
    with sqlite3.connect(workdir / "mlflow.db") as db:
        return db.execute("SELECT count(*) FROM runs WHERE status = 'RUNNING'").fetchone()[0]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--profile", default="smoke", help="the amnist profile (default smoke)")
    p.add_argument("--signal", choices=("INT", "TERM"), default="INT",
                   help="INT: to the process group, as Ctrl+C (default); TERM: to the driver, as kill PID")
    p.add_argument("--workdir", type=Path, help="where the store and the Tune storage go (default: a new temp folder)")
    args = p.parse_args()
    sig = signal.SIGINT if args.signal == "INT" else signal.SIGTERM
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="stop-times-"))
    print(f"store and storage: {workdir}")
    for i, (point, line) in enumerate(POINTS.items()):
        took, code = stop_at(sweep(workdir, args.profile, *(["--resume"] if i else [])), line, sig)
        load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
        shown = "never reached" if took is None else f"{took:.2f} s"
        print(f"{point:>14}: {shown}, exit {code}, {running(workdir)} run(s) RUNNING  (load {load})", flush=True)
    finished = sweep(workdir, args.profile, "--resume")
    finished.communicate()
    print(f"the last --resume exited {finished.returncode}")
    return 0 if finished.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Where a sweep's compute goes, and the default sweep's cost before and after a change, side by side.

``show`` reads a finished sweep from its MLflow store: the worker seconds each kind of work logged (the game's training
and evaluation, the in-trial attacker, the data user's classifiers, each farm attacker), their shares, and worker seconds
per second of the sweep's wall time (how many cores did useful work on average).

``run`` runs a sweep command in each given checkout, one after the other on this machine (each with its own ``.venv``,
a fresh MLflow store, fresh Tune storage and an empty attacker cache), samples the machine's CPU use from /proc/stat
while it runs, and prints for each: wall time, CPU seconds of the whole machine (driver, Ray, workers), cores busy, the
``show`` table; then each run's wall time as a ratio of the first's. Run it on an otherwise idle machine and say so.

    PYTHONPATH=. .venv/bin/python benchmarks/sweep_cost.py show --tracking-uri sqlite:///mlflow.db putlab-amnist
    PYTHONPATH=. .venv/bin/python benchmarks/sweep_cost.py run /tmp/putlab-before . --args "amnist"
"""
from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

from platform.results import tracking
from platform.results.store import Store

CACHE = Path(tempfile.gettempdir()) / "putlab-deep-raw"  # the raw-data attackers' cache (attacks/attackers/deep.py)


def seconds_by_kind(client: Store, exp_id: str, parent_id: str) -> dict[str, float]:
    """Worker seconds per ``time/..._s`` metric, summed over the sweep's trials, its baselines' trials and every step."""
    totals: dict[str, float] = defaultdict(float)
    runs = [*client.child_runs(exp_id, parent_id), *client.baseline_runs(exp_id, parent_id)]
    for run in runs:
        for key in run.data.metrics:
            if key.startswith("time/") and key.endswith("_s"):
                totals[key] += sum(m.value for m in client.history(run.info.run_id, key))
    return dict(totals)


def phases(t: dict[str, float]) -> dict[str, float]:
    """The worker seconds as phases: the game (set-up, training, evaluation), the in-trial attacker, the data user's
    classifiers, and each farm attacker (``time/attack_s`` and ``time/data_user_s`` lie inside ``time/eval_s``)."""
    attacker, user = t.get("time/attack_s", 0.0), t.get("time/data_user_s", 0.0)
    game = t.get("time/setup_s", 0.0) + t.get("time/train_s", 0.0) + t.get("time/eval_s", 0.0) - attacker - user
    farm = {f"farm {k[10:-2]}": v for k, v in sorted(t.items()) if k.startswith("time/farm/")}
    return {"game (set-up, training, evaluation)": game, "in-trial attacker": attacker, "data user's classifiers": user,
            **farm}


def table(client: Store, sweep: str) -> tuple[str, float]:
    """The phase table of one sweep, and its worker seconds in all."""
    exp_id, parent_id = client.find_sweep(sweep)
    parent = client.run(parent_id)
    wall = ((parent.info.end_time or parent.info.start_time) - parent.info.start_time) / 1000
    split = phases(seconds_by_kind(client, exp_id, parent_id))
    total = sum(split.values())
    farm = sum(v for k, v in split.items() if k.startswith("farm "))
    attacks = farm + split["in-trial attacker"]
    lines = [f"sweep {parent.info.run_name}: {total:.0f} worker-seconds over {wall:.0f} s of the parent run's wall time "
             f"= {total / max(wall, 1e-9):.2f} cores doing logged work"]
    lines += [f"  {name:<38}{value:8.0f} s  {value / total:6.1%}" for name, value in split.items()]
    lines += [f"  {'the farm':<38}{farm:8.0f} s  {farm / total:6.1%}",
              f"  {'all attackers (farm + in-trial)':<38}{attacks:8.0f} s  {attacks / total:6.1%}"]
    return "\n".join(lines), total


class CpuSampler(threading.Thread):
    """Busy CPU seconds of the whole machine (all cores, from /proc/stat) between start() and stop()."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.busy = 0.0
        self._done = threading.Event()

    @staticmethod
    def _read() -> tuple[float, float]:
        fields = [float(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
        ticks = 100.0  # USER_HZ
        return sum(fields) / ticks, (fields[3] + fields[4]) / ticks  # (all, idle + iowait)

    def run(self) -> None:
        total0, idle0 = self._read()
        while not self._done.wait(1.0):
            pass
        total1, idle1 = self._read()
        self.busy = (total1 - total0) - (idle1 - idle0)

    def stop(self) -> float:
        self._done.set()
        self.join()
        return self.busy


def run_one(checkout: Path, command: list[str]) -> tuple[float, float, str]:
    """Run ``command`` (a platform.sweep argument list) in ``checkout`` with a fresh store; (wall, machine CPU s, table)."""
    shutil.rmtree(CACHE, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        uri = f"sqlite:///{tmp}/mlflow.db"
        argv = [str(checkout / ".venv" / "bin" / "python"), "-m", "platform.sweep", *command, "--tracking-uri", uri,
                "--storage", f"{tmp}/runs"]
        sampler = CpuSampler()
        sampler.start()
        t0 = time.perf_counter()
        done = subprocess.run(argv, cwd=checkout, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        busy = sampler.stop()
        if done.returncode != 0:
            raise SystemExit(f"{checkout}: the sweep exited {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
        client = Store(uri)
        (parent,) = client.runs([e.experiment_id for e in client.experiments()],
                                       where=f"tags.`{tracking.TAG_ROLE}` = 'sweep'")
        text, _ = table(client, parent.info.run_id)
    return wall, busy, text


def show(args: argparse.Namespace) -> None:
    print(table(Store(args.tracking_uri), args.sweep)[0])


def run(args: argparse.Namespace) -> None:
    command = shlex.split(args.args)
    walls = []
    for checkout in args.checkouts:
        wall, busy, text = run_one(Path(checkout).resolve(), command)
        walls.append(wall)
        print(f"== {checkout}: {' '.join(command)}: {wall:.0f} s wall, {busy:.0f} CPU-s of the machine "
              f"({busy / wall:.2f} cores busy)\n{text}", flush=True)
    for checkout, wall in zip(args.checkouts, walls, strict=True):
        print(f"{checkout}: wall {wall:.0f} s = {wall / walls[0]:.2f} × the first")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("show", help="the phase table of a finished sweep")
    s.add_argument("--tracking-uri", default="sqlite:///mlflow.db")
    s.add_argument("sweep", nargs="?", default="putlab-amnist", help="sweep run id, sweep name or experiment name")
    r = sub.add_parser("run", help="run the sweep in each checkout, one after the other, and compare")
    r.add_argument("checkouts", nargs="+", help="checkouts, each with its own .venv (scripts/install.sh)")
    r.add_argument("--args", default="amnist", help="the platform.sweep arguments (default: amnist, the README's)")
    args = p.parse_args()
    show(args) if args.mode == "show" else run(args)


if __name__ == "__main__":
    main()

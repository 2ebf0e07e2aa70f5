"""Where a quick-profile trial's time goes: training, attacking, and the platform's overhead.

Runs one quick-profile configuration twice: bare (the same game loop in this process, no Ray, no
MLflow, no checkpoints) and as a one-trial sweep through ``platform.sweep`` (Ray Tune, MLflow
logging, checkpoints). Prints the split and the Tune/bare ratio. Not a test: timings vary by machine.

    .venv/bin/python benchmarks/bench_trial.py [--set alpha=2 --set lam=1 ...]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from platform import sweep  # noqa: E402
from platform.plan.spec import resolve  # noqa: E402
from platform.results.store import Store  # noqa: E402
from trainables.releaser.mechanism import Releaser  # noqa: E402
from trainables.shared.tune_loop import epochs  # noqa: E402


def bare(config: dict) -> tuple[float, dict[str, float]]:
    """Wall time of the game loop alone, and the summed time/* metrics it reported."""
    mechanism = Releaser.create(config)
    totals: dict[str, float] = {}
    t0 = time.perf_counter()
    for outcome in epochs(mechanism):
        for k, v in outcome.metrics.items():
            if k.startswith("time/"):
                totals[k] = totals.get(k, 0.0) + v
    return time.perf_counter() - t0, totals


def under_tune(overrides: list[str], workdir: Path) -> tuple[float, float, dict[str, float]]:
    """(sweep wall, trial wall from its MLflow child run, summed time/* metrics) of a one-trial sweep."""
    uri = f"sqlite:///{workdir / 'mlflow.db'}"
    args = ["amnist", "--profile", "quick", "--tracking-uri", uri, "--storage", str(workdir / "runs")]
    for item in overrides:
        args += ["--set", item]
    t0 = time.perf_counter()
    code = sweep.main(args)
    wall = time.perf_counter() - t0
    if code != 0:
        raise SystemExit(f"sweep failed with exit code {code}")
    client = Store(uri)
    exp = client.experiment_named("putlab-amnist")
    (child,) = client.runs([exp.experiment_id], where="tags.`putlab.role` = 'trial'")
    trial_wall = (child.info.end_time - child.info.start_time) / 1000
    totals = {k: sum(m.value for m in client.history(child.info.run_id, k))
              for k in child.data.metrics if k.startswith("time/")}
    return wall, trial_wall, totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    overrides = [*args.overrides] or ["alpha=2", "lam=1", "adv_steps=1"]
    spec = resolve("amnist", "quick", overrides)
    (point,) = spec.grid_points() if len(spec.grid_points()) == 1 else (None,)
    if point is None:
        raise SystemExit("give one value per grid axis (alpha, lam, adv_steps) so the sweep has one trial")

    bare_wall, bare_parts = bare(point)
    with tempfile.TemporaryDirectory() as tmp:
        sweep_wall, trial_wall, tune_parts = under_tune(overrides, Path(tmp))

    inside = sum(tune_parts.get(k, 0.0) for k in ("time/setup_s", "time/train_s", "time/eval_s"))
    print("\n== one quick-profile trial:", " ".join(overrides))
    print(f"bare loop (one process)        {bare_wall:7.1f} s   setup {bare_parts.get('time/setup_s', 0):.1f}  "
          f"train {bare_parts.get('time/train_s', 0):.1f}  eval+attack {bare_parts.get('time/eval_s', 0):.1f} "
          f"(attack {bare_parts.get('time/attack_s', 0):.1f})")
    print(f"trial under Tune (start->end)  {trial_wall:7.1f} s   setup {tune_parts.get('time/setup_s', 0):.1f}  "
          f"train {tune_parts.get('time/train_s', 0):.1f}  eval+attack {tune_parts.get('time/eval_s', 0):.1f} "
          f"(attack {tune_parts.get('time/attack_s', 0):.1f})")
    print(f"platform overhead in the trial {trial_wall - inside:7.1f} s   (Ray scheduling, checkpoints, figures, MLflow logging)")
    print(f"whole sweep command            {sweep_wall:7.1f} s   (Ray start-up, data check, baselines, front)")
    print(f"ratio trial under Tune / bare  {trial_wall / bare_wall:7.2f}")


if __name__ == "__main__":
    main()

"""Were a sweep's epoch-capped attackers lower bounds by much? Each one retrained with a higher cap, beside its number.

The farm tags a trial ``putlab.capped_attackers`` when a learned attacker's chosen member was still improving when its
epoch cap (``attack_epochs``) stopped it: its accuracy is then a lower bound. This retrains each such attacker on the
trial's last checkpoint with the same records, search and patience but ``--factor`` times the cap, and prints the
logged number beside the new one (with their 95 % intervals, epochs trained and best epoch), so a report can say how
much the cap cost.

    PYTHONPATH=. .venv/bin/python benchmarks/epoch_cap.py SWEEP --tracking-uri sqlite:///mlflow.db [--factor 3]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from attacks.farm.checkpoint import attack_inputs
from platform.results.store import Run, Store
from platform.run import storage as tune_storage
from platform.run.catch_up import checkpoints_of, trial_config
from platform.run.farm import TAG_CAPPED
from search_spaces import presets


@dataclass(frozen=True)
class Reading:
    """One attacker's accuracy with its interval, the epochs it trained and its best epoch."""

    accuracy: float
    ci_low: float
    ci_high: float
    epochs: int
    best_epoch: int
    capped: bool
    records: int

    @classmethod
    def of(cls, metrics: dict[str, float], attacker: str) -> Reading:
        """Read ``attack/<attacker>/…`` from a run's (or a farm report's) metrics."""
        m = {key.removeprefix(f"attack/{attacker}/"): value for key, value in metrics.items()
             if key.startswith(f"attack/{attacker}/")}
        return cls(m["accuracy"], m.get("accuracy/ci_low", float("nan")), m.get("accuracy/ci_high", float("nan")),
                   int(m.get("epochs", 0)), int(m.get("best_epoch", 0)), m.get("capped", 0.0) == 1.0,
                   int(m.get("train_records", 0)))

    def cell(self) -> str:
        """'0.718 [0.689, 0.746], 48 epochs, best 41 (capped), 28,476 records'."""
        return (f"{self.accuracy:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}], {self.epochs} epochs, best "
                f"{self.best_epoch}{' (capped)' if self.capped else ''}, {self.records:,} records")


def retrain(run: Run, preset_name: str, attacker: str, epochs: int) -> tuple[Reading, float]:
    """``attacker`` retrained on ``run``'s last checkpoint with an epoch cap of ``epochs``; its reading and seconds."""
    _, location = checkpoints_of(run)[-1]
    config = trial_config(location) | {"attack_epochs": epochs}
    load = presets()[preset_name].checkpoint_inputs
    if load is None:
        raise SystemExit(f"preset {preset_name!r} has no checkpoints for the attack farm")
    with tempfile.TemporaryDirectory() as tmp:
        tune_storage.download(location, Path(tmp))
        inputs = load(config, tmp)
        t0 = time.perf_counter()
        metrics = attack_inputs(inputs, [attacker], figures=False).metrics
    return Reading.of(metrics, attacker), time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep", help="sweep run id, sweep name, or experiment name (its newest sweep)")
    p.add_argument("--tracking-uri", default="sqlite:///mlflow.db")
    p.add_argument("--factor", type=float, default=3.0, help="the new cap as a multiple of the trial's (default 3)")
    p.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    args = p.parse_args()
    if args.factor <= 1:
        p.error("--factor must be above 1")
    torch.set_num_threads(args.threads)
    client = Store(args.tracking_uri)
    exp_id, parent_id = client.find_sweep(args.sweep)
    preset_name = client.run(parent_id).data.params["preset"]
    capped = [(run, name) for run in client.child_runs(exp_id, parent_id) if checkpoints_of(run)
              for name in run.data.tags.get(TAG_CAPPED, "").split(",") if name]
    print(f"{len(capped)} capped attacker(s) in {preset_name}'s sweep; each retrained at {args.factor:g}× its cap "
          "(minutes each)", flush=True)
    print("| trial | attacker | logged | retrained | retrained − logged | seconds |")
    print("|---|---|---|---|---|---|")
    for run, name in capped:
        before = Reading.of(run.data.metrics, name)
        cap = int(run.data.params.get("attack_epochs", before.epochs))
        after, seconds = retrain(run, preset_name, name, round(cap * args.factor))
        print(f"| {run.info.run_name} | {name} | {before.cell()} | {after.cell()} | "
              f"{after.accuracy - before.accuracy:+.3f} | {seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()

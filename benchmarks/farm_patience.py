"""Does the farm's deep attacker stop short? It is refitted at other stopping budgets on a sweep's stored checkpoints.

For every trial of a sweep (its mechanism's and its comparison grids'), the released splits are rebuilt from the
trial's last checkpoint exactly as the farm builds them, and the farm's own tuned deep family is fitted again with each
``--budgets`` entry ``patience/cap`` (epochs without a validation gain before it stops / the epoch cap), everything
else as the trial's config says. Each row prints the logged ``attack/deep/accuracy`` and every refit's test accuracy,
validation accuracy, epochs run and best epoch; the last lines give, per kind of trial, the mean refit minus the
first budget's. A budget that stops short shows as later budgets reading more on the same release; one fit varies
with its seed by about two points, so read the means.

    PYTHONPATH=. .venv/bin/python benchmarks/farm_patience.py --tracking-uri sqlite:///mlflow.db putlab-amnist
    PYTHONPATH=. .venv/bin/python benchmarks/farm_patience.py --budgets 4/24,8/48,12/100 --trial "lam=100" SWEEP
"""
from __future__ import annotations

import argparse
import time
from collections import defaultdict

import torch

from attacks.attackers.deep import DeepAttacker
from attacks.base import AttackInput
from core.config import AttackBudget
from platform.results import tracking
from platform.results.store import Store
from platform.run.catch_up import checkpoints_of, trial_config
from search_spaces import presets


def budgets_list(text: str) -> list[tuple[int, int]]:
    """``--budgets``: comma-separated ``patience/cap`` pairs of integers >= 1."""
    pairs = []
    for item in text.split(","):
        parts = item.strip().split("/")
        if len(parts) != 2 or not all(p.isdigit() and int(p) >= 1 for p in parts):
            raise argparse.ArgumentTypeError(f"expected comma-separated patience/cap pairs of integers >= 1, got {text!r}")
        pairs.append((int(parts[0]), int(parts[1])))
    return pairs


def refit(data: AttackInput, budget: AttackBudget, patience: int, cap: int) -> dict[str, float]:
    """The farm's deep family fitted afresh on ``data`` with this stopping budget (no stored fit is read)."""
    changed = budget.model_copy(update={"attack_patience": patience, "attack_epochs": cap})
    return DeepAttacker(changed, cache_dir=None).run(data).metrics


def parse_args() -> argparse.Namespace:
    """The command line (a usage error exits 2)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tracking-uri", default="sqlite:///mlflow.db")
    p.add_argument("sweep", nargs="?", default="putlab-amnist",
                   help="sweep run id, sweep name, or experiment name (its newest sweep); default putlab-amnist")
    p.add_argument("--budgets", type=budgets_list, default=budgets_list("4/24,8/48"),
                   help="comma-separated patience/cap pairs (default 4/24,8/48)")
    p.add_argument("--trial", help="only trials whose run name contains this text")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = p.parse_args()
    if args.threads < 1:
        p.error("--threads must be >= 1")
    return args


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    client = Store(args.tracking_uri)
    exp_id, parent_id = client.find_sweep(args.sweep)
    preset_name = client.run(parent_id).data.params["preset"]
    runs = [*client.child_runs(exp_id, parent_id), *client.baseline_runs(exp_id, parent_id)]
    runs = [r for r in runs if args.trial is None or args.trial in r.info.run_name]
    labels = [f"{p}/{c}" for p, c in args.budgets]
    print(f"{'kind':<16} {'trial':<36} {'logged':>7} " + " ".join(f"{label + ' acc val epochs best':>30}" for label in labels))
    gains: dict[str, list[list[float]]] = defaultdict(list)
    for run in runs:
        kind = run.data.tags.get(tracking.TAG_BASELINE, preset_name)
        _, directory = checkpoints_of(run)[-1]
        config = trial_config(directory)
        preset = presets()[kind]
        data = preset.checkpoint_inputs(config, str(directory)).data
        budget = preset.mechanism.typed(config)
        t0 = time.perf_counter()
        fits = [refit(data, budget, patience, cap) for patience, cap in args.budgets]
        gains[kind].append([f["accuracy"] - fits[0]["accuracy"] for f in fits])
        cells = " ".join(f"{f['accuracy']:>12.3f} {f['val_accuracy']:>5.3f} {f['epochs']:>6.0f} {f['best_epoch']:>4.0f}"
                         for f in fits)
        print(f"{kind:<16} {run.info.run_name:<36} {run.data.metrics.get('attack/deep/accuracy', float('nan')):>7.3f} "
              f"{cells}  ({time.perf_counter() - t0:.0f} s)", flush=True)
    for kind, rows in gains.items():
        means = [sum(col) / len(col) for col in zip(*rows, strict=True)]
        print(f"{kind}: mean refit minus {labels[0]} over {len(rows)} trials: "
              + ", ".join(f"{label} {m:+.3f}" for label, m in zip(labels[1:], means[1:], strict=True)))


if __name__ == "__main__":
    main()

"""Attackers started from the raw-data fit against attackers trained from scratch, on a finished sweep's releases.

For each trial of an image sweep, rebuild its released splits from the last checkpoint as the farm does, then fit the
farm's tuned CNN family (attacks/attackers/tuning.py) twice on the same released training records: from fresh weights,
and with the members of the raw-data fit's width starting from that fit's network (the fit ``deep_raw`` and the data
user's ``fixed_utility`` make anyway, read from their cache). Both are chosen and early-stopped on validation only and
scored once on the released test split; the table gives each one's balanced accuracy, epochs and seconds, for the
secret S (the attacker) and the digit U (the data user).

    TMPDIR=<the-sweeps-temporary-folder> PYTHONPATH=. .venv/bin/python benchmarks/warm_attackers.py \\
        --tracking-uri sqlite:///mlflow.db SWEEP
"""
from __future__ import annotations

import argparse
import time
from typing import cast

import torch
from torch import nn

from attacks.attackers.deep import DeepAttacker
from core.classifier import FIT_CACHE, RAW_STD_FLOOR, ModelBuilder, TunedFit, image_cnn, tune_classifier
from core.config import AttackBudget
from core.metrics import balanced_accuracy
from core.nets import Standardized
from core.training import predict_logits
from platform.results.store import Store
from platform.run.catch_up import checkpoints_of, trial_config
from search_spaces import presets


def scored(fit: TunedFit, x: torch.Tensor, y: torch.Tensor, classes: int) -> float:
    """Balanced accuracy of the chosen network on the released test split."""
    return balanced_accuracy(predict_logits(fit.model, x).argmax(1), y, classes)


def started_from(fit: TunedFit, fresh: ModelBuilder) -> ModelBuilder:
    """``fresh``, but the members of ``fit``'s width start from its network (the family standardises their inputs with
    the release's own statistics, as ever)."""
    def build(classes: int, width: int) -> nn.Module:
        net = fresh(classes, width)
        if width == fit.candidate.width:
            net.load_state_dict(cast(Standardized, fit.model).inner.state_dict())
        return net
    return build


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep")
    p.add_argument("--tracking-uri", default="sqlite:///mlflow.db")
    p.add_argument("--trial", action="append", help="only trials whose name contains this (repeatable)")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    client = Store(args.tracking_uri)
    exp_id, parent_id = client.find_sweep(args.sweep)
    preset = presets()[client.run(parent_id).data.params["preset"]]
    runs = [r for r in client.child_runs(exp_id, parent_id) if checkpoints_of(r)
            and (not args.trial or any(t in r.info.run_name for t in args.trial))]
    print(f"{'trial':<26} {'label':<7} {'scratch acc':>11} {'ep':>3} {'s':>5} {'warm acc':>9} {'ep':>3} {'s':>5} {'gap':>6}")
    for run in runs:
        _, directory = checkpoints_of(run)[-1]
        config = trial_config(directory)
        inputs = preset.checkpoint_inputs(config, str(directory))
        data, budget = inputs.data, AttackBudget.of(inputs.config)
        for label, train_y, test_y in (("S", data.train_s, data.test_s), ("U", data.train_u, data.test_u)):
            classes = int(max(train_y.max(), test_y.max())) + 1
            raw = DeepAttacker(budget, cache_dir=FIT_CACHE, store=True, std_floor=RAW_STD_FLOOR).fit(
                data.raw_train_x, train_y, classes)
            rows = []
            fresh = image_cnn(data.train_x)
            for build in (fresh, started_from(raw, fresh)):
                t0 = time.perf_counter()
                fit = tune_classifier(build, data.train_x, train_y, classes, budget, 16)
                rows.append((scored(fit, data.test_x, test_y, classes), fit.log.epochs, time.perf_counter() - t0))
            (a0, e0, t0_), (a1, e1, t1) = rows
            print(f"{run.info.run_name:<26} {label:<7} {a0:>11.3f} {e0:>3d} {t0_:>5.0f} {a1:>9.3f} {e1:>3d} {t1:>5.0f} "
                  f"{a1 - a0:>+6.3f}", flush=True)


if __name__ == "__main__":
    main()

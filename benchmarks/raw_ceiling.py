"""Calibration of the learned attackers on raw (unreleased) AMNIST: the farm's budget against a generous one.

An attacker that cannot reach what a generously trained attacker reaches on raw data is too weak to
certify privacy. This trains, on the same raw training records (the profile's ``attack_records``, else its training
split) and scores once on the same raw test split:
the farm's tuned family at a profile's budget (successive halving, cap ``attack_epochs``), and a generous
family (every configuration to convergence: widths ×1/×2/×4, two learning rates, with/without shifts,
cap 100 epochs, patience 20). The thickness rule is exact on raw images by construction, so it is not here.

    PYTHONPATH=. .venv/bin/python benchmarks/raw_ceiling.py --profile quick
"""
from __future__ import annotations

import argparse
import time

import torch

from attacks.attackers.deep import DeepAttacker
from attacks.base import AttackInput
from core.config import AttackBudget
from platform.plan.spec import resolve

GENEROUS = AttackBudget(attack_epochs=100, attack_patience=20, attack_width_factors=(1.0, 2.0, 4.0), attack_search="full")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="amnist")
    p.add_argument("--profile", default="quick")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--tasks", default="thickness,digit", help="which labels: thickness (the secret), digit (utility)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    from trainables.releaser.config import ReleaserConfig
    from trainables.shared.image_data import attacker_records, load_data, load_population

    config = resolve(args.preset, args.profile, []).grid_points()[0]
    cfg = ReleaserConfig.from_dict({k: v for k, v in config.items() if k in ReleaserConfig.model_fields})
    train, test = load_data(cfg, torch.device("cpu"))
    # the raw records the profile's attackers train on
    train = attacker_records(cfg, train, lambda: load_population(cfg, torch.device("cpu")))
    print(f"{args.preset}/{args.profile}: {len(train)} raw training images, {len(test)} test images")
    tasks = (("thickness", train.s, test.s, 2), ("digit", train.u, test.u, 10))
    for task, s_train, s_test, classes in (t for t in tasks if t[0] in args.tasks.split(",")):
        for label, budget in (("farm budget", cfg), ("generous", GENEROUS)):
            t0 = time.perf_counter()
            m = DeepAttacker(budget).run(AttackInput(train.x, s_train, test.x, s_test, classes)).metrics
            print(f"{task:<9} {label:<11} balanced accuracy {m['accuracy']:.4f} [{m['accuracy/ci_low']:.4f}, "
                  f"{m['accuracy/ci_high']:.4f}]  chosen w{m['chosen_width']:.0f} lr {m['chosen_lr']:g} "
                  f"aug {m['chosen_augment']:.0f}, {m['epochs']:.0f} epochs, {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()

"""The releaser's game curves for one ``amnist`` grid point, epoch by epoch: does the release go black, and when?

The ``amnist-scale`` study's collapsed releases (the data user's digit accuracy at chance and every attacker at 50 %)
were releasers whose output went black: the mean pixel reads 0, and the gradient norm 0 from then on, a flat point
the game cannot leave. The releaser's loss (``train/loss_releaser``) says whether black was the cheaper point: an
all-black AMNIST release costs about 92 (its squared error, 89.7, plus ln 10). This runs the game of one grid point
(``--lam``, ``--seed``, ``--adv-steps``, the profile's config) without Ray or MLflow for its first ``--epochs`` epochs
and prints those curves. ``--fresh-optimiser`` gives the releaser a new Adam when the game starts, instead of the one
its autoencoder warm start leaves (its running moments come from another loss).

    PYTHONPATH=. .venv/bin/python benchmarks/game_collapse.py --profile scale --lam 300 --seed 1 --epochs 3
    PYTHONPATH=. .venv/bin/python benchmarks/game_collapse.py --profile scale --lam 300 --seed 1 --epochs 3 --fresh-optimiser
"""
from __future__ import annotations

import argparse
import time

import torch
from bench_gpu import preset_config

from search_spaces.amnist import PRESET
from trainables.releaser.mechanism import Releaser
from trainables.shared import tune_loop

CURVES = ("train/loss_releaser", "train/releaser_grad_norm", "utility/mean_pixel", "utility/psnr", "utility/accuracy",
          "train/adversary_accuracy")  # how hard the releaser is pushed, what it releases, and what the release keeps


class FreshOptimiser(Releaser):
    """The releaser whose warm start ends with a new Adam for the releasing network (same step size)."""

    def compute_pretrain(self) -> None:
        super().compute_pretrain()
        self.opt_r = torch.optim.Adam(self.releaser.parameters(), lr=self.cfg.releaser_lr or self.cfg.lr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="scale")
    parser.add_argument("--alpha", type=float, default=1.0)
    parser.add_argument("--lam", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--adv-steps", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=3,
                        help="stop after this many epochs (the profile's checkpoint epoch adds its fresh attackers)")
    parser.add_argument("--fresh-optimiser", action="store_true")
    args = parser.parse_args()
    config = PRESET.validate({**preset_config("amnist", args.profile, None), "alpha": args.alpha, "lam": args.lam,
                              "seed": args.seed, "adv_steps": args.adv_steps, "threads": 1})
    optimiser = "a fresh Adam" if args.fresh_optimiser else "the warm start's Adam"
    print(f"{args.profile} profile, α = {args.alpha:g}, λ = {args.lam:g}, {args.adv_steps} adversary step(s), "
          f"seed {args.seed}, the releaser's game on {optimiser}", flush=True)
    mechanism = (FreshOptimiser if args.fresh_optimiser else Releaser).create(config, torch.device("cpu"))
    mechanism.pretrain_dir = None
    started = time.perf_counter()
    for outcome in tune_loop.epochs(mechanism):
        curves = {k: round(outcome.metrics[k], 3) for k in CURVES if k in outcome.metrics}
        print(f"epoch {outcome.epoch}: {curves} ({time.perf_counter() - started:.0f} s)", flush=True)
        if outcome.epoch >= args.epochs:
            break


if __name__ == "__main__":
    main()

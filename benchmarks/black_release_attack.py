"""Is a release that went black private, or only too faint for the farm? A linear attacker on its logarithm.

A releaser whose sigmoid output saturated releases pixels of 1e-20 and below; the farm's attackers, which standardise
their inputs, read 50 % on it. The values still differ from image to image, so this fits a logistic regression on each
pixel's logarithm (standardised) over the released training split and scores thickness (S) and digit (U) on the
released test split, balanced accuracy. ``CHECKPOINT`` is a trial's checkpoint folder; its ``params.json`` one up.

    PYTHONPATH=. .venv/bin/python benchmarks/black_release_attack.py RUNS/amnist-scale-.../train_releaser_.../checkpoint_000000
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score

from search_spaces.amnist import PRESET
from trainables.releaser.mechanism import Releaser


def log_features(released: torch.Tensor) -> np.ndarray:
    """Each pixel's natural logarithm (float64, floored at float32's smallest positive value)."""
    return torch.log(released.double().clamp_min(1e-45)).flatten(1).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path)
    args = parser.parse_args()
    config = PRESET.validate(json.loads((args.checkpoint.parent / "params.json").read_text()))
    mechanism = Releaser.restore(config, str(args.checkpoint), torch.device("cpu"))
    mechanism.releaser.eval()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        train, test = (log_features(mechanism.releaser(split.x, generator)) for split in (mechanism.train, mechanism.test))
    print(f"λ = {config['lam']:g}, seed {config['seed']}: largest released pixel {float(np.exp(train.max())):.3g}")
    mean, std = train.mean(0), train.std(0) + 1e-9
    train, test = (train - mean) / std, (test - mean) / std
    for name, fit_on, score_on in (("thickness S", mechanism.train.s, mechanism.test.s),
                                   ("digit U", mechanism.train.u, mechanism.test.u)):
        model = LogisticRegression(max_iter=2000, C=0.1).fit(train, fit_on.numpy())
        score = balanced_accuracy_score(score_on.numpy(), model.predict(test))
        print(f"  {name}: balanced accuracy {score:.3f} on the release's logarithm ({len(train)} training records)")


if __name__ == "__main__":
    main()

"""What every Cloak epoch reports, and its checkpoints add: the target's accuracy on sifted images over noise draws,
the information removed (the per-feature bound and the kNN estimate), the matched Gaussian noise at equal information
and at equal accuracy, the fairness gaps and the distortion; and the paper's comparison of Cloak's noisy
representation with Gaussian noise at equal kNN information removed.
"""
from __future__ import annotations

import copy
from collections.abc import Callable

import torch
from torch import nn

from attacks.attackers.deep import DeepAttacker
from attacks.base import AttackInput
from core.image_quality import image_quality
from core.metric_names import INFO_REMOVED_KNN, UTILITY_ACCURACY
from core.metrics import balanced_accuracy, fairness_gaps
from core.training import predict_logits
from trainables.cloak.cloak_map import CloakMap, release
from trainables.cloak.config import CloakConfig
from trainables.cloak.data import TaskSplit
from trainables.cloak.info import (
    information_removed,
    matching_gaussian_sigma,
)
from trainables.cloak.knn_info import KnnInfoMeter
from trainables.cloak.matched_noise import gaussian_release, matching_sigma
from trainables.cloak.target import (
    crop28,
)

POLARISED = 0.1  # σ within 10% of M from 0 or from M counts as pushed to an end
EQUAL_ACC = "baseline/gaussian_equal_acc"  # metric prefix of the matched Gaussian noise at Cloak's accuracy
EQUAL_INFO = "baseline/gaussian_equal_info"  # ... at the kNN information Cloak's noisy representation removes


def _accuracy_over_draws(target: nn.Module, transform: Callable[[torch.Tensor], torch.Tensor], split: TaskSplit,
                         num_classes: int, draws: int) -> tuple[float, torch.Tensor]:
    """Mean balanced accuracy over ``draws`` noisy versions of the split, and all draws' predictions concatenated."""
    preds = [predict_logits(target, transform(split.x)).argmax(1) for _ in range(draws)]
    return sum(balanced_accuracy(p, split.y, num_classes) for p in preds) / draws, torch.cat(preds)


def _gaussian_accuracy(target: nn.Module, split: TaskSplit, num_classes: int, draws: int, seed: int,
                       ) -> Callable[[float], float]:
    """σ -> the target's mean balanced accuracy on x + σ·e, with the same draws e for every σ (so it falls smoothly)."""
    gen = torch.Generator(device=split.x.device).manual_seed(seed)
    noise = [torch.randn(split.x.shape, generator=gen, device=split.x.device) for _ in range(draws)]

    def accuracy(sigma: float) -> float:
        preds = (predict_logits(target, split.x + sigma * e).argmax(1) for e in noise)
        return sum(balanced_accuracy(p, split.y, num_classes) for p in preds) / draws

    return accuracy


@torch.no_grad()
def evaluate_cloak(cfg: CloakConfig, cloak: CloakMap, target: nn.Module, test: TaskSplit, variance: torch.Tensor,
                   knn: KnnInfoMeter, equal_accuracy: bool = True) -> tuple[dict[str, float], torch.Tensor]:
    """Utility, the image quality of one sifted draw (``utility/psnr``, ...), information removed (bound and kNN),
    suppression ratio, the matched Gaussian noise at equal bound information, with ``equal_accuracy`` the one at equal
    accuracy (a bisection) and the paper's comparison (:func:`noisy_against_gaussian`), and fairness on the test split."""
    device, n, k = test.x.device, cfg.num_classes, cfg.noise_draws
    gen = torch.Generator(device=device).manual_seed(cfg.seed + 7)
    sifted = release(cloak, test.x, gen)
    acc, preds = _accuracy_over_draws(target, lambda x: release(cloak, x, gen), test, n, k)
    zero_fill = copy.deepcopy(cloak)
    zero_fill.mu_s.zero_()
    acc_zero, _ = _accuracy_over_draws(target, lambda x: release(zero_fill, x, gen), test, n, k)
    raw_pred = predict_logits(target, test.x).argmax(1)
    raw_acc = balanced_accuracy(raw_pred, test.y, n)

    sigma = cloak.sigma()
    removed = information_removed(variance, sigma, cloak.keep, cfg.info_floor)
    sigma_g = matching_gaussian_sigma(variance, min(removed, 1 - 1e-9), cfg.info_floor)
    acc_g, _ = _accuracy_over_draws(target, lambda x: gaussian_release(x, sigma_g, gen), test, n, k)
    polarised = ((sigma < POLARISED * cfg.M) | (sigma > (1 - POLARISED) * cfg.M)).float().mean()
    cloak_knn = knn(sifted)
    metrics = {
        UTILITY_ACCURACY: acc,
        "utility/accuracy_zero_fill": acc_zero,
        "utility/raw_accuracy": raw_acc,
        "utility/accuracy_loss": raw_acc - acc,
        "leakage/info_removed": removed,
        INFO_REMOVED_KNN: cloak_knn.removed,
        "leakage/mi_knn": cloak_knn.mi,
        "leakage/mi_knn_self": cloak_knn.self_mi,
        "leakage/suppression_ratio": float(1 - cloak.keep.mean()),
        "leakage/sigma_mean": float(sigma.mean()),
        "leakage/sigma_polarised": float(polarised),
        "leakage/gaussian_sigma": sigma_g,
        "utility/gaussian_accuracy": acc_g,
        "utility/gaussian_gap": acc - acc_g,
    } | image_quality(sifted, test.x)
    if equal_accuracy:
        gaussian_at = _gaussian_accuracy(target, test, n, k, cfg.seed + 8)
        sigma_acc = matching_sigma(gaussian_at, acc)
        matched_knn = knn(gaussian_release(test.x, sigma_acc, gen))
        metrics |= {
            f"{EQUAL_ACC}/sigma": sigma_acc,
            f"{EQUAL_ACC}/utility/accuracy": gaussian_at(sigma_acc),
            f"{EQUAL_ACC}/leakage/info_removed": information_removed(variance, sigma_acc, floor=cfg.info_floor),
            f"{EQUAL_ACC}/leakage/info_removed_knn": matched_knn.removed,
            f"{EQUAL_ACC}/leakage/mi_knn": matched_knn.mi,
        } | noisy_against_gaussian(cfg, cloak, target, test, knn)
    group = test.thick.repeat(k)
    metrics.update({f"fairness/{key}": v for key, v in fairness_gaps(preds, test.y.repeat(k), group, n).items()})
    metrics.update({f"fairness/raw_{key}": v for key, v in fairness_gaps(raw_pred, test.y, test.thick, n).items()})
    return metrics, sifted


@torch.no_grad()
def noisy_against_gaussian(cfg: CloakConfig, cloak: CloakMap, target: nn.Module, test: TaskSplit, knn: KnnInfoMeter,
                           ) -> dict[str, float]:
    """The paper's accuracy-versus-information comparison: Cloak's noisy representation x + r (mask off, as the paper
    scores it) and Gaussian noise on every pixel at the same kNN information removed (σ by bisection on one fixed
    draw), each scored by the target's accuracy over the noise draws."""
    device, n, k = test.x.device, cfg.num_classes, cfg.noise_draws
    gen = torch.Generator(device=device).manual_seed(cfg.seed + 9)
    noisy = copy.deepcopy(cloak)
    noisy.keep.fill_(1.0)
    acc, _ = _accuracy_over_draws(target, lambda x: release(noisy, x, gen), test, n, k)
    removed = knn(release(noisy, test.x, gen)).removed
    draw = torch.randn(test.x.shape, generator=gen, device=device)
    sigma = matching_sigma(lambda s: 1.0 - knn(test.x + s * draw).removed, 1.0 - removed)
    acc_g = _gaussian_accuracy(target, test, n, k, cfg.seed + 10)(sigma)
    return {
        "utility/noisy_accuracy": acc,
        "leakage/noisy_info_removed_knn": removed,
        f"{EQUAL_INFO}/sigma": sigma,
        f"{EQUAL_INFO}/utility/accuracy": acc_g,
        f"{EQUAL_INFO}/leakage/info_removed_knn": knn(test.x + sigma * draw).removed,
    }


def attack_matched_noise(cfg: CloakConfig, sigma: float, train: TaskSplit, test: TaskSplit) -> dict[str, float]:
    """The farm's deep attacker, retrained on the matched Gaussian noise's release at σ (thickness from 28×28 images)."""
    gen = torch.Generator(device=train.x.device).manual_seed(cfg.seed + 3000)
    data = AttackInput(crop28(gaussian_release(train.x, sigma, gen)), train.thick,
                       crop28(gaussian_release(test.x, sigma, gen)), test.thick, num_classes=2)
    result = DeepAttacker(cfg).run(data)
    return {f"{EQUAL_ACC}/attack/deep/{key}": v for key, v in result.metrics.items()}

"""Cloak (docs/mechanisms.md#cloak): σ's range and start, polarisation by training, the mask rule, suppression values against
zero-filling, the information estimator and matched Gaussian noise, fairness gaps, the cached target and the served map."""
from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.special import digamma
from torch import nn

from core.data import default_data_root, load_mnist
from core.metrics import fairness_gaps
from trainables.cloak.cloak_map import CloakMap, apply_mask, sift
from trainables.cloak.config import CloakConfig
from trainables.cloak.data import TaskSplit
from trainables.cloak.evaluation import EQUAL_ACC, EQUAL_INFO, attack_matched_noise, noisy_against_gaussian
from trainables.cloak.info import (
    QUANTISATION_SIGMA,
    feature_information,
    information_removed,
    matching_gaussian_sigma,
)
from trainables.cloak.knn_info import KnnInfoMeter, PrincipalAxes, ksg_mutual_information
from trainables.cloak.matched_noise import matching_sigma
from trainables.cloak.mechanism import Cloak
from trainables.cloak.target import TargetSettings, load_target
from trainables.shared.mechanism import CheckpointError
from trainables.shared.tune_loop import epochs, write_checkpoint

# Strong noise (λ = 1), a mid threshold: a large share is suppressed, so μ_s has something to repair.
CONFIG = CloakConfig(lam=1.0, T=0.75, M=1.5, n_train=2000, n_test=600, epochs=10, suppression_epochs=2,
                     target_epochs=2, noise_draws=3, cloak_lr=0.2, baseline_attack=False)


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@dataclass
class Trained:
    """A trial after its last step, and that step's metrics."""

    trial: Cloak
    metrics: dict[str, float]


@cache
def trained(cfg: CloakConfig = CONFIG) -> tuple[Trained, list[dict[str, float]]]:
    """The trained trial with its last step's metrics, and every step's metrics (trained once per test session)."""
    mechanism = Cloak(cfg, torch.device("cpu"))
    history = [outcome.metrics for outcome in epochs(mechanism)]
    return Trained(mechanism, history[-1]), history


# ---------------------------------------------------------------- σ and the mask


@pytest.mark.slow  # trains Cloak: 20 s on 2 busy cores: runs under -m slow (CI runs both)
def test_sigma_starts_near_zero_and_stays_in_range() -> None:
    cloak = CloakMap(max_sigma=1.5, rho_init=-4.0)
    start = cloak.sigma().detach()
    assert float(start.max()) < 0.001 * 1.5  # (1 + tanh(−4))/2 · 1.5 ≈ 5.0e-4
    assert float(start.max()) == pytest.approx((1 + math.tanh(-4.0)) / 2 * 1.5, rel=1e-4)  # float32
    with torch.no_grad():
        cloak.rho.copy_(torch.linspace(-60, 60, 1024).reshape(1, 32, 32))
    sigma = cloak.sigma().detach()
    assert float(sigma.min()) == 0.0 and float(sigma.max()) == pytest.approx(1.5)
    assert bool(torch.all(sigma >= 0)) and bool(torch.all(sigma <= 1.5))
    last, _ = trained()
    learned = last.trial.cloak.sigma().detach()
    assert bool(torch.all(learned >= 0)) and bool(torch.all(learned <= CONFIG.M))


@pytest.mark.slow  # trains Cloak: 19 s on 2 busy cores: runs under -m slow (CI runs both)
def test_training_pushes_sigma_to_both_ends() -> None:
    last, history = trained()
    sigma = last.trial.cloak.sigma().detach()
    near_zero = float((sigma < 0.1 * CONFIG.M).float().mean())
    near_max = float((sigma > 0.9 * CONFIG.M).float().mean())
    assert near_zero + near_max > 0.6, (near_zero, near_max)
    assert near_zero > 0.02 and near_max > 0.1, (near_zero, near_max)  # both ends in use: kept and suppressed pixels
    assert history[0]["leakage/sigma_mean"] < history[-1]["leakage/sigma_mean"]
    assert history[-1]["leakage/sigma_polarised"] == pytest.approx(near_zero + near_max, abs=1e-6)


def test_mask_keeps_small_sigma_and_suppresses_large() -> None:
    cloak = CloakMap(max_sigma=1.5, rho_init=-4.0)
    with torch.no_grad():
        cloak.rho[0, 0, :4] = torch.tensor([-5.0, 0.0, 5.0, 0.5])  # σ ≈ 0, 0.75, 1.5, 1.10
    apply_mask(cloak, 0.75)
    assert cloak.keep[0, 0, :4].tolist() == [1.0, 0.0, 0.0, 0.0]  # σ = T exactly is suppressed (σ ≥ T)
    assert float(cloak.keep.sum()) == 1024 - 3


def _masked_cloak() -> CloakMap:
    cloak = CloakMap(max_sigma=1.5, rho_init=-4.0)
    with torch.no_grad():
        cloak.rho[0, 10:20, 10:20] = 4.0  # σ ≈ 1.5: suppressed
        cloak.rho[0, 5, 5] = 0.0  # σ = 0.75: kept (T = 1), noisy
        cloak.mu.fill_(0.1)
        cloak.mu_s.fill_(0.3)
    apply_mask(cloak, 1.0)
    return cloak


@torch.no_grad()
def test_changing_a_suppressed_pixel_does_not_change_the_output() -> None:
    cloak = _masked_cloak()
    x = torch.rand(4, 1, 32, 32, generator=torch.Generator().manual_seed(0))
    base = sift(cloak, x, torch.Generator().manual_seed(1))
    changed = x.clone()
    changed[:, 0, 15, 15] = 1.0 - changed[:, 0, 15, 15]
    after = sift(cloak, changed, torch.Generator().manual_seed(1))
    assert torch.equal(after, base)  # same noise draw: bit for bit the same sifted image
    assert torch.allclose(base[:, 0, 15, 15], torch.full((4,), 0.3))  # a suppressed pixel is μ_s, no noise


@torch.no_grad()
def test_changing_a_kept_pixel_changes_only_that_output_pixel_by_the_change() -> None:
    cloak = _masked_cloak()
    x = torch.rand(4, 1, 32, 32, generator=torch.Generator().manual_seed(0))
    base = sift(cloak, x, torch.Generator().manual_seed(1))
    for row, col in ((5, 5), (25, 3)):  # a noisy kept pixel and a (nearly) noise-free one
        changed = x.clone()
        changed[:, 0, row, col] += 0.5
        diff = sift(cloak, changed, torch.Generator().manual_seed(1)) - base
        assert torch.allclose(diff[:, 0, row, col], torch.full((4,), 0.5), atol=1e-6)
        diff[:, 0, row, col] = 0
        assert float(diff.abs().max()) == 0.0
    # Across noise draws the noisy kept pixel varies with σ = 0.75 around x + μ.
    draws = torch.stack([sift(cloak, x, torch.Generator().manual_seed(s))[:, 0, 5, 5] for s in range(400)])
    assert float((draws - x[:, 0, 5, 5] - 0.1).std()) == pytest.approx(0.75, rel=0.1)


# ---------------------------------------------------------------- suppression values


def test_trained_suppression_values_beat_zero_filling_on_the_same_mask() -> None:
    last, history = trained()
    m = last.metrics
    assert m["leakage/suppression_ratio"] > 0.3, m
    assert m["utility/accuracy"] > m["utility/accuracy_zero_fill"] + 0.01, m
    # The mask did not move while μ_s trained: the perturbation-phase end and the last step share it.
    end_of_noise = history[CONFIG.perturbation_epochs - 1]
    assert end_of_noise["leakage/suppression_ratio"] == m["leakage/suppression_ratio"]
    assert end_of_noise["utility/accuracy_zero_fill"] == pytest.approx(m["utility/accuracy_zero_fill"])
    assert float(last.trial.cloak.mu_s.detach().abs().max()) > 0.05  # μ_s moved away from zero


# ---------------------------------------------------------------- information and the matched Gaussian noise


def test_feature_information_hand_computed() -> None:
    v = torch.tensor([0.25, 0.0])
    info = feature_information(v, torch.tensor([0.5, 0.5]))
    assert float(info[0]) == pytest.approx(0.5 * math.log(1 + 0.25 / (0.25 + QUANTISATION_SIGMA ** 2)))
    assert float(info[1]) == 0.0  # a constant feature carries nothing
    assert float(feature_information(v, 0.0)[0]) == pytest.approx(0.5 * math.log(1 + 0.25 * 255 ** 2 * 12))


def test_information_removed_end_points_and_a_mixture() -> None:
    v = torch.tensor([0.25, 0.25, 0.0])
    assert information_removed(v, 0.0) == pytest.approx(0.0)
    assert information_removed(v, 0.0, keep=torch.tensor([0.0, 0.0, 1.0])) == pytest.approx(1.0)
    assert information_removed(v, 0.0, keep=torch.tensor([1.0, 0.0, 0.0])) == pytest.approx(0.5)  # one of two
    # One kept feature with noise σ = 0.5, the other suppressed: 1 − I(0.5) / (2·I(0)).
    i0 = 0.5 * math.log(1 + 0.25 / QUANTISATION_SIGMA ** 2)
    i5 = 0.5 * math.log(1 + 0.25 / (0.25 + QUANTISATION_SIGMA ** 2))
    got = information_removed(v, torch.tensor([0.5, 0.0, 0.0]), keep=torch.tensor([1.0, 0.0, 1.0]))
    assert got == pytest.approx(1 - i5 / (2 * i0))
    # A coarser floor credits the same noise with less: I(σ) = ½·log(1 + v/(σ² + floor²)).
    coarse = information_removed(v, 0.1, floor=0.1)
    assert coarse == pytest.approx(1 - math.log(1 + 0.25 / 0.02) / math.log(1 + 0.25 / 0.01))
    assert coarse < information_removed(v, 0.1)


def test_matching_gaussian_sigma_inverts_information_removed() -> None:
    v = torch.rand(1, 32, 32, generator=torch.Generator().manual_seed(0)) * 0.2
    for removed in (0.1, 0.5, 0.9, 0.99):
        sigma = matching_gaussian_sigma(v, removed)
        assert information_removed(v, sigma) == pytest.approx(removed, abs=1e-5)
    # One feature: removed = 1 − log(1 + v/(σ² + q²)) / log(1 + v/q²), solved for σ by hand.
    v1, target = torch.tensor([0.25]), 0.6
    kept = (1 - target) * math.log(1 + 0.25 / QUANTISATION_SIGMA ** 2)
    by_hand = math.sqrt(0.25 / math.expm1(kept) - QUANTISATION_SIGMA ** 2)
    assert matching_gaussian_sigma(v1, target) == pytest.approx(by_hand, rel=1e-4)
    with pytest.raises(ValueError, match="information removed"):
        matching_gaussian_sigma(v1, 1.0)


def test_trial_reports_the_gaussian_baseline_at_equal_information() -> None:
    last, _ = trained()
    m = last.metrics
    v = torch.as_tensor(last.trial.train.x).double().var(0, unbiased=False)
    assert information_removed(v, m["leakage/gaussian_sigma"]) == pytest.approx(m["leakage/info_removed"], abs=1e-4)
    assert m["utility/gaussian_gap"] == pytest.approx(m["utility/accuracy"] - m["utility/gaussian_accuracy"])
    assert 0.5 <= m["utility/gaussian_accuracy"] <= 1.0
    # the distortion is the sifted test draw's (the one the figure shows), not a fresh draw's
    sifted, raw = last.trial.sifted_test, last.trial.test.x
    assert m["utility/squared_error"] == pytest.approx(float((sifted - raw).pow(2).flatten(1).sum(1).mean()), rel=1e-5)
    per_image_mse = (sifted - raw).pow(2).flatten(1).mean(1)
    assert m["utility/psnr"] == pytest.approx(float((10 * torch.log10(1 / per_image_mse)).mean()), rel=1e-5)


# ---------------------------------------------------------------- the kNN estimator and the equal-accuracy baseline


def _gaussian_pair(n: int, d: int, rho: float, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(X, Y) with Y_i = ρ X_i + √(1 − ρ²) Z_i per coordinate, and the analytic I(X; Y) = −d/2 · log(1 − ρ²) nats."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    return x, rho * x + math.sqrt(1 - rho ** 2) * rng.standard_normal((n, d)), -0.5 * d * math.log(1 - rho ** 2)


@pytest.mark.parametrize(("d", "rho", "tol"), [(1, 0.5, 0.05), (1, 0.9, 0.06), (3, 0.6, 0.1), (2, 0.0, 0.03)])
def test_ksg_estimator_matches_the_analytic_gaussian_mi(d: int, rho: float, tol: float) -> None:
    x, y, exact = _gaussian_pair(2000, d, rho, seed=d)
    assert ksg_mutual_information(x, y) == pytest.approx(exact, abs=tol)


def test_knn_information_removed_is_zero_for_the_raw_images_and_grows_with_noise() -> None:
    gen = torch.Generator().manual_seed(0)
    images = torch.randn(1200, 4, generator=gen) @ torch.randn(4, 1, 8, 8, generator=gen).flatten(1)  # rank 4
    axes = PrincipalAxes.fit(images, dims=4)
    meter = KnnInfoMeter(axes, images, k=4)
    assert meter.self_mi == pytest.approx(float(digamma(1200) - digamma(4)), abs=2 / 4)  # the estimator's ceiling
    assert meter(images).removed == 0.0
    removed = [meter(images + sigma * torch.randn(images.shape, generator=gen)).removed for sigma in (0.3, 1.0, 3.0, 10.0)]
    assert removed == sorted(removed) and removed[0] > 0.03 and removed[-1] > 0.7, removed
    assert meter(torch.randn(images.shape, generator=gen)).removed > 0.97  # independent of the images: all removed
    with pytest.raises(ValueError, match=re.escape("knn_dims must be in [1, 64] for 1200 images of 64 features (got 65)")):
        PrincipalAxes.fit(images, dims=65)


def test_matching_sigma_inverts_a_falling_accuracy() -> None:
    def accuracy(sigma: float) -> float:
        return 0.5 + 0.5 / (1 + sigma)

    assert matching_sigma(accuracy, 0.75) == pytest.approx(1.0, rel=5e-3)  # 10 halvings of log σ
    assert matching_sigma(accuracy, 0.9) == pytest.approx(0.25, rel=5e-3)
    assert matching_sigma(accuracy, 1.0) == 1e-3  # the lowest noise already costs accuracy: the lower end
    assert matching_sigma(accuracy, 0.5) == 10.0  # below the highest noise's accuracy: the upper end


def test_trial_reports_the_gaussian_baseline_at_equal_accuracy() -> None:
    last, history = trained()
    m = last.metrics
    assert m[f"{EQUAL_ACC}/utility/accuracy"] == pytest.approx(m["utility/accuracy"], abs=0.02), m
    assert 0.0 <= m["leakage/info_removed_knn"] <= 1.0 and 0.0 <= m[f"{EQUAL_ACC}/leakage/info_removed_knn"] <= 1.0
    assert m["leakage/info_removed_knn"] == pytest.approx(1 - m["leakage/mi_knn"] / m["leakage/mi_knn_self"])
    assert 1e-3 < m[f"{EQUAL_ACC}/sigma"] < 10.0
    assert f"{EQUAL_ACC}/attack/deep/accuracy" not in m  # baseline_attack=False in this config
    assert f"{EQUAL_ACC}/sigma" not in history[0]  # the bisection runs on checkpoint epochs only (here the last)


def _linear_task(n: int = 600) -> tuple[nn.Module, TaskSplit, KnnInfoMeter]:
    """Rank-4 32×32 images, a linear two-class target and its own clean predictions as labels, and a kNN meter."""
    gen = torch.Generator().manual_seed(0)
    x = (torch.randn(n, 4, generator=gen) @ torch.randn(4, 32 * 32, generator=gen)).reshape(n, 1, 32, 32)
    target = nn.Sequential(nn.Flatten(), nn.Linear(32 * 32, 2)).requires_grad_(False)
    y = target(x).argmax(1)
    return target, TaskSplit(x, y, y, y), KnnInfoMeter(PrincipalAxes.fit(x, dims=4), x)


def test_noisy_representation_ignores_the_mask_and_matches_gaussian_noise_of_its_own_sigma() -> None:
    target, test, knn = _linear_task()
    silent = CloakMap(1.0, rho_init=-10.0)  # σ ≈ 0
    apply_mask(silent, 0.0)  # everything suppressed: the noisy representation must not see the mask
    clean = noisy_against_gaussian(CONFIG, silent, target, test, knn)
    assert clean["utility/noisy_accuracy"] == 1.0 and clean["leakage/noisy_info_removed_knn"] < 0.01, clean
    assert clean[f"{EQUAL_INFO}/sigma"] < 0.01 and clean[f"{EQUAL_INFO}/utility/accuracy"] > 0.99, clean

    uniform = CloakMap(4.0, rho_init=-10.0)
    with torch.no_grad():
        uniform.rho.fill_(10.0)  # σ = M = 4 on every pixel: Cloak's noise is the matched Gaussian noise at σ = 4
    loud = noisy_against_gaussian(CONFIG, uniform, target, test, knn)
    assert loud[f"{EQUAL_INFO}/sigma"] == pytest.approx(4.0, rel=0.1), loud
    assert 0.1 < loud["leakage/noisy_info_removed_knn"] < 0.9, loud
    assert loud[f"{EQUAL_INFO}/leakage/info_removed_knn"] == pytest.approx(loud["leakage/noisy_info_removed_knn"],
                                                                           abs=0.02)
    assert loud[f"{EQUAL_INFO}/utility/accuracy"] == pytest.approx(loud["utility/noisy_accuracy"], abs=0.04), loud


def test_trial_reports_the_papers_comparison_at_equal_information() -> None:
    last, history = trained()
    m = last.metrics
    assert m[f"{EQUAL_INFO}/leakage/info_removed_knn"] == pytest.approx(m["leakage/noisy_info_removed_knn"], abs=0.03), m
    assert 0.5 <= m["utility/noisy_accuracy"] <= 1.0 and 0.5 <= m[f"{EQUAL_INFO}/utility/accuracy"] <= 1.0
    assert f"{EQUAL_INFO}/sigma" not in history[0]  # checkpoint epochs only, like the equal-accuracy baseline


def test_deep_attacker_on_the_matched_noise_falls_with_noise() -> None:
    last, _ = trained()
    cfg = CloakConfig.from_dict({**CONFIG.as_dict(), "attack_epochs": 2})
    train, test = last.trial.train, last.trial.test
    small = (TaskSplit(train.x[:500], train.y[:500], train.digit[:500], train.thick[:500]),
             TaskSplit(test.x[:400], test.y[:400], test.digit[:400], test.thick[:400]))
    faint = attack_matched_noise(cfg, 0.01, *small)[f"{EQUAL_ACC}/attack/deep/accuracy"]
    loud = attack_matched_noise(cfg, 5.0, *small)[f"{EQUAL_ACC}/attack/deep/accuracy"]
    assert faint > loud + 0.15 and loud < 0.65, (faint, loud)


# ---------------------------------------------------------------- fairness


def test_fairness_gaps_hand_computed() -> None:
    # group 0: y = [0, 0, 1, 1], ŷ = [0, 1, 1, 1] -> P(ŷ=1) = 3/4, TNR P(ŷ=0|y=0) = 1/2, TPR P(ŷ=1|y=1) = 1
    # group 1: y = [0, 1, 1, 1], ŷ = [0, 0, 0, 1] -> P(ŷ=1) = 1/4, TNR = 1,                TPR = 1/3
    pred = torch.tensor([0, 1, 1, 1, 0, 0, 0, 1])
    y = torch.tensor([0, 0, 1, 1, 0, 1, 1, 1])
    group = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    gaps = fairness_gaps(pred, y, group, 2)
    assert gaps["demp_gap"] == pytest.approx(0.5)
    assert gaps["eo_gap"] == pytest.approx(abs(0.5 - 1) + abs(1 - 1 / 3))  # the paper's sum, not the max (2/3)


def test_fairness_gaps_sum_the_true_rate_gaps_over_classes() -> None:
    # group 0: ŷ = [0, 2, 1, 1] for y = [0, 0, 1, 1]; group 1: ŷ = [0, 0, 2, 1] for the same y.
    # ΔEO: y = 0: P(ŷ=0|y=0) = 1/2 vs 1; y = 1: P(ŷ=1|y=1) = 1 vs 1/2; y = 2 absent -> 1/2 + 1/2 = 1 (a max: 1/2).
    # ΔDemP: P(ŷ=c) = (1/4, 1/2, 1/4) vs (1/2, 1/4, 1/4) -> 1/4.
    y = torch.tensor([0, 0, 1, 1, 0, 0, 1, 1])
    gaps = fairness_gaps(torch.tensor([0, 2, 1, 1, 0, 0, 2, 1]), y, torch.tensor([0, 0, 0, 0, 1, 1, 1, 1]), 3)
    assert gaps == pytest.approx({"demp_gap": 0.25, "eo_gap": 1.0})
    # One class absent from a group is skipped: only y = 0 (1/2 vs 1) counts.
    only = fairness_gaps(torch.tensor([0, 2, 0, 0]), torch.tensor([0, 0, 0, 0]), torch.tensor([0, 0, 1, 1]), 3)
    assert only["eo_gap"] == pytest.approx(0.5)


# ---------------------------------------------------------------- the cached target


@pytest.mark.slow  # trains LeNet-5 on MNIST: half a minute on 2 busy cores: runs under -m slow (CI runs both)
def test_target_is_trained_once_cached_and_accurate(tmp_path: Path) -> None:
    load_mnist(default_data_root())  # make sure the MNIST tensor cache exists, then share it with the temporary root
    (tmp_path / "mnist_uint8.pt").symlink_to(default_data_root() / "mnist_uint8.pt")
    settings = TargetSettings("gt5", 2, epochs=1, batch_size=128, lr=1e-3)
    first = load_target(tmp_path, settings, torch.device("cpu"))
    assert first.path.parent == tmp_path / "targets" and first.path.name.startswith("lenet5-gt5-")
    assert first.mnist_test_accuracy > 0.95  # one epoch of LeNet-5 on "digit > 5"
    stamp = first.path.stat().st_mtime_ns
    second = load_target(tmp_path, settings, torch.device("cpu"))
    assert second.path.stat().st_mtime_ns == stamp and second.mnist_test_accuracy == first.mnist_test_accuracy
    pairs = zip(first.model.state_dict().values(), second.model.state_dict().values(), strict=True)
    assert all(torch.equal(a, b) for a, b in pairs)
    assert not [p for p in first.path.parent.iterdir() if p.suffix == ".tmp"]
    assert not any(p.requires_grad for p in second.model.parameters())
    other = TargetSettings("digit", 10, epochs=1, batch_size=128, lr=1e-3)
    assert other.key() != settings.key()
    first.path.write_bytes(b"truncated")  # a corrupt cache file is trained again, not fatal
    assert load_target(tmp_path, settings, torch.device("cpu")).mnist_test_accuracy == pytest.approx(
        first.mnist_test_accuracy)


# ---------------------------------------------------------------- checkpoints, the farm's inputs, serving


def test_checkpoint_serves_the_same_transform_and_feeds_the_farm(tmp_path: Path) -> None:
    last, _ = trained()
    write_checkpoint(last.trial, tmp_path)
    assert {p.name for p in tmp_path.iterdir()} == {"state.pt", "epoch.json", "noise_map.png", "sifted.png"}
    assert json.loads((tmp_path / "epoch.json").read_text()) == {"epoch": last.trial.epoch}
    release_map = Cloak.load_release(CONFIG.as_dict(), str(tmp_path))
    assert release_map.input_shape == (1, 32, 32) and release_map.value_range == (0.0, 1.0)
    x = last.trial.test.x[:16]
    served = release_map.release(x, seed=5)
    assert torch.equal(served, release_map.release(x, seed=5))
    with torch.no_grad():
        direct = sift(last.trial.cloak, x, torch.Generator().manual_seed(5))
    assert torch.allclose(served, direct)

    inputs = Cloak.checkpoint_inputs(CONFIG.as_dict(), str(tmp_path))
    data = inputs.data
    assert data.train_x.shape[1:] == (1, 28, 28) and data.test_x.shape[1:] == (1, 28, 28)
    assert data.raw_train_x is not None and torch.equal(data.raw_train_x, last.trial.train.x[..., 2:30, 2:30])
    (target,) = inputs.targets
    assert target.name == "target" and target.member_x.shape[1:] == (1, 32, 32)
    assert torch.equal(target.member_y, (last.trial.train.digit > 5).long())


def test_corrupt_checkpoint_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "state.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError) as err:
        Cloak.load_release(CONFIG.as_dict(), str(tmp_path))
    assert "\n" not in str(err.value) and "state.pt" in str(err.value)


@pytest.mark.parametrize(("key", "value", "message"), [
    ("M", -1.0, "M: must be in (0, 1000000000] (got -1.0)"), ("T", 0.0, "T: must be > 0 (got 0.0)"),
    ("task", "odd", "task: must be 'gt5' or 'digit' (got 'odd')"),
    ("suppression_epochs", 10, "suppression_epochs: must be in [0, epochs) = [0, 10) (got 10)"),
    ("rho_init", 1.0, "rho_init: must be in [-1000000000, 0) (got 1.0)"),
])
def test_config_rejects_out_of_range_values(key: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        CloakConfig.from_dict({**CONFIG.as_dict(), key: value})

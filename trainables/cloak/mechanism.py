"""Cloak as a Mechanism (docs/mechanisms.md#cloak): learned per-pixel noise over a frozen, pre-trained target classifier.

Per-feature noise r = σ∘e + μ, σ = (1 + tanh ρ)/2 · M, e ~ N(0, I). The first ``epochs − suppression_epochs``
epochs train μ and ρ on L = −log mean_i σ_i² + λ·CE(f(x + r), y) with the mask off; the mask keeps feature i
(b_i = 1) where σ_i < T and suppresses it where σ_i ≥ T. The last ``suppression_epochs`` train the suppression
values μ_s on CE only, with μ, ρ and b fixed. :func:`sift` — x_s = (x + r)∘b + μ_s∘(1 − b) — is the one transform
training, evaluation, the attack farm and serving all use. Every epoch reports the target's accuracy on sifted test
images (mean over noise draws), the information removed (the per-feature bound, :mod:`trainables.cloak.info`, and the
paper's kNN estimate, :mod:`trainables.cloak.knn_info`), the matched Gaussian noise at equal bound information and at equal
accuracy (:mod:`trainables.cloak.matched_noise`), the fairness gaps and the distortion of the sifted test images
(``utility/squared_error``, ``utility/psnr``). Checkpoint epochs add the paper's own comparison:
Cloak's noisy representation x + r (no suppression) against Gaussian noise at equal kNN information removed.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import ClassVar

import torch
from torch import nn
from torch.nn import functional as F

from attacks.attackers.deep import DeepAttacker
from attacks.audits.imputation import ImputationAttacker
from attacks.base import AttackInput, CheckpointInputs, MembershipTarget, ReferenceData
from attacks.farm.reference import ClassifierRecipe, reference_cache_dir
from core.data import Splits, default_data_root, get_dataset, load_mnist_test_population
from core.image_quality import image_quality
from core.metric_names import INFO_REMOVED_KNN, UTILITY_ACCURACY
from core.metrics import balanced_accuracy, fairness_gaps, wilson_interval
from core.training import batches, predict_logits
from trainables.cloak.config import CloakConfig
from trainables.cloak.info import (
    feature_variance,
    information_removed,
    matching_gaussian_sigma,
)
from trainables.cloak.knn_info import KnnInfoMeter, PrincipalAxes
from trainables.cloak.matched_noise import gaussian_release, matching_sigma
from trainables.cloak.target import (
    MNIST_TEST,
    LeNet5,
    Target,
    TargetSettings,
    crop28,
    load_target,
    pad32,
    task_labels,
)
from trainables.shared.figures import digit_thickness, save_release_grid
from trainables.shared.mechanism import Capability, Mechanism, pick_device
from trainables.shared.release_map import ReleaseMap

NOISE_FIGURE = "noise_map.png"
SIFTED_FIGURE = "sifted.png"
INPUT_SHAPE = (1, 32, 32)
MNIST_TRAIN = 60_000  # the target's training-set size (all of MNIST's training images)
POLARISED = 0.1  # σ within 10% of M from 0 or from M counts as pushed to an end
EQUAL_ACC = "baseline/gaussian_equal_acc"  # metric prefix of the matched Gaussian noise at Cloak's accuracy
EQUAL_INFO = "baseline/gaussian_equal_info"  # ... at the kNN information Cloak's noisy representation removes


class CloakMap(nn.Module):
    """The learned parameters μ, ρ, μ_s (one per input feature) and the keep mask b (a buffer)."""

    keep: torch.Tensor  # the buffer, registered in __init__

    def __init__(self, max_sigma: float, rho_init: float, shape: tuple[int, ...] = INPUT_SHAPE) -> None:
        super().__init__()
        self.max_sigma = max_sigma
        self.mu = nn.Parameter(torch.zeros(shape))
        self.rho = nn.Parameter(torch.full(shape, rho_init))
        self.mu_s = nn.Parameter(torch.zeros(shape))
        self.register_buffer("keep", torch.ones(shape))

    def sigma(self) -> torch.Tensor:
        """σ = (1 + tanh ρ)/2 · M, in [0, M]."""
        return (1 + torch.tanh(self.rho)) / 2 * self.max_sigma

    def forward(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        return sift(self, x, generator)


def sift(cloak: CloakMap, x: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """x_s = (x + r)∘b + μ_s∘(1 − b), r = σ∘e + μ, e ~ N(0, I) drawn from ``generator``: Cloak's one transform."""
    e = torch.randn(x.shape, generator=generator, device=x.device, dtype=x.dtype)
    r = cloak.sigma() * e + cloak.mu
    return (x + r) * cloak.keep + cloak.mu_s * (1 - cloak.keep)


def apply_mask(cloak: CloakMap, threshold: float) -> None:
    """b_i = 1 (keep) where σ_i < T, 0 (suppress) where σ_i ≥ T."""
    with torch.no_grad():
        cloak.keep.copy_((cloak.sigma() < threshold).float())


@torch.no_grad()
def release(cloak: CloakMap, x: torch.Tensor, generator: torch.Generator, batch_size: int = 4096) -> torch.Tensor:
    """Sifted images of a whole split, batched, without gradients."""
    return torch.cat([sift(cloak, chunk, generator) for chunk in x.split(batch_size)])


@dataclass
class Split:
    """Images padded to 32×32 on the trial's device, the target's task labels, digits and thickness (0 thin, 1 thick)."""

    x: torch.Tensor
    y: torch.Tensor
    digit: torch.Tensor
    thick: torch.Tensor

    def __len__(self) -> int:
        return self.x.shape[0]


def load_splits(cfg: CloakConfig) -> Splits:
    """The trial's train and test subsets of its data set from the registry (AMNIST, thin/thick MNIST, at 32×32)."""
    return get_dataset(cfg.dataset).load(cfg.data_root, n_train=cfg.n_train, n_test=cfg.n_test, seed=cfg.seed,
                                         download=cfg.download)


def load_data(cfg: CloakConfig, device: torch.device) -> tuple[Split, Split]:
    """The trial's subsets (:func:`load_splits`) with the target's task labels, moved to ``device`` once."""
    splits = load_splits(cfg)
    train_split, test_split = (Split(s.x.to(device), task_labels(s.u, cfg.task).to(device), s.u.to(device),
                                     s.s.to(device)) for s in (splits.train, splits.test))
    return train_split, test_split


def _root(cfg: CloakConfig) -> Path:
    return Path(cfg.data_root).expanduser().resolve() if cfg.data_root else default_data_root()


def target_for(cfg: CloakConfig, device: torch.device) -> Target:
    """The cached LeNet-5 target of the config's task (trained on first use; fixed seed, shared by all trials)."""
    settings = TargetSettings(cfg.task, cfg.num_classes, cfg.target_epochs, cfg.batch_size, cfg.lr)
    return load_target(_root(cfg), settings, device, cfg.download)


def perturbation_epoch(cfg: CloakConfig, cloak: CloakMap, target: nn.Module, opt: torch.optim.Optimizer, train: Split,
                       gen: torch.Generator) -> dict[str, float]:
    """One pass training μ, ρ on −log mean σ² + λ·CE(f(x + r), y), mask off; returns mean losses."""
    cloak.keep.fill_(1.0)
    sums, steps = {"loss": 0.0, "noise_term": 0.0, "ce": 0.0}, 0
    for idx in batches(len(train), cfg.batch_size, gen, train.x.device):
        noise_term = -torch.log(cloak.sigma().pow(2).mean())
        ce = F.cross_entropy(target(sift(cloak, train.x[idx], gen)), train.y[idx])
        loss = noise_term + cfg.lam * ce
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        steps += 1
        for key, value in (("loss", loss), ("noise_term", noise_term), ("ce", ce)):
            sums[key] += value.item()
    return {f"train/{k}": v / steps for k, v in sums.items()}


def suppression_epoch(cfg: CloakConfig, cloak: CloakMap, target: nn.Module, opt: torch.optim.Optimizer, train: Split,
                      gen: torch.Generator) -> dict[str, float]:
    """One pass training the suppression values μ_s on CE(f(x_s), y) with μ, ρ and the mask fixed."""
    total, steps = 0.0, 0
    for idx in batches(len(train), cfg.batch_size, gen, train.x.device):
        ce = F.cross_entropy(target(sift(cloak, train.x[idx], gen)), train.y[idx])
        opt.zero_grad(set_to_none=True)
        ce.backward()
        opt.step()
        total += ce.item()
        steps += 1
    return {"train/ce": total / steps}


def _accuracy_over_draws(target: nn.Module, transform: Callable[[torch.Tensor], torch.Tensor], split: Split,
                         num_classes: int, draws: int) -> tuple[float, torch.Tensor]:
    """Mean balanced accuracy over ``draws`` noisy versions of the split, and all draws' predictions concatenated."""
    preds = [predict_logits(target, transform(split.x)).argmax(1) for _ in range(draws)]
    return sum(balanced_accuracy(p, split.y, num_classes) for p in preds) / draws, torch.cat(preds)


def _gaussian_accuracy(target: nn.Module, split: Split, num_classes: int, draws: int, seed: int,
                       ) -> Callable[[float], float]:
    """σ -> the target's mean balanced accuracy on x + σ·e, with the same draws e for every σ (so it falls smoothly)."""
    gen = torch.Generator(device=split.x.device).manual_seed(seed)
    noise = [torch.randn(split.x.shape, generator=gen, device=split.x.device) for _ in range(draws)]

    def accuracy(sigma: float) -> float:
        preds = (predict_logits(target, split.x + sigma * e).argmax(1) for e in noise)
        return sum(balanced_accuracy(p, split.y, num_classes) for p in preds) / draws

    return accuracy


@torch.no_grad()
def evaluate_cloak(cfg: CloakConfig, cloak: CloakMap, target: nn.Module, test: Split, variance: torch.Tensor,
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
        baseline_knn = knn(gaussian_release(test.x, sigma_acc, gen))
        metrics |= {
            f"{EQUAL_ACC}/sigma": sigma_acc,
            f"{EQUAL_ACC}/utility/accuracy": gaussian_at(sigma_acc),
            f"{EQUAL_ACC}/leakage/info_removed": information_removed(variance, sigma_acc, floor=cfg.info_floor),
            f"{EQUAL_ACC}/leakage/info_removed_knn": baseline_knn.removed,
            f"{EQUAL_ACC}/leakage/mi_knn": baseline_knn.mi,
        } | noisy_against_gaussian(cfg, cloak, target, test, knn)
    group = test.thick.repeat(k)
    metrics.update({f"fairness/{key}": v for key, v in fairness_gaps(preds, test.y.repeat(k), group, n).items()})
    metrics.update({f"fairness/raw_{key}": v for key, v in fairness_gaps(raw_pred, test.y, test.thick, n).items()})
    return metrics, sifted


@torch.no_grad()
def noisy_against_gaussian(cfg: CloakConfig, cloak: CloakMap, target: nn.Module, test: Split, knn: KnnInfoMeter,
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


def attack_equal_accuracy_baseline(cfg: CloakConfig, sigma: float, train: Split, test: Split) -> dict[str, float]:
    """The farm's deep attacker, retrained on the matched Gaussian noise's release at σ (thickness from 28×28 images)."""
    gen = torch.Generator(device=train.x.device).manual_seed(cfg.seed + 3000)
    data = AttackInput(crop28(gaussian_release(train.x, sigma, gen)), train.thick,
                       crop28(gaussian_release(test.x, sigma, gen)), test.thick, num_classes=2)
    result = DeepAttacker(cfg).run(data)
    return {f"{EQUAL_ACC}/attack/deep/{key}": v for key, v in result.metrics.items()}


def save_noise_map(cloak: CloakMap, path: Path, title: str) -> Path:
    """σ (0..M), the keep mask b and the suppression values μ_s side by side, as a PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 2.8))
    FigureCanvasAgg(fig)
    panels = (("σ", cloak.sigma(), 0.0, cloak.max_sigma), ("keep b", cloak.keep, 0.0, 1.0),
              ("μ_s (suppressed)", cloak.mu_s * (1 - cloak.keep), None, None))
    for ax, (name, image, vmin, vmax) in zip(fig.subplots(1, 3), panels, strict=True):
        shown = ax.imshow(image.detach().squeeze(0).cpu().numpy(), cmap="viridis", vmin=vmin, vmax=vmax)
        fig.colorbar(shown, ax=ax, fraction=0.046)
        ax.set_title(name, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


class Cloak(Mechanism[CloakConfig]):
    """A trial's learned map, its two optimisers (noise μ, ρ; suppression values μ_s), the frozen target and the data.

    Epochs 1 .. ``perturbation_epochs`` train μ and ρ; the rest train μ_s with the mask fixed. Every epoch is
    evaluated (the attack farm attacks the checkpoints); ``attack`` (checkpoint epochs) adds the matched Gaussian noise at
    Cloak's accuracy and the deep attacker on its release.
    """
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.FARM, Capability.SERVE, Capability.RAW_REFERENCE})

    name = "cloak"
    config_class = CloakConfig
    trainable_name = "train_cloak"
    figures = (NOISE_FIGURE, SIFTED_FIGURE)

    def build(self) -> None:
        """Fresh μ = 0, ρ = rho_init (σ ≈ 0), μ_s = 0, mask off, on the device."""
        cfg = self.cfg
        self.cloak = CloakMap(cfg.M, cfg.rho_init).to(self.device)
        self.opt_noise = torch.optim.Adam([self.cloak.mu, self.cloak.rho], lr=cfg.cloak_lr)
        self.opt_supp = torch.optim.Adam([self.cloak.mu_s], lr=cfg.cloak_lr)

    def setup(self) -> None:
        """The map, the trial's AMNIST subsets at 32×32 and the cached target, on the device."""
        self.build()
        self.train, self.test = load_data(self.cfg, self.device)
        self.target = target_for(self.cfg, self.device)

    def begin(self, start: int) -> None:
        """Noise streams seeded by seed + epochs done, the per-feature variance of the training images and the kNN
        estimator's principal axes (fitted on raw training images) with its raw test images."""
        cfg = self.cfg
        self.gen = torch.Generator(device=self.device).manual_seed(cfg.seed + start)
        torch.manual_seed(cfg.seed + start)
        self.variance = feature_variance(self.train.x)
        self.knn = KnnInfoMeter(PrincipalAxes.fit(self.train.x, cfg.knn_dims), self.test.x, cfg.knn_neighbours, cfg.seed)

    def state(self) -> dict:
        return {"cloak": self.cloak.state_dict(), "opt_noise": self.opt_noise.state_dict(),
                "opt_supp": self.opt_supp.state_dict()}

    def load_state(self, state: dict) -> None:
        self.cloak.load_state_dict(state["cloak"])
        self.opt_noise.load_state_dict(state["opt_noise"])
        self.opt_supp.load_state_dict(state["opt_supp"])

    def train_epoch(self) -> dict[str, float]:
        """A perturbation epoch (the first ``perturbation_epochs``) or a suppression-value epoch, then the mask."""
        cfg, cloak, target = self.cfg, self.cloak, self.target.model
        perturbing = self.epoch + 1 <= cfg.perturbation_epochs
        for p in (cloak.mu, cloak.rho):
            p.requires_grad_(perturbing)
        cloak.mu_s.requires_grad_(not perturbing)
        if perturbing:
            metrics = perturbation_epoch(cfg, cloak, target, self.opt_noise, self.train, self.gen)
        else:
            metrics = suppression_epoch(cfg, cloak, target, self.opt_supp, self.train, self.gen)
        apply_mask(cloak, cfg.T)
        return metrics | {"train/phase": 1.0 if perturbing else 2.0}

    def evaluate(self, attack: bool) -> dict[str, float]:
        """Every epoch in full; on checkpoint epochs (``attack``) also the matched Gaussian noise at equal accuracy (with
        the deep attacker on its release) and at the information Cloak's noisy representation removes."""
        cfg = self.cfg
        metrics, self.sifted_test = evaluate_cloak(cfg, self.cloak, self.target.model, self.test, self.variance, self.knn,
                                                   equal_accuracy=attack)
        if attack and cfg.baseline_attack:
            metrics |= attack_equal_accuracy_baseline(cfg, metrics[f"{EQUAL_ACC}/sigma"], self.train, self.test)
        return metrics

    def write_figures(self, directory: Path, epoch: int) -> None:
        """The noise map and a few original-vs-sifted test images."""
        cfg, test = self.cfg, self.test
        title = f"λ={cfg.lam:g} T={cfg.T:g} M={cfg.M:g} step {epoch}"
        save_noise_map(self.cloak, directory / NOISE_FIGURE, title)
        k = cfg.samples_in_figure
        save_release_grid(test.x[:k], self.sifted_test[:k].clamp(0, 1), directory / SIFTED_FIGURE, title,
                          digit_thickness(test.digit[:k], test.thick[:k]))

    def farm_inputs(self) -> CheckpointInputs:
        """Sifted AMNIST splits cropped to 28×28 (thickness as S, digits as U, raw images) and the target for Yeom."""
        cfg, device, cloak, train, test = self.cfg, self.device, self.cloak.eval(), self.train, self.test
        gen = torch.Generator(device=device).manual_seed(cfg.seed + 1000 + self.epoch)
        sifted_train, sifted_test = release(cloak, train.x, gen), release(cloak, test.x, gen)
        data = AttackInput(crop28(sifted_train), train.thick, crop28(sifted_test), test.thick, num_classes=2,
                           train_u=train.digit, test_u=test.digit, raw_train_x=crop28(train.x))
        # The target was trained on all 60,000 MNIST training images, so the AMNIST training split is all members.
        target = MembershipTarget("target", self.target.model, sifted_train, train.y, sifted_test, test.y,
                                  self.target_reference())
        return CheckpointInputs(data, (target,))

    def target_reference(self) -> ReferenceData:
        """Reference data for the target: LeNet-5 trained on raw MNIST test images outside the trial's test subset
        (the only images it never saw), the target's way; queried on their sifted versions. Shared by every checkpoint."""
        cfg, device = self.cfg, self.device
        x, digits = load_mnist_test_population(_root(cfg), n_test=cfg.n_test, seed=cfg.seed, download=cfg.download)
        x = pad32(x).to(device)
        gen = torch.Generator(device=device).manual_seed(cfg.seed + 2000 + self.epoch)
        recipe = ClassifierRecipe(partial(LeNet5, cfg.num_classes), cfg.target_epochs, cfg.batch_size, cfg.lr)
        assert self.checkpoint_dir is not None  # the farm restores its mechanisms from a checkpoint
        cloak = self.cloak  # the queries are released when RMIA or LiRA first reads them
        return ReferenceData(recipe, x, task_labels(digits, cfg.task).to(device), lambda: release(cloak, x, gen),
                             train_size=MNIST_TRAIN, cache_dir=reference_cache_dir(self.checkpoint_dir, per_checkpoint=False))

    def release_map(self) -> ReleaseMap:
        """The learned map as a served map: 1×32×32 images in [0, 1] to sifted images."""
        return ReleaseMap(self.name, INPUT_SHAPE, (0.0, 1.0), self.cloak.eval(), sift)

    @classmethod
    def raw_baselines(cls, config: dict) -> dict[str, float]:
        """The target's accuracy on raw images (full MNIST test, plain, with its 95 % Wilson interval; the AMNIST test
        subset, balanced), a deep thickness attacker on raw images: the PUT's two ends; and the imputation attacker
        (:mod:`attacks.audits.imputation`): thickness guessed from the digit the farm's attackers are given (``train_u``), or
        the prior."""
        cfg = cls.typed(config)
        torch.set_num_threads(cfg.threads)
        device = pick_device()
        target = target_for(cfg, device)
        train, test = load_data(cfg, device)
        raw = AttackInput(crop28(train.x), train.thick, crop28(test.x), test.thick, num_classes=2, train_u=train.digit,
                          test_u=test.digit)
        thick = DeepAttacker(cfg).run(raw)
        low, high = wilson_interval(target.mnist_test_accuracy * MNIST_TEST, MNIST_TEST)
        return {
            "baseline/target/mnist_test_accuracy": target.mnist_test_accuracy,
            "baseline/target/mnist_test_accuracy/ci_low": low,
            "baseline/target/mnist_test_accuracy/ci_high": high,
            "baseline/utility/accuracy": balanced_accuracy(predict_logits(target.model, test.x).argmax(1), test.y,
                                                           cfg.num_classes),
            "baseline/attack/deep/accuracy": thick.metrics["accuracy"],
        } | {f"baseline/{k}": v for k, v in ImputationAttacker(cfg).run(raw).logged().items()}

    @classmethod
    def data_counts(cls, config: dict) -> dict[str, int]:
        """Image counts of the data a trial with this config trains and tests on (fails early if no data)."""
        return load_splits(cls.typed(config)).counts

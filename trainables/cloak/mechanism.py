"""Cloak as a Mechanism (docs/mechanisms.md#cloak): learned per-pixel noise over a frozen, pre-trained target classifier.

Per-feature noise r = σ∘e + μ, σ = (1 + tanh ρ)/2 · M, e ~ N(0, I). The first ``epochs − suppression_epochs``
epochs train μ and ρ on L = −log mean_i σ_i² + λ·CE(f(x + r), y) with the mask off; the mask keeps feature i
(b_i = 1) where σ_i < T and suppresses it where σ_i ≥ T. The last ``suppression_epochs`` train the suppression
values μ_s on CE only, with μ, ρ and b fixed. :func:`~trainables.cloak.cloak_map.sift`, x_s = (x + r)∘b + μ_s∘(1 − b),
is the one transform training, evaluation, the attack farm and serving all use (:mod:`trainables.cloak.cloak_map`).
Every epoch reports (:mod:`trainables.cloak.evaluation`) the target's accuracy on sifted test images (mean over noise
draws), the information removed (the per-feature bound, :mod:`trainables.cloak.info`, and the paper's kNN estimate,
:mod:`trainables.cloak.knn_info`), the matched Gaussian noise at equal bound information and at equal accuracy
(:mod:`trainables.cloak.matched_noise`), the fairness gaps and the distortion of the sifted test images
(``utility/squared_error``, ``utility/psnr``). Checkpoint epochs add the paper's own comparison: Cloak's noisy
representation x + r (no suppression) against Gaussian noise at equal kNN information removed.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import ClassVar

import torch

from attacks.attackers.deep import DeepAttacker
from attacks.audits.imputation import ImputationAttacker
from attacks.base import AttackInput, CheckpointInputs, MembershipTarget, ReferenceData
from core.data import load_mnist_test_population
from core.metrics import balanced_accuracy, wilson_interval
from core.reference_models import ClassifierRecipe, reference_cache_dir
from core.training import predict_logits
from trainables.cloak.cloak_map import (
    INPUT_SHAPE,
    CloakMap,
    apply_mask,
    perturbation_epoch,
    release,
    sift,
    suppression_epoch,
)
from trainables.cloak.config import CloakConfig
from trainables.cloak.data import MNIST_TRAIN, data_root, load_task_data, target_for
from trainables.cloak.evaluation import EQUAL_ACC, attack_matched_noise, evaluate_cloak
from trainables.cloak.info import (
    feature_variance,
)
from trainables.cloak.knn_info import KnnInfoMeter, PrincipalAxes
from trainables.cloak.target import (
    MNIST_TEST,
    LeNet5,
    crop28,
    pad32,
    task_labels,
)
from trainables.shared.figures import digit_thickness, save_release_grid
from trainables.shared.image_data import load_splits
from trainables.shared.mechanism import Capability, Mechanism, pick_device
from trainables.shared.release_map import ReleaseMap

NOISE_FIGURE = "noise_map.png"
SIFTED_FIGURE = "sifted.png"


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
        self.train, self.test = load_task_data(self.cfg, self.device)
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
            metrics |= attack_matched_noise(cfg, metrics[f"{EQUAL_ACC}/sigma"], self.train, self.test)
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
        x, digits = load_mnist_test_population(data_root(cfg), n_test=cfg.n_test, seed=cfg.seed, download=cfg.download)
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
    def raw_references(cls, config: dict) -> dict[str, float]:
        """The target's accuracy on raw images (full MNIST test, plain, with its 95 % Wilson interval; the AMNIST test
        subset, balanced), a deep thickness attacker on raw images: the PUT's two ends; and the imputation attacker
        (:mod:`attacks.audits.imputation`): thickness guessed from the digit the farm's attackers are given (``train_u``), or
        the prior."""
        cfg = cls.typed(config)
        torch.set_num_threads(cfg.threads)
        device = pick_device()
        target = target_for(cfg, device)
        train, test = load_task_data(cfg, device)
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

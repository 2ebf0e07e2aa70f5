"""Cloak as a Ray Tune trainable (docs/mechanisms.md#cloak): learned per-pixel noise over a frozen, pre-trained target classifier.

Per-feature noise r = σ∘e + μ, σ = (1 + tanh ρ)/2 · M, e ~ N(0, I). The first ``epochs − suppression_epochs``
epochs train μ and ρ on L = −log mean_i σ_i² + λ·CE(f(x + r), y) with the mask off; the mask keeps feature i
(b_i = 1) where σ_i < T and suppresses it where σ_i ≥ T. The last ``suppression_epochs`` train the suppression
values μ_s on CE only, with μ, ρ and b fixed. :func:`sift` — x_s = (x + r)∘b + μ_s∘(1 − b) — is the one transform
training, evaluation, the attack farm and serving all use. Every epoch reports the target's accuracy on sifted test
images (mean over noise draws), the information removed (:mod:`trainables.cloak_info`), the Gaussian baseline at
equal information and the fairness gaps.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from attacks.base import AttackInput, CheckpointInputs, MembershipTarget, ReferenceData
from attacks.deep import DeepAttacker
from attacks.reference import ClassifierRecipe, reference_cache_dir
from attacks.tuning import AttackBudget
from trainables.cloak_config import CloakConfig
from trainables.cloak_info import (
    feature_variance,
    information_removed,
    matching_gaussian_sigma,
)
from trainables.cloak_target import (
    LeNet5,
    Target,
    TargetSettings,
    crop28,
    load_target,
    pad32,
    task_labels,
)
from core.data import default_data_root, load_amnist, load_mnist_test_population
from trainables.figures import digit_thickness, save_release_grid
from core.metrics import balanced_accuracy, fairness_gaps
from trainables.release_map import ReleaseMap
from core.training import batches, predict_logits
from trainables.tune_loop import report_game

STATE_FILE = "state.pt"
NOISE_FIGURE = "noise_map.png"
SIFTED_FIGURE = "sifted.png"
INPUT_SHAPE = (1, 32, 32)
MNIST_TRAIN = 60_000  # the target's training-set size (all of MNIST's training images)
POLARISED = 0.1  # σ within 10% of M from 0 or from M counts as pushed to an end


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be read back (corrupt, truncated or from another config)."""


class CloakMap(nn.Module):
    """The learned parameters μ, ρ, μ_s (one per input feature) and the keep mask b (a buffer)."""

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


def load_data(cfg: CloakConfig, device: torch.device) -> tuple[Split, Split]:
    """The trial's AMNIST (thin/thick MNIST) train and test subsets at 32×32, moved to ``device`` once."""
    train, test, _ = load_amnist(_root(cfg), n_train=cfg.n_train, n_test=cfg.n_test, seed=cfg.seed, download=cfg.download)
    return tuple(Split(pad32(s.x).to(device), task_labels(s.digit, cfg.task).to(device), s.digit.to(device),
                       s.thick.to(device)) for s in (train, test))


def _root(cfg: CloakConfig) -> Path:
    return Path(cfg.data_root).expanduser().resolve() if cfg.data_root else default_data_root()


def target_for(cfg: CloakConfig, device: torch.device) -> Target:
    """The cached LeNet-5 target of the config's task (trained on first use; fixed seed, shared by all trials)."""
    settings = TargetSettings(cfg.task, cfg.num_classes, cfg.target_epochs, cfg.batch_size, cfg.lr)
    return load_target(_root(cfg), settings, device, cfg.download)


def pick_device() -> torch.device:
    """CUDA when Ray gave this trial a GPU (or one is visible), else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@dataclass
class Trial:
    """A trial's learned map, its two optimisers, the frozen target and the data."""

    cfg: CloakConfig
    cloak: CloakMap
    opt_noise: torch.optim.Optimizer
    opt_supp: torch.optim.Optimizer
    target: Target
    train: Split
    test: Split

    @classmethod
    def build(cls, cfg: CloakConfig, device: torch.device) -> Trial:
        """Fresh μ = 0, ρ = rho_init (σ ≈ 0), μ_s = 0, mask off; target and data on ``device``."""
        cloak = CloakMap(cfg.M, cfg.rho_init).to(device)
        train, test = load_data(cfg, device)
        return cls(cfg, cloak, torch.optim.Adam([cloak.mu, cloak.rho], lr=cfg.cloak_lr),
                   torch.optim.Adam([cloak.mu_s], lr=cfg.cloak_lr), target_for(cfg, device), train, test)

    def state(self) -> dict:
        """Everything needed to resume."""
        return {"cloak": self.cloak.state_dict(), "opt_noise": self.opt_noise.state_dict(),
                "opt_supp": self.opt_supp.state_dict()}

    def load(self, state: dict) -> None:
        """Restore from :meth:`state`."""
        self.cloak.load_state_dict(state["cloak"])
        self.opt_noise.load_state_dict(state["opt_noise"])
        self.opt_supp.load_state_dict(state["opt_supp"])


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


@torch.no_grad()
def evaluate_cloak(cfg: CloakConfig, cloak: CloakMap, target: nn.Module, test: Split, variance: torch.Tensor,
                   ) -> tuple[dict[str, float], torch.Tensor]:
    """Utility, information removed, suppression ratio, Gaussian baseline and fairness on the test split."""
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
    acc_g, _ = _accuracy_over_draws(
        target, lambda x: x + sigma_g * torch.randn(x.shape, generator=gen, device=device), test, n, k)
    polarised = ((sigma < POLARISED * cfg.M) | (sigma > (1 - POLARISED) * cfg.M)).float().mean()
    metrics = {
        "utility/accuracy": acc,
        "utility/accuracy_zero_fill": acc_zero,
        "utility/raw_accuracy": raw_acc,
        "utility/accuracy_loss": raw_acc - acc,
        "leakage/info_removed": removed,
        "leakage/suppression_ratio": float(1 - cloak.keep.mean()),
        "leakage/sigma_mean": float(sigma.mean()),
        "leakage/sigma_polarised": float(polarised),
        "leakage/gaussian_sigma": sigma_g,
        "utility/gaussian_accuracy": acc_g,
        "utility/gaussian_gap": acc - acc_g,
    }
    group = test.thick.repeat(k)
    metrics.update({f"fairness/{key}": v for key, v in fairness_gaps(preds, test.y.repeat(k), group, n).items()})
    metrics.update({f"fairness/raw_{key}": v for key, v in fairness_gaps(raw_pred, test.y, test.thick, n).items()})
    return metrics, sifted


@dataclass
class StepOutcome:
    """What one epoch (a perturbation or a suppression-value epoch) produced: metrics, checkpoint or not, the trial,
    and sifted test images."""

    epoch: int
    checkpoint: bool
    metrics: dict[str, float]
    trial: Trial
    sifted_test: torch.Tensor


def run_cloak(cfg: CloakConfig, device: torch.device, restore: Callable[[Trial], int] | None = None) -> Iterator[StepOutcome]:
    """Perturbation epochs, then suppression-value epochs (``epochs`` in all), one report each; ``restore`` loads a trial, returns steps done.

    Every ``checkpoint_every``-th step (0: none) and the last one checkpoint (the farm attacks those).
    """
    t0 = time.perf_counter()
    trial = Trial.build(cfg, device)
    start = 0 if restore is None else restore(trial)
    gen = torch.Generator(device=device).manual_seed(cfg.seed + start)
    torch.manual_seed(cfg.seed + start)
    variance = feature_variance(trial.train.x)
    cloak, target = trial.cloak, trial.target.model
    setup = time.perf_counter() - t0
    for step in range(start + 1, cfg.epochs + 1):
        t0 = time.perf_counter()
        perturbing = step <= cfg.perturbation_epochs
        for p in (cloak.mu, cloak.rho):
            p.requires_grad_(perturbing)
        cloak.mu_s.requires_grad_(not perturbing)
        if perturbing:
            metrics = perturbation_epoch(cfg, cloak, target, trial.opt_noise, trial.train, gen)
        else:
            metrics = suppression_epoch(cfg, cloak, target, trial.opt_supp, trial.train, gen)
        apply_mask(cloak, cfg.T)
        t1 = time.perf_counter()
        eval_metrics, sifted = evaluate_cloak(cfg, cloak, target, trial.test, variance)
        metrics.update(eval_metrics)
        metrics.update({
            "epoch": step, "train/phase": 1.0 if perturbing else 2.0, "train/resumed_from_epoch": start,
            "time/train_s": t1 - t0, "time/eval_s": time.perf_counter() - t1, "time/setup_s": setup if step == start + 1 else 0.0,
        })
        checkpoint = step == cfg.epochs or (cfg.checkpoint_every > 0 and step % cfg.checkpoint_every == 0)
        yield StepOutcome(step, checkpoint, metrics, trial, sifted)


def save_noise_map(cloak: CloakMap, path: Path, title: str) -> Path:
    """σ (0..M), the keep mask b and the suppression values μ_s side by side, as a PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 2.8))
    FigureCanvasAgg(fig)
    panels = (("σ", cloak.sigma(), 0.0, cloak.max_sigma), ("keep b", cloak.keep, 0.0, 1.0),
              ("μ_s (suppressed)", cloak.mu_s * (1 - cloak.keep), None, None))
    for ax, (name, image, vmin, vmax) in zip(fig.subplots(1, 3), panels):
        shown = ax.imshow(image.detach().squeeze(0).cpu().numpy(), cmap="viridis", vmin=vmin, vmax=vmax)
        fig.colorbar(shown, ax=ax, fraction=0.046)
        ax.set_title(name, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def write_checkpoint(cfg: CloakConfig, outcome: StepOutcome, directory: Path) -> None:
    """State to resume from, the noise map and a few original-vs-sifted test images, into ``directory``."""
    trial = outcome.trial
    torch.save({"trial": trial.state(), "step": outcome.epoch, "config": cfg.as_dict()}, directory / STATE_FILE)
    title = f"λ={cfg.lam:g} T={cfg.T:g} M={cfg.M:g} step {outcome.epoch}"
    save_noise_map(trial.cloak, directory / NOISE_FIGURE, title)
    k = cfg.samples_in_figure
    save_release_grid(trial.test.x[:k], outcome.sifted_test[:k].clamp(0, 1), directory / SIFTED_FIGURE, title,
                      digit_thickness(trial.test.digit[:k], trial.test.thick[:k]))


def load_state(directory: str) -> dict:
    """The checkpoint's state dict, or a one-line CheckpointError."""
    path = Path(directory) / STATE_FILE
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise CheckpointError(f"cannot restore checkpoint {path}: {type(exc).__name__}: {exc}".splitlines()[0]) from exc


def load_cloak(cfg: CloakConfig, directory: str, device: torch.device) -> tuple[CloakMap, int]:
    """The checkpoint's learned map (on ``device``) and its step."""
    blob = load_state(directory)
    cloak = CloakMap(cfg.M, cfg.rho_init)
    try:
        cloak.load_state_dict(blob["trial"]["cloak"])
        step = int(blob["step"])
    except Exception as exc:
        raise CheckpointError(f"cannot restore checkpoint {directory}: {type(exc).__name__}: {exc}".splitlines()[0]) from exc
    return cloak.to(device).eval(), step


def load_trial(directory: str, trial: Trial) -> int:
    """Load a checkpoint into ``trial``; return the steps already done (a one-line CheckpointError if unreadable)."""
    blob = load_state(directory)
    try:
        trial.load(blob["trial"])
        return int(blob["step"])
    except Exception as exc:
        raise CheckpointError(f"cannot restore checkpoint {directory}: {type(exc).__name__}: {exc}".splitlines()[0]) from exc


def train_cloak(config: dict) -> None:
    """Ray Tune function trainable: reports every step, checkpoints as configured, resumes from the last checkpoint."""
    cfg = CloakConfig.from_dict(config)
    torch.set_num_threads(cfg.threads)
    report_game(lambda restore: run_cloak(cfg, pick_device(), restore), load_trial,
                lambda outcome, directory: write_checkpoint(cfg, outcome, directory))


def checkpoint_inputs(config: dict, checkpoint_dir: str) -> CheckpointInputs:
    """Sifted AMNIST splits cropped to 28×28 (thickness as S, digits as U, raw images) and the target for Yeom."""
    cfg = CloakConfig.from_dict(config)
    torch.set_num_threads(cfg.threads)
    device = pick_device()
    cloak, step = load_cloak(cfg, checkpoint_dir, device)
    train, test = load_data(cfg, device)
    gen = torch.Generator(device=device).manual_seed(cfg.seed + 1000 + step)
    sifted_train, sifted_test = release(cloak, train.x, gen), release(cloak, test.x, gen)
    data = AttackInput(crop28(sifted_train), train.thick, crop28(sifted_test), test.thick, num_classes=2,
                       train_u=train.digit, test_u=test.digit, raw_train_x=crop28(train.x))
    # The target was trained on all 60,000 MNIST training images, so the AMNIST training split is all members.
    target = MembershipTarget("target", target_for(cfg, device).model, sifted_train, train.y, sifted_test, test.y,
                              target_reference(cfg, cloak, step, device, checkpoint_dir))
    return CheckpointInputs(data, (target,))


def target_reference(cfg: CloakConfig, cloak: CloakMap, step: int, device: torch.device, checkpoint_dir: str) -> ReferenceData:
    """Reference data for the target: LeNet-5 trained on raw MNIST test images outside the trial's test subset (the
    only images it never saw), the target's way; queried on their sifted versions. Shared by every checkpoint."""
    x, digits = load_mnist_test_population(_root(cfg), n_test=cfg.n_test, seed=cfg.seed, download=cfg.download)
    x = pad32(x).to(device)
    gen = torch.Generator(device=device).manual_seed(cfg.seed + 2000 + step)
    recipe = ClassifierRecipe(partial(LeNet5, cfg.num_classes), cfg.target_epochs, cfg.batch_size, cfg.lr)
    return ReferenceData(recipe, x, task_labels(digits, cfg.task).to(device), release(cloak, x, gen), train_size=MNIST_TRAIN,
                         cache_dir=reference_cache_dir(checkpoint_dir, per_checkpoint=False))


def load_release(config: dict, checkpoint_dir: str) -> ReleaseMap:
    """The checkpoint's Cloak as a served map: 1×32×32 images in [0, 1] to sifted images."""
    cfg = CloakConfig.from_dict(config)
    cloak, _ = load_cloak(cfg, checkpoint_dir, torch.device("cpu"))
    return ReleaseMap("cloak", INPUT_SHAPE, (0.0, 1.0), cloak, sift)


def raw_baselines(config: dict) -> dict[str, float]:
    """The target's accuracy on raw images (full MNIST test, plain; the AMNIST test subset, balanced) and a deep
    thickness attacker on raw images: the PUT's two ends."""
    cfg = CloakConfig.from_dict(config)
    torch.set_num_threads(cfg.threads)
    device = pick_device()
    target = target_for(cfg, device)
    train, test = load_data(cfg, device)
    attacker = DeepAttacker(AttackBudget.from_config(cfg.as_dict()))
    thick = attacker.run(AttackInput(crop28(train.x), train.thick, crop28(test.x), test.thick, num_classes=2))
    return {
        "baseline/target/mnist_test_accuracy": target.mnist_test_accuracy,
        "baseline/utility/accuracy": balanced_accuracy(predict_logits(target.model, test.x).argmax(1), test.y, cfg.num_classes),
        "baseline/attack/deep/accuracy": thick.metrics["accuracy"],
    }


def data_counts(config: dict) -> dict[str, int]:
    """Image counts of the data a trial with this config trains and tests on (fails early if no data)."""
    cfg = CloakConfig.from_dict(config)
    _, _, counts = load_amnist(_root(cfg), n_train=cfg.n_train, n_test=cfg.n_test, seed=cfg.seed, download=cfg.download)
    return counts

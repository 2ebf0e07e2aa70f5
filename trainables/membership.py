"""Membership leakage of L2 logistic regression on Adult as a Ray Tune trainable (docs/mechanisms.md#membership-models).

One point = one configuration (n, λ, p_x, σ): PCA Adult to p_x features, train on n members drawn
from the training file, then measure utility (balanced test accuracy), Yeom's loss-threshold attack
(members vs as many held-out non-members) and the KL leakage ρ_KL from Monte-Carlo retrainings.
A point takes seconds, so it reports once; its checkpoint is the model, for the farm's RMIA and LiRA. Worker-side code: never imports
``platform.*``.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from torch import nn

from attacks.base import AttackInput, CheckpointInputs, MembershipTarget, ReferenceData
from attacks.kl_leakage import KlLeakage, fit_logistic, monte_carlo_kl_leakage
from attacks.membership import YeomAttacker
from attacks.reference import reference_cache_dir
from core.data.adult import AdultData, load_adult, pca, project
from trainables.membership_config import MembershipConfig
from core.metrics import balanced_accuracy

STATE_FILE = "model.pt"


@lru_cache(maxsize=4)
def _adult_with_axes(data_root: str) -> tuple[AdultData, np.ndarray, np.ndarray]:
    """Adult and all its training-file principal axes, once per process (the SVD dominates a cheap point)."""
    data = load_adult(data_root or None)
    mean, components = pca(data.train_x, data.train_x.shape[1])
    return data, mean, components


def member_split(cfg: MembershipConfig, pool: int) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint member and non-member row indices into the training file, drawn by the config's seed."""
    if 2 * cfg.n > pool:
        raise ValueError(f"n={cfg.n} members plus as many non-members exceed the {pool} Adult training rows")
    order = np.random.default_rng(cfg.seed).permutation(pool)
    return order[:cfg.n], order[cfg.n:2 * cfg.n]


def logistic_losses(theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-sample log-loss of the linear model ``theta`` = [w, b]: Yeom's membership signal."""
    logits = x @ theta[:-1] + theta[-1]
    return np.logaddexp(0.0, np.where(y == 1, -logits, logits))


def _predict(theta: np.ndarray, x: np.ndarray) -> torch.Tensor:
    """Class predictions (logit > 0) as the int64 tensor balanced_accuracy takes."""
    return torch.from_numpy((x @ theta[:-1] + theta[-1] > 0).astype(np.int64))


@dataclass(frozen=True)
class PointData:
    """A point's PCA-projected Adult rows and its disjoint member / non-member indices into the training file."""

    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    members: np.ndarray
    nonmembers: np.ndarray


def point_data(cfg: MembershipConfig) -> PointData:
    """Project Adult to the config's p_x principal axes and draw its members and non-members."""
    data, mean, axes = _adult_with_axes(cfg.data_root)
    if cfg.p_x > axes.shape[0]:
        raise ValueError(f"p_x={cfg.p_x} exceeds the {axes.shape[0]} Adult features")
    components = axes[:cfg.p_x]
    train_x, test_x = project(data.train_x, mean, components), project(data.test_x, mean, components)
    members, nonmembers = member_split(cfg, len(train_x))
    return PointData(train_x, data.train_y, test_x, data.test_y, members, nonmembers)


def evaluate_point(cfg: MembershipConfig) -> dict[str, float]:
    """Train one logistic model and measure its utility, Yeom attack and KL leakage (metric name -> value)."""
    return evaluate_model(cfg)[0]


def evaluate_model(cfg: MembershipConfig) -> tuple[dict[str, float], np.ndarray]:
    """:func:`evaluate_point`'s metrics and the trained model's parameters θ = [w, b]."""
    t0 = time.perf_counter()
    d = point_data(cfg)
    x, y = d.train_x[d.members], d.train_y[d.members]

    def fit(fx: np.ndarray, fy: np.ndarray, seed: int) -> np.ndarray:
        return fit_logistic(fx, fy, seed, cfg.lam, cfg.sigma, cfg.gd_steps)

    theta = fit(x, y, cfg.seed)
    metrics = {
        "utility/accuracy": balanced_accuracy(_predict(theta, d.test_x), torch.tensor(d.test_y), 2),
        "train/accuracy": float(np.mean(_predict(theta, x).numpy() == y)),
    }
    attack = YeomAttacker(seed=cfg.seed, figure=False).run_on_losses(
        torch.from_numpy(logistic_losses(theta, x, y)),
        torch.from_numpy(logistic_losses(theta, d.train_x[d.nonmembers], d.train_y[d.nonmembers])), target="logistic",
    )
    metrics.update({f"attack/yeom/{k}": v for k, v in attack.metrics.items()
                    if k.split("/")[0] in ("advantage", "auc", "advantage_max", "tpr_at_1pct_fpr", "tpr_at_1pct_fpr_measurable")})

    rng = np.random.default_rng([cfg.seed, 1])
    records = rng.choice(cfg.n, size=cfg.kl_records, replace=False)
    seeds = rng.integers(2**31, size=cfg.kl_records)
    rho = np.mean([monte_carlo_kl_leakage(fit, x, y, int(r), cfg.mc_runs, seed=int(s)).rho_kl
                   for r, s in zip(records, seeds)])
    metrics.update(KlLeakage.from_rho(float(rho), cfg.mc_runs).logged())
    metrics["time/eval_s"] = time.perf_counter() - t0
    return metrics, theta


def train_membership(config: dict) -> None:
    """Ray Tune function trainable: one evaluation, reported once with the model as its checkpoint (for the farm)."""
    from ray import tune  # only here: evaluate_point runs without Ray (e.g. benchmarks/bench_gpu.py)

    cfg = MembershipConfig.from_dict(config)
    torch.set_num_threads(cfg.threads)
    metrics, theta = evaluate_model(cfg)
    with tempfile.TemporaryDirectory() as directory:
        torch.save({"theta": torch.from_numpy(theta)}, Path(directory) / STATE_FILE)
        tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(directory))


class LogisticNet(nn.Module):
    """The linear model θ = [w, b] as a two-class network: logits (0, x·w + b), so softmax gives its probabilities."""

    def __init__(self, p: int) -> None:
        super().__init__()
        self.theta = nn.Parameter(torch.zeros(p + 1, dtype=torch.float64), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = x.to(torch.float64) @ self.theta[:-1] + self.theta[-1]
        return torch.stack([torch.zeros_like(z), z], dim=1)


@dataclass(frozen=True)
class LogisticRecipe:
    """Train a fresh logistic model as a point does (fit_logistic with its λ, σ and steps): reference models."""

    p: int
    lam: float
    sigma: float
    gd_steps: int

    def build(self) -> LogisticNet:
        """An untrained model (θ = 0)."""
        return LogisticNet(self.p)

    def __call__(self, x: torch.Tensor, y: torch.Tensor, seed: int) -> LogisticNet:
        """The model fitted to (x, y), with its output noise drawn from ``seed``."""
        model = self.build()
        theta = fit_logistic(x.cpu().numpy(), y.cpu().numpy(), seed, self.lam, self.sigma, self.gd_steps)
        model.theta.data = torch.from_numpy(theta)
        return model.eval()


def checkpoint_inputs(config: dict, checkpoint_dir: str) -> CheckpointInputs:
    """The farm's view of a point: the logistic model, its members and non-members, and a population for references.

    The population is every training-file row that is neither a member nor an audited non-member.
    """
    cfg = MembershipConfig.from_dict(config)
    torch.set_num_threads(cfg.threads)
    d = point_data(cfg)
    model = LogisticNet(cfg.p_x)
    model.theta.data = torch.load(Path(checkpoint_dir) / STATE_FILE, map_location="cpu", weights_only=True)["theta"]
    rest = np.ones(len(d.train_x), dtype=bool)
    rest[d.members] = rest[d.nonmembers] = False

    def rows(index: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.from_numpy(d.train_x[index]), torch.from_numpy(d.train_y[index])

    reference = ReferenceData(LogisticRecipe(cfg.p_x, cfg.lam, cfg.sigma, cfg.gd_steps), *rows(np.flatnonzero(rest)),
                              cache_dir=reference_cache_dir(checkpoint_dir, per_checkpoint=False))
    target = MembershipTarget("logistic", model.eval(), *rows(d.members), *rows(d.nonmembers), reference)
    empty = torch.zeros(0)
    return CheckpointInputs(AttackInput(empty, empty, empty, empty, num_classes=2), (target,))


def data_counts(config: dict) -> dict[str, int]:
    """Adult row counts and the member / non-member sizes of this config (raises early if no data or too large n)."""
    cfg = MembershipConfig.from_dict(config)
    data = load_adult(cfg.data_root or None)
    member_split(cfg, len(data.train_x))
    return {"adult_train": len(data.train_x), "adult_test": len(data.test_x), "adult_dropped": data.n_dropped,
            "members": cfg.n, "nonmembers": cfg.n}

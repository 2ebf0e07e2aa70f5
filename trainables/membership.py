"""Membership leakage of L2 logistic regression on Adult as a Ray Tune trainable (DESIGN.md §4, the seed).

One point = one configuration (n, λ, p_x, σ): PCA Adult to p_x features, train on n members drawn
from the training file, then measure utility (balanced test accuracy), Yeom's loss-threshold attack
(members vs as many held-out non-members) and the KL leakage ρ_KL from Monte-Carlo retrainings.
A point takes seconds, so it reports once and keeps no checkpoint. Worker-side code: never imports
``platform.*``.
"""
from __future__ import annotations

import time
from functools import lru_cache

import numpy as np
import torch

from attacks.kl_leakage import KlLeakage, fit_logistic, monte_carlo_kl_leakage
from attacks.membership import YeomAttacker
from trainables.data.adult import AdultData, load_adult, pca, project
from trainables.membership_config import MembershipConfig
from trainables.metrics import balanced_accuracy


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


def evaluate_point(cfg: MembershipConfig) -> dict[str, float]:
    """Train one logistic model and measure its utility, Yeom attack and KL leakage (metric name -> value)."""
    t0 = time.perf_counter()
    data, mean, axes = _adult_with_axes(cfg.data_root)
    if cfg.p_x > axes.shape[0]:
        raise ValueError(f"p_x={cfg.p_x} exceeds the {axes.shape[0]} Adult features")
    components = axes[:cfg.p_x]
    train_x, test_x = project(data.train_x, mean, components), project(data.test_x, mean, components)
    members, nonmembers = member_split(cfg, len(train_x))
    x, y = train_x[members], data.train_y[members]

    def fit(fx: np.ndarray, fy: np.ndarray, seed: int) -> np.ndarray:
        return fit_logistic(fx, fy, seed, cfg.lam, cfg.sigma, cfg.gd_steps)

    theta = fit(x, y, cfg.seed)
    metrics = {
        "utility/accuracy": balanced_accuracy(_predict(theta, test_x), torch.tensor(data.test_y), 2),
        "train/accuracy": float(np.mean(_predict(theta, x).numpy() == y)),
    }
    attack = YeomAttacker(seed=cfg.seed, figure=False).run_on_losses(
        torch.from_numpy(logistic_losses(theta, x, y)),
        torch.from_numpy(logistic_losses(theta, train_x[nonmembers], data.train_y[nonmembers])),
    )
    metrics.update({f"attack/yeom/{k}": attack.metrics[k] for k in ("advantage", "auc", "advantage_max", "tpr_at_1pct_fpr")})

    rng = np.random.default_rng([cfg.seed, 1])
    records = rng.choice(cfg.n, size=cfg.kl_records, replace=False)
    seeds = rng.integers(2**31, size=cfg.kl_records)
    rho = np.mean([monte_carlo_kl_leakage(fit, x, y, int(r), cfg.mc_runs, seed=int(s)).rho_kl
                   for r, s in zip(records, seeds)])
    metrics.update(KlLeakage.from_rho(float(rho), cfg.mc_runs).logged())
    metrics["time/eval_s"] = time.perf_counter() - t0
    return metrics


def train_membership(config: dict) -> None:
    """Ray Tune function trainable: one evaluation, reported once (no checkpoint: it is cheap to recompute)."""
    from ray import tune  # only here: evaluate_point runs without Ray (e.g. benchmarks/bench_gpu.py)

    cfg = MembershipConfig.from_dict(config)
    torch.set_num_threads(cfg.threads)
    tune.report(evaluate_point(cfg))


def data_counts(config: dict) -> dict[str, int]:
    """Adult row counts and the member / non-member sizes of this config (raises early if no data or too large n)."""
    cfg = MembershipConfig.from_dict(config)
    data = load_adult(cfg.data_root or None)
    member_split(cfg, len(data.train_x))
    return {"adult_train": len(data.train_x), "adult_test": len(data.test_x), "adult_dropped": data.n_dropped,
            "members": cfg.n, "nonmembers": cfg.n}

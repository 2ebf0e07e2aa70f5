"""Membership metrics with 95 % bootstrap intervals, shared by every membership attacker.

Convention: a score is "higher = member"; an attacker flags "member iff score >= threshold". The
metrics are computed on a balanced draw (as many non-members as members, at most ``max_samples``
each), and every metric gets a percentile-bootstrap interval that resamples members and
non-members separately (vectorised, fixed seed). A TPR at a false-positive rate f is only
measurable when the draw has at least 1/f non-members (:func:`measurable`, the one place the rule
lives): otherwise it is omitted (never reported as 0) and ``<metric>_measurable`` is 0.
"""
from __future__ import annotations

import numpy as np
import torch

# TPR at these false-positive rates: 1 %, 0.1 %, 0.01 % and 0 % (the threshold above every non-member's score).
LOW_FPRS = {"tpr_at_1pct_fpr": 0.01, "tpr_at_0.1pct_fpr": 0.001, "tpr_at_0.01pct_fpr": 0.0001, "tpr_at_0pct_fpr": 0.0}
CELLS_PER_CHUNK = 4_000_000  # bootstrap replicates x samples held in memory at once


def require_finite(values: np.ndarray | torch.Tensor, target: str, what: str) -> np.ndarray:
    """``values`` as float64 numpy, or ValueError naming the target when any is NaN or infinite."""
    array = torch.as_tensor(values).detach().double().cpu().numpy().ravel()
    bad = int(np.count_nonzero(~np.isfinite(array)))
    if bad:
        raise ValueError(f"membership target {target!r}: {bad} non-finite {what} (NaN or inf); the network diverged")
    return array


def balanced_draw(members: np.ndarray, nonmembers: np.ndarray, seed: int,
                  max_samples: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """As many members as non-members (at most ``max_samples`` each), drawn without replacement by ``seed``."""
    n = min(len(members), len(nonmembers), max_samples if max_samples is not None else len(members))
    if n == 0:
        raise ValueError("membership attack needs at least one member and one non-member")
    gen = torch.Generator().manual_seed(seed)
    pick_m = torch.randperm(len(members), generator=gen)[:n].numpy()
    pick_n = torch.randperm(len(nonmembers), generator=gen)[:n].numpy()
    return members[pick_m], nonmembers[pick_n]


def measurable(n_nonmembers: int, fpr: float) -> bool:
    """A TPR at ``fpr`` > 0 means something only when one false positive is at most ``fpr`` of the non-members:
    n·f ≥ 1. At ``fpr`` = 0 (no false positive at all) it is always measured, from any number of non-members, and
    is the noisiest of them: it rests on the single highest non-member score."""
    return fpr == 0 or n_nonmembers * fpr >= 1 - 1e-9


def _batch_stats(members: np.ndarray, nonmembers: np.ndarray, threshold: float | None) -> dict[str, np.ndarray]:
    """Per-row metrics of [B, n1] member and [B, n0] non-member score matrices (one row = one replicate)."""
    from scipy.stats import rankdata  # here: importing scipy.stats costs a second in every process that loads presets

    n1, n0 = members.shape[1], nonmembers.shape[1]
    scores = np.concatenate([members, nonmembers], axis=1)
    ranks = rankdata(scores, axis=1, method="average")[:, :n1]  # ties count one half, as the trapezoid AUC
    out = {"auc": (ranks.sum(1) - n1 * (n1 + 1) / 2) / (n1 * n0)}
    # TPR at FPR <= f: with k = floor(f * n0) false positives allowed, the threshold must sit strictly
    # above the (k+1)-th largest non-member score v, so TPR = share of members with score > v (f = 0: v is
    # the largest non-member score).
    desc = -np.sort(-nonmembers, axis=1)
    for name, f in LOW_FPRS.items():
        k = int(np.floor(f * n0 + 1e-9))
        out[name] = np.ones(len(members)) if k >= n0 else (members > desc[:, k:k + 1]).mean(1)
    # Best TPR - FPR over thresholds: evaluate at the last position of each run of tied scores.
    order = np.argsort(-scores, axis=1, kind="stable")
    sorted_scores = np.take_along_axis(scores, order, axis=1)
    is_member = order < n1
    gap = np.cumsum(is_member, axis=1) / n1 - np.cumsum(~is_member, axis=1) / n0
    last = np.concatenate([np.diff(sorted_scores, axis=1) != 0, np.ones((len(scores), 1), bool)], axis=1)
    out["advantage_max"] = np.maximum(np.where(last, gap, -np.inf).max(1), 0.0)
    if threshold is not None:
        out["advantage"] = (members > threshold).mean(1) - (nonmembers > threshold).mean(1)
    return out


def membership_metrics(members: np.ndarray, nonmembers: np.ndarray, *, seed: int = 0, n_boot: int = 500,
                       threshold: float | None = None) -> dict[str, float]:
    """Point estimates on the given scores plus ``<metric>/ci_low`` and ``<metric>/ci_high`` (95 % bootstrap).

    ``threshold``: also the signed advantage TPR - FPR of "member iff score > threshold".
    Unmeasurable low-FPR TPRs are left out and flagged with ``<metric>_measurable = 0``.
    """
    members, nonmembers = np.asarray(members, float), np.asarray(nonmembers, float)
    point = {k: float(v[0]) for k, v in _batch_stats(members[None], nonmembers[None], threshold).items()}
    rng = np.random.default_rng(seed)
    chunk = max(1, CELLS_PER_CHUNK // (len(members) + len(nonmembers)))
    replicates: dict[str, list[np.ndarray]] = {k: [] for k in point}
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        stats = _batch_stats(members[rng.integers(len(members), size=(b, len(members)))],
                             nonmembers[rng.integers(len(nonmembers), size=(b, len(nonmembers)))], threshold)
        for k, v in stats.items():
            replicates[k].append(v)
    metrics: dict[str, float] = {}
    for name, value in point.items():
        if name in LOW_FPRS:
            ok = measurable(len(nonmembers), LOW_FPRS[name])
            metrics[f"{name}_measurable"] = float(ok)
            if not ok:
                continue
        low, high = np.percentile(np.concatenate(replicates[name]), [2.5, 97.5]) if n_boot else (value, value)
        metrics.update({name: value, f"{name}/ci_low": float(low), f"{name}/ci_high": float(high)})
    return metrics

"""Evaluation metrics shared by trainables and attackers."""
from __future__ import annotations

import torch


def balanced_accuracy(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> float:
    """Mean per-class recall over the classes present in ``target`` (chance = 1/#classes)."""
    counts = torch.bincount(target, minlength=num_classes).double()
    hits = torch.bincount(target[pred == target], minlength=num_classes).double()
    present = counts > 0
    return float((hits[present] / counts[present]).mean())


def fairness_gaps(pred: torch.Tensor, target: torch.Tensor, group: torch.Tensor, num_classes: int) -> dict[str, float]:
    """ΔDemP and ΔEO of predictions between two groups (0 and 1), as Cloak's paper scores them.

    demp_gap = max_c |P(ŷ=c | g=0) − P(ŷ=c | g=1)|; eo_gap = Σ_y |P(ŷ=y | y, g=0) − P(ŷ=y | y, g=1)|, the per-class
    true-rate gaps summed (for two classes: the TPR gap plus the TNR gap). Labels y absent from a group are skipped.
    """
    onehot = torch.nn.functional.one_hot(pred.long(), num_classes).double()

    def rates(mask: torch.Tensor) -> torch.Tensor:
        return onehot[mask].mean(0)

    demp = float((rates(group == 0) - rates(group == 1)).abs().max())
    eo = 0.0
    for y in range(num_classes):
        a, b = (target == y) & (group == 0), (target == y) & (group == 1)
        if a.any() and b.any():
            eo += abs(float(rates(a)[y] - rates(b)[y]))
    return {"demp_gap": demp, "eo_gap": eo}


Z95 = 1.959963984540054  # standard normal quantile of 0.975: two-sided 95 %


def wilson_interval(successes: float, trials: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (successes may be fractional: an effective count)."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * ((p * (1 - p) / trials + z * z / (4 * trials * trials)) ** 0.5) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def balanced_accuracy_interval(pred: torch.Tensor, target: torch.Tensor, num_classes: int,
                               z: float = Z95) -> tuple[float, float]:
    """95 % interval of balanced accuracy: Wilson's interval at the effective sample size.

    Balanced accuracy is the mean of per-class recalls r_c over n_c test samples each; its variance is
    Σ_c r_c(1−r_c)/n_c / C². The effective size n_eff = BA(1−BA)/variance turns it into a binomial of the
    same variance, whose Wilson interval is exact in coverage for one class (or equal classes and recalls)
    and stays inside [0, 1] near perfect accuracy. When every recall is 0 or 1 the variance is 0; then
    n_eff falls back to the harmonic-mean class size scaled by C, which is what Wilson gives for equal classes.
    """
    pred, target = pred.flatten(), target.flatten()
    counts = torch.bincount(target, minlength=num_classes).double()
    hits = torch.bincount(target[pred == target], minlength=num_classes).double()
    present = counts > 0
    recall, n = hits[present] / counts[present], counts[present]
    classes = int(present.sum())
    ba = float(recall.mean())
    variance = float((recall * (1 - recall) / n).sum()) / classes**2
    n_eff = ba * (1 - ba) / variance if variance > 0 and 0 < ba < 1 else classes**2 / float((1 / n).sum())
    return wilson_interval(ba * n_eff, n_eff, z)


def accuracy_metrics(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> dict[str, float]:
    """Balanced accuracy with its 95 % interval; per-step labels [N, T] also get ``accuracy_within_step``.

    ``accuracy_within_step`` is the mean over steps of each step's own balanced accuracy: chance is
    1/classes at every step, whatever the step's prior (e.g. occupancy by hour of the day). For per-step
    labels the interval treats the N·T labels as independent, so it is narrower than the truth.
    """
    low, high = balanced_accuracy_interval(pred, target, num_classes)
    metrics = {"accuracy": balanced_accuracy(pred.flatten(), target.flatten(), num_classes),
               "accuracy/ci_low": low, "accuracy/ci_high": high}
    if target.dim() == 2:
        steps = [balanced_accuracy(pred[:, t], target[:, t], num_classes) for t in range(target.shape[1])]
        metrics["accuracy_within_step"] = sum(steps) / len(steps)
    return metrics

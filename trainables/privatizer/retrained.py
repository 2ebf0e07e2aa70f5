"""The privatizer's secret term read by a freshly retrained estimator: what a new adversary's P(s|q) sees in a release.

The in-game η co-adapts with the privatizer, so its mean log P_η(s|q)/P(s) can fall because η is fooled rather than
because thickness is hidden. A classifier trained from scratch on the released training split (early-stopped on a
validation split of it, like the farm's deep attacker) gives the same quantity for an adversary that did not play the
game: mean log P(s|q)/P(s) on the released test split, a variational lower bound on I(S;Q) in nats.
"""
from __future__ import annotations

import copy
import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from core.config import AttackBudget
from core.metrics import balanced_accuracy
from core.nets import SmallCNN, Standardized
from core.training import batches, predict_logits, validation_split

MIN_DELTA = 1e-4  # a validation log-loss gain smaller than this does not reset patience


def _nll(logits: Tensor, labels: Tensor) -> float:
    """Mean negative log-likelihood (nats) of ``labels`` under ``logits``."""
    return float(F.cross_entropy(logits, labels))


def fit_temperature(logits: Tensor, labels: Tensor) -> float:
    """The softmax temperature T > 0 minimising the log-loss of ``logits / T`` on (held-out) ``labels``.

    Early stopping on log-loss still leaves a network over- or under-confident; one scalar fitted on validation data
    calibrates it without changing its predictions (T is searched on a log grid, then refined by golden section).
    """
    grid = torch.logspace(-2, 2, 41).tolist()
    best = min(grid, key=lambda t: _nll(logits / t, labels))
    lo, hi = math.log(best) - 0.12, math.log(best) + 0.12
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(30):
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if _nll(logits / math.exp(a), labels) < _nll(logits / math.exp(b), labels):
            hi = b
        else:
            lo = a
    return math.exp((lo + hi) / 2)


def fit_secret_estimator(x: Tensor, s: Tensor, num_classes: int, budget: AttackBudget,
                         width: int = 16, lr: float = 1e-3) -> tuple[nn.Module, float, int]:
    """A fresh standardised SmallCNN fitted on (x, s) with cross-entropy, early-stopped on the validation log-loss.

    Returns the best-validation network, its calibrating temperature (fitted on the same validation split) and the
    epochs it ran. Nothing outside (x, s) is read.
    """
    train_idx, val_idx = (i.to(x.device) for i in validation_split(len(x), budget.attack_val_fraction, budget.seed))
    (xt, st), (xv, sv) = (x[train_idx], s[train_idx]), (x[val_idx], s[val_idx])
    channels, height, width_px = x.shape[1:]  # images [N, C, H, W]
    torch.manual_seed(budget.seed)
    model = Standardized(SmallCNN(num_classes, width, in_shape=(channels, height, width_px)), *Standardized.statistics(xt))
    model = model.to(x.device)
    gen = torch.Generator(device=x.device).manual_seed(budget.seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    best, best_epoch, best_state, epoch = math.inf, 0, copy.deepcopy(model.state_dict()), 0
    while epoch < budget.attack_epochs and epoch - best_epoch < budget.attack_patience:
        model.train()
        for idx in batches(len(xt), budget.attack_batch_size, gen, x.device):
            loss = F.cross_entropy(model(xt[idx]), st[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        epoch += 1
        score = _nll(predict_logits(model, xv), sv)
        if score < best - MIN_DELTA:
            best, best_epoch, best_state = score, epoch, copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    model.eval()
    return model, fit_temperature(predict_logits(model, xv), sv), epoch


def retrained_secret_term(train_q: Tensor, train_s: Tensor, test_q: Tensor, test_s: Tensor, num_classes: int,
                          budget: AttackBudget, width: int = 16) -> dict[str, float]:
    """Mean log P(s|q)/P(s) (nats) and balanced accuracy on the released test split of a secret estimator retrained
    on the released training split; P(s) is the training split's class frequency."""
    model, temperature, epochs = fit_secret_estimator(train_q, train_s, num_classes, budget, width)
    prior = torch.bincount(train_s, minlength=num_classes).double().clamp_min(0.5) / len(train_s)
    logits = predict_logits(model, test_q).double() / temperature
    picked = logits.log_softmax(1).gather(1, test_s[:, None]).squeeze(1)
    term = float((picked - prior.log().to(picked.device)[test_s]).mean())
    accuracy = balanced_accuracy(logits.argmax(1), test_s, num_classes)
    return {"leakage/retrained_secret_term": term, "leakage/retrained_secret_accuracy": accuracy,
            "leakage/retrained_secret_epochs": float(epochs), "leakage/retrained_secret_temperature": temperature}

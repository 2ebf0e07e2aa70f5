"""Cloak's learned release, the one transform training, evaluation, the attack farm and serving use:
x_s = (x + r)∘b + μ_s∘(1 − b), r = σ∘e + μ, σ = (1 + tanh ρ)/2 · M (:func:`sift`), and its two training phases (the
noise on −log mean σ² + λ·CE with the mask off, then the suppression values on CE alone).
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from core.training import batches
from trainables.cloak.config import CloakConfig
from trainables.cloak.data import TaskSplit

INPUT_SHAPE = (1, 32, 32)


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


def perturbation_epoch(cfg: CloakConfig, cloak: CloakMap, target: nn.Module, opt: torch.optim.Optimizer, train: TaskSplit,
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


def suppression_epoch(cfg: CloakConfig, cloak: CloakMap, target: nn.Module, opt: torch.optim.Optimizer, train: TaskSplit,
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

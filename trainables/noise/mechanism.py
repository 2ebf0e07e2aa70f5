"""The plain Gaussian-noise baseline: Y = clip(X + σ·N(0, I), 0, 1), nothing learned (docs/mechanisms.md#gaussian-noise-baseline).

Any image mechanism should beat it: at the utility and distortion it keeps, its strongest attacker should read less
of S than the same attackers read from noisy images. Its one "epoch" only scores the release
(:class:`~trainables.shared.image_release.FixedRelease`): the utility is a freshly trained, tuned and early-stopped classifier
of U on the noisy training split, scored on the noisy test split (what a data user would bring), and the privacy is
what the attack farm's attackers read from the same release.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from trainables.noise.config import NoiseConfig
from trainables.shared.image_release import FixedRelease


class GaussianNoise(nn.Module):
    """Y = clip(X + σ·Z, 0, 1), Z ~ N(0, I) from the given generator; σ is a fixed (untrained) parameter."""

    def __init__(self, sigma: float) -> None:
        super().__init__()
        self.sigma = nn.Parameter(torch.tensor(float(sigma)), requires_grad=False)  # a parameter: it moves with .to()

    def forward(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        noise = torch.randn(x.shape, generator=generator, device=x.device)
        return (x + self.sigma * noise).clamp(0.0, 1.0)


class NoiseBaseline(FixedRelease):
    """Gaussian noise of a fixed σ on the config's image set, scored like the learned image mechanisms."""

    name = "noise"
    config_class = NoiseConfig
    trainable_name = "train_noise"
    cfg: NoiseConfig

    @property
    def net(self) -> GaussianNoise:
        return self.noise

    def build(self) -> None:
        self.noise = GaussianNoise(self.cfg.sigma).to(self.device)

    def train_epoch(self) -> dict[str, float]:
        """Nothing to train; the noise level, for the record."""
        return {"train/sigma": self.cfg.sigma}

    def state(self) -> dict:
        return {"noise": self.noise.state_dict()}

    def load_state(self, state: dict) -> None:
        self.noise.load_state_dict(state["noise"])
        if not math.isclose(self.noise.sigma.item(), self.cfg.sigma, rel_tol=1e-6, abs_tol=1e-9):
            raise ValueError(f"the checkpoint holds σ = {self.noise.sigma.item():g}, the config σ = {self.cfg.sigma:g}")

    def figure_title(self, epoch: int) -> str:
        return f"Gaussian noise σ={self.cfg.sigma:g}"

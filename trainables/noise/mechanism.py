"""The plain Gaussian-noise baseline: Y = clip(X + σ·N(0, I), 0, 1), nothing learned (docs/mechanisms.md#gaussian-noise-baseline).

Any image mechanism should beat it: at the utility it keeps, its strongest attacker should read less of S than the
same attackers read from noisy images. Its one "epoch" only scores the release: the utility is a freshly trained,
tuned and early-stopped classifier of U on the noisy training split, scored on the noisy test split (what a data
user would bring), and the privacy is what the attack farm's attackers read from the same release.
"""
from __future__ import annotations

import math
import time

import torch
from torch import nn
from torch.nn import functional as F

from attacks.base import AttackInput, CheckpointInputs
from attacks.deep import DeepAttacker
from trainables.image_game import ImageGame
from trainables.noise.config import NoiseConfig
from trainables.release_map import release


class GaussianNoise(nn.Module):
    """Y = clip(X + σ·Z, 0, 1), Z ~ N(0, I) from the given generator; σ is a fixed (untrained) parameter."""

    def __init__(self, sigma: float) -> None:
        super().__init__()
        self.sigma = nn.Parameter(torch.tensor(float(sigma)), requires_grad=False)  # a parameter: it moves with .to()

    def forward(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        noise = torch.randn(x.shape, generator=generator, device=x.device)
        return (x + self.sigma * noise).clamp(0.0, 1.0)


def psnr(mse: float) -> float:
    """Peak signal-to-noise ratio in dB of images in [0, 1] with mean squared error ``mse`` (inf at 0)."""
    return math.inf if mse <= 0 else -10.0 * math.log10(mse)


class NoiseBaseline(ImageGame):
    """Gaussian noise of a fixed σ on the config's image set, scored like the learned image mechanisms."""

    name = "noise"
    config_class = NoiseConfig
    trainable_name = "train_noise"
    cfg: NoiseConfig

    @property
    def net(self) -> GaussianNoise:
        return self.noise

    @property
    def epochs(self) -> int:
        """One epoch: the release is scored (and checkpointed for the farm) once."""
        return 1

    def build(self) -> None:
        self.noise = GaussianNoise(self.cfg.sigma).to(self.device)

    def train_epoch(self) -> dict[str, float]:
        """Nothing to train."""
        return {}

    def evaluate(self, attack: bool) -> dict[str, float]:
        """Distortion, the data user's digit classifiers on the noisy splits (trained afresh, and trained on raw images)
        and (``attack``) a fresh deep attacker of S."""
        train, test = self.attack_train, self.test
        released_test = self.release_test()
        released_train = release(self.net, train.x, self.gen)
        mse = F.mse_loss(released_test, test.x).item()
        metrics = self.data_user(released_train) | {"utility/mse": mse, "utility/psnr": psnr(mse), "train/sigma": self.cfg.sigma}
        if attack:
            t0 = time.perf_counter()
            result = DeepAttacker(self.cfg).run(AttackInput(released_train, train.s, released_test, test.s,
                                                          num_classes=self.s_classes))
            metrics |= result.logged() | {"time/attack_s": time.perf_counter() - t0}
        return metrics

    def state(self) -> dict:
        return {"noise": self.noise.state_dict()}

    def load_state(self, state: dict) -> None:
        self.noise.load_state_dict(state["noise"])
        if not math.isclose(self.noise.sigma.item(), self.cfg.sigma, rel_tol=1e-6, abs_tol=1e-9):
            raise ValueError(f"the checkpoint holds σ = {self.noise.sigma.item():g}, the config σ = {self.cfg.sigma:g}")

    def figure_title(self, epoch: int) -> str:
        return f"Gaussian noise σ={self.cfg.sigma:g}"

    def farm_inputs(self) -> CheckpointInputs:
        """The released splits exactly as the learned image mechanisms give them; no trained network to test for
        membership (the farm's membership attackers skip it, saying so)."""
        return CheckpointInputs(self.released_splits().data)

"""Networks of the image mechanisms: the conv encoder-decoder, the U-Net and the small CNN classifier.

Each takes its input shape ``in_shape=(C, H, W)`` from the data set (default: AMNIST's 1×28×28); height and
width must be multiples of 4 (two 2× down-samplings).
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

AMNIST_SHAPE = (1, 28, 28)


def channels_last(module: nn.Module) -> nn.Module:
    """``module`` with its convolution weights in channels-last layout: on x86 CPUs without AVX-512 a SmallCNN training
    step runs 1.3–1.8× faster that way (docs/journal.md#channels-last-convolutions), on GPUs no slower; inputs may
    stay in the default layout, and the arithmetic is the same up to summation order."""
    return module.to(memory_format=torch.channels_last)


def checked_shape(in_shape: tuple[int, ...], network: str) -> tuple[int, int, int]:
    """(C, H, W) with H and W multiples of 4; anything else is a one-line ValueError naming the network."""
    shape = tuple(int(v) for v in in_shape)
    if len(shape) != 3 or min(shape) < 1 or shape[1] % 4 or shape[2] % 4:
        raise ValueError(f"{network} needs in_shape (C, H, W) with H and W multiples of 4, got {tuple(in_shape)}")
    return shape


class SmallCNN(nn.Module):
    """Two conv blocks and two dense layers: the adversary, utility net and deep attacker (``in_shape`` images)."""

    def __init__(self, num_classes: int, width: int = 16, in_shape: tuple[int, int, int] = AMNIST_SHAPE) -> None:
        super().__init__()
        channels, height, width_px = checked_shape(in_shape, "SmallCNN")
        self.features = nn.Sequential(
            nn.Conv2d(channels, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        flat = 2 * width * (height // 4) * (width_px // 4)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(flat, 64), nn.ReLU(), nn.Linear(64, num_classes))
        channels_last(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


class Standardized(nn.Module):
    """``inner`` applied to inputs standardised per feature with a training split's mean and standard deviation.

    A competent attacker's first step: released data can live in a tiny range (e.g. near-black images), where an
    unnormalised network learns so slowly that early stopping ends it far from what it can reach. The statistics are
    buffers, so the chosen attacker carries them to the test split and to a saved state.
    """

    mean: torch.Tensor  # buffers, registered in __init__
    std: torch.Tensor

    def __init__(self, inner: nn.Module, mean: torch.Tensor, std: torch.Tensor) -> None:
        super().__init__()
        self.inner = inner
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)

    @staticmethod
    def statistics(x: torch.Tensor, floor: float = 0.01) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-feature mean and standard deviation of ``x`` [N, ...]; a feature's std is floored at ``floor`` times the
        average std (1 %: a near-constant feature of the training data is scaled up to be learnt; 1: none is scaled
        up more than the average one, for a network that reads data other than its training data)."""
        mean, std = x.mean(0, keepdim=True), x.std(0, keepdim=True) if len(x) > 1 else torch.ones_like(x[:1])
        return mean, std.clamp_min(floor * float(std.mean()) + 1e-8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner((x - self.mean) / self.std)


class InputNorm(nn.Module):
    """``inner`` applied to inputs standardised per feature with batch statistics in training and running ones in
    evaluation (a batch norm over the flattened input, without affine terms and with a tiny epsilon).

    For a game's own players, which see a release that changes every step: a release dimmed to a tiny range looks
    the same to them as a bright one, so a releaser cannot hide the secret from them by scale alone (the farm's
    attackers, :class:`Standardized`, read such releases).
    """

    def __init__(self, inner: nn.Module, features: int) -> None:
        super().__init__()
        self.inner = inner
        self.norm = nn.BatchNorm1d(features, eps=1e-8, affine=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat, norm = x.flatten(1), self.norm
        if self.training and len(flat) < 2:  # one sample has no batch statistics: the running ones
            assert norm.running_mean is not None and norm.running_var is not None  # track_running_stats is on
            flat = F.batch_norm(flat, norm.running_mean, norm.running_var, training=False, eps=norm.eps)
        else:
            flat = norm(flat)
        return self.inner(flat.view_as(x))


def game_classifier(num_classes: int, width: int, in_shape: tuple[int, int, int], input_norm: bool = False) -> nn.Module:
    """A game player (adversary, utility net) or its membership reference: a :class:`SmallCNN`, behind
    :class:`InputNorm` when ``input_norm``."""
    net = SmallCNN(num_classes, width, in_shape=in_shape)
    return InputNorm(net, math.prod(in_shape)) if input_norm else net


class ConvReleaser(nn.Module):
    """Conv encoder-decoder Y = R(X, Z) with output in [0, 1] and the same shape as X.

    Uniform noise channels Z join the bottleneck (H/4 × W/4, 7×7 for AMNIST) so the release can be stochastic;
    with ``noise_channels=0`` the releaser is deterministic. That code is spatial: each output pixel sees only a patch
    of the input. ``latent`` > 0 adds a global code: the 7×7 grid passes through ``latent`` dense units (the noise, as
    ``noise_channels`` uniform values, joins them) and back, so the release is drawn from a few numbers per image.
    ``extra_inputs`` channels beside the image join its input (an anchor image to edit); ``squash`` False leaves the
    output unbounded (a residual for another map to bound).
    """

    def __init__(self, width: int = 16, noise_channels: int = 4, in_shape: tuple[int, int, int] = AMNIST_SHAPE,
                 latent: int = 0, extra_inputs: int = 0, squash: bool = True) -> None:
        super().__init__()
        channels, height, breadth = checked_shape(in_shape, "ConvReleaser")
        self.noise_channels, self.latent, self.squash = noise_channels, latent, squash
        self.encoder = nn.Sequential(
            nn.Conv2d(channels + extra_inputs, width, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(2 * width + (0 if latent else noise_channels), width, 4, stride=2, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(width, width, 4, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(width, channels, 3, padding=1),
        )
        if latent:
            grid = (2 * width, height // 4, breadth // 4)  # the encoder's output: two stride-2 convolutions
            cells = grid[0] * grid[1] * grid[2]
            self.squeeze = nn.Sequential(nn.Flatten(), nn.Linear(cells, latent), nn.ReLU())
            self.expand = nn.Sequential(nn.Linear(latent + noise_channels, cells), nn.ReLU(), nn.Unflatten(1, grid))
        channels_last(self)

    def forward(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        h = self.encoder(x)
        if self.latent:
            h = self.squeeze(h)
        if self.noise_channels:
            shape = (h.shape[0], self.noise_channels, *h.shape[2:])
            z = torch.rand(shape, device=h.device, dtype=h.dtype, generator=generator)
            h = torch.cat([h, z], dim=1)
        out = self.decoder(self.expand(h) if self.latent else h)
        return torch.sigmoid(out) if self.squash else out


class StochasticUNet(nn.Module):
    """Space-preserving stochastic map Q = U(X, Z): a two-level U-Net, uniform noise channels joined at the H/4 × W/4 bottleneck.

    Skip connections let it keep what utility needs at full resolution; the noise gives a stochastic release.
    """

    def __init__(self, width: int = 16, noise_channels: int = 4, in_shape: tuple[int, int, int] = AMNIST_SHAPE) -> None:
        super().__init__()
        channels = checked_shape(in_shape, "StochasticUNet")[0]
        self.noise_channels = noise_channels
        self.down1 = nn.Sequential(nn.Conv2d(channels, width, 3, padding=1), nn.ReLU())
        self.down2 = nn.Sequential(nn.Conv2d(width, 2 * width, 3, stride=2, padding=1), nn.ReLU())
        self.bottom = nn.Sequential(nn.Conv2d(2 * width, 2 * width, 3, stride=2, padding=1), nn.ReLU())
        self.up2 = nn.Sequential(nn.ConvTranspose2d(2 * width + noise_channels, 2 * width, 4, stride=2, padding=1), nn.ReLU())
        self.up1 = nn.Sequential(nn.ConvTranspose2d(4 * width, width, 4, stride=2, padding=1), nn.ReLU())
        self.out = nn.Conv2d(2 * width, channels, 3, padding=1)
        channels_last(self)

    def forward(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        h1 = self.down1(x)  # H × W
        h2 = self.down2(h1)  # H/2 × W/2
        h = self.bottom(h2)  # H/4 × W/4
        if self.noise_channels:
            z = torch.rand((h.shape[0], self.noise_channels, *h.shape[2:]), device=h.device, dtype=h.dtype, generator=generator)
            h = torch.cat([h, z], dim=1)
        h = self.up1(torch.cat([self.up2(h), h2], dim=1))
        return torch.sigmoid(self.out(torch.cat([h, h1], dim=1)))

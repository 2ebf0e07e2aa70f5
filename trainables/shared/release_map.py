"""A trained mechanism's release function restored from a checkpoint: the one transform serving runs.

Training, the attack farm and serving all release through the mechanism's own code; a ``ReleaseMap``
wraps that code with what a server must know to validate requests (per-sample shape, value range).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import torch

_DETERMINISTIC = threading.Lock()  # held while a release runs with deterministic cuDNN kernels

N = TypeVar("N", bound=torch.nn.Module)  # the map's module, as ``apply`` takes it


@dataclass(frozen=True)
class ReleaseMap(Generic[N]):
    """``release(x, seed)`` for a batch ``x`` of shape ``[N, *input_shape]``; same seed, same output."""

    mechanism: str
    input_shape: tuple[int, ...]
    value_range: tuple[float, float] | None  # inputs outside it are rejected (None: any finite value)
    module: N  # holds every parameter, so .to(device) moves the whole map
    apply: Callable[[N, torch.Tensor, torch.Generator], torch.Tensor]

    def to(self, device: torch.device | str) -> ReleaseMap[N]:
        """The same map with its parameters on ``device`` (in eval mode)."""
        self.module.to(device).eval()
        return self

    @property
    def device(self) -> torch.device:
        """Where the parameters live (CPU for a parameter-free map)."""
        return next(self.module.parameters(), torch.empty(0)).device

    @torch.no_grad()
    def release(self, x: torch.Tensor, seed: int) -> torch.Tensor:
        """Release ``x`` with the noise drawn from a generator seeded by ``seed`` on the map's device."""
        x = x.to(self.device, torch.float32)
        generator = torch.Generator(device=x.device).manual_seed(int(seed))
        # On CUDA, cuDNN's default transposed-convolution kernels sum in a varying order, so the same seed gave
        # outputs differing in the last bits (seen on an H100); deterministic kernels keep "same seed, same output".
        # The flags are process-wide, so releases (Serve runs them in threads) take turns while they are set.
        with _DETERMINISTIC, torch.backends.cudnn.flags(enabled=torch.backends.cudnn.enabled, benchmark=False,
                                                        deterministic=True):
            return self.apply(self.module.eval(), x, generator)


def release(net: torch.nn.Module, x: torch.Tensor, generator: torch.Generator, batch_size: int = 1024) -> torch.Tensor:
    """Y = net(X, Z) for a whole split, batched, without gradients, in eval mode (restored afterwards)."""
    was_training = net.training
    net.eval()
    with torch.no_grad():
        out = torch.cat([net(chunk, generator) for chunk in x.split(batch_size)])
    net.train(was_training)
    return out

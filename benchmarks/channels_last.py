"""Do the image networks train faster with their convolutions in channels-last layout on this machine's kernels?

Times one Adam step of each network putlab trains on images (the SmallCNN of the attackers, the data user and the game's
players, at widths 8, 16 and 32; the releaser's ConvReleaser and the privatizer's StochasticUNet at width 16), with its
weights in the default (NCHW) layout and in channels-last, the inputs left as they come, interleaved over ``--rounds``.
Prints milliseconds per step, the speed-up, and the CPU kernels torch runs. The networks are built in channels-last
(``core.nets.channels_last``); this converts a copy back to compare.

    PYTHONPATH=. .venv/bin/python benchmarks/channels_last.py --threads 1 --batch 64
"""
from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

from core.nets import AMNIST_SHAPE, ConvReleaser, SmallCNN, StochasticUNet


def step_time(model: nn.Module, x: torch.Tensor, loss: Callable[[torch.Tensor], torch.Tensor], repeats: int) -> float:
    """Milliseconds per Adam step of ``model`` on ``x`` after a warm-up."""
    opt = torch.optim.Adam(model.parameters(), 1e-3)

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        loss(model(x)).backward()
        opt.step()

    for _ in range(5):
        step()
    t0 = time.perf_counter()
    for _ in range(repeats):
        step()
    return (time.perf_counter() - t0) / repeats * 1000


def networks(batch: int) -> dict[str, tuple[nn.Module, Callable[[torch.Tensor], torch.Tensor]]]:
    """Each network with the loss its training uses (cross-entropy for classifiers, squared error for releases)."""
    y = torch.randint(0, 10, (batch,))
    x = torch.rand(batch, *AMNIST_SHAPE)
    nets: dict[str, tuple[nn.Module, Callable[[torch.Tensor], torch.Tensor]]] = {
        f"SmallCNN width {w}": (SmallCNN(10, w), lambda out: F.cross_entropy(out, y)) for w in (8, 16, 32)}
    nets["ConvReleaser width 16"] = (ConvReleaser(16), lambda out: F.mse_loss(out, x))
    nets["StochasticUNet width 16"] = (StochasticUNet(16), lambda out: F.mse_loss(out, x))
    return nets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    x = torch.rand(args.batch, *AMNIST_SHAPE)
    print(f"torch {torch.__version__}, CPU kernels {torch.backends.cpu.get_cpu_capability()}, {args.threads} thread(s), "
          f"batch {args.batch}; median of {args.rounds} interleaved rounds")
    for name, (model, loss) in networks(args.batch).items():
        default = copy.deepcopy(model).to(memory_format=torch.contiguous_format)
        times: dict[str, list[float]] = {"default": [], "channels-last": []}
        for _ in range(args.rounds):
            times["default"].append(step_time(default, x, loss, args.repeats))
            times["channels-last"].append(step_time(model, x, loss, args.repeats))
        before, after = (statistics.median(times[k]) for k in ("default", "channels-last"))
        print(f"{name:26s} default {before:6.1f} ms  channels-last {after:6.1f} ms  speed-up {before / after:4.2f}×")


if __name__ == "__main__":
    main()

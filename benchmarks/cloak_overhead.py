"""Cloak's prediction overhead: the target's latency on raw inputs against its latency on sifted inputs (the sift —
one noise draw, the mask and the suppression values — plus the same forward pass), batch sizes 1 to 256.

The latency does not depend on the learned values (the sift is the same arithmetic for any σ, μ, mask and μ_s), so
the map is a fresh one with half its features suppressed and the target a fresh LeNet-5, the cached target's network.
Each cell is torch.utils.benchmark's median after its own warm-up, on the wall clock or (``--clock cpu``) on the
process's CPU clock, which a loaded, shared machine does not inflate by preempting the process. Prints a table with
the ratio and the load.

    PYTHONPATH=. .venv/bin/python benchmarks/cloak_overhead.py --threads 1 --clock cpu
"""
from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import torch
from torch import nn
from torch.utils import benchmark

from trainables.cloak.cloak_map import INPUT_SHAPE, CloakMap, apply_mask, sift
from trainables.cloak.target import LeNet5

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def fresh_pair(max_sigma: float = 1.5) -> tuple[nn.Module, CloakMap]:
    """A fresh LeNet-5 "digit > 5" target and a map whose σ spans [0, M] with half the features suppressed (T = M/2)."""
    torch.manual_seed(0)
    cloak = CloakMap(max_sigma, rho_init=-4.0)
    with torch.no_grad():
        cloak.rho.copy_(torch.linspace(-3, 3, cloak.rho.numel()).reshape(cloak.rho.shape))
    apply_mask(cloak, max_sigma / 2)
    return LeNet5(2).eval(), cloak.eval()


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}


def median_seconds(stmt: str, env: dict, min_run_time: float, clock: Callable[[], float]) -> float:
    """Median seconds per call of ``stmt`` on ``clock`` after torch.utils.benchmark's warm-up."""
    return benchmark.Timer(stmt=stmt, globals=env, timer=clock, num_threads=torch.get_num_threads()).blocked_autorange(
        min_run_time=min_run_time).median


def measure(target: nn.Module, cloak: CloakMap, batches: tuple[int, ...], min_run_time: float,
            clock: Callable[[], float] = time.perf_counter) -> list[tuple[int, float, float]]:
    """(batch, seconds without the sift, seconds with it) per batch size."""
    rows = []
    gen = torch.Generator().manual_seed(0)
    for batch in batches:
        x = torch.rand(batch, *INPUT_SHAPE, generator=gen)
        env = {"target": target, "cloak": cloak, "sift": sift, "x": x, "gen": gen, "torch": torch}
        with torch.inference_mode():
            plain = median_seconds("target(x)", env, min_run_time, clock)
            sifted = median_seconds("target(sift(cloak, x, gen))", env, min_run_time, clock)
        rows.append((batch, plain, sifted))
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--min-run-time", type=float, default=0.5, help="seconds of timing per cell after warm-up")
    p.add_argument("--batches", type=int, nargs="+", default=list(BATCHES))
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall", help="wall clock, or the process's CPU time")
    args = p.parse_args()
    if args.threads < 1 or args.min_run_time <= 0 or min(args.batches) < 1:
        p.error("--threads, --min-run-time and every batch size must be positive")
    torch.set_num_threads(args.threads)
    target, cloak = fresh_pair()
    load_before = os.getloadavg()[0]
    rows = measure(target, cloak, tuple(args.batches), args.min_run_time, CLOCKS[args.clock])
    print(f"Cloak prediction overhead, LeNet-5 on 1×32×32, {args.threads} thread(s), {args.clock} clock, "
          f"load {load_before:.2f} before / {os.getloadavg()[0]:.2f} after (1-min average, {os.cpu_count()} CPUs)")
    print(f"{'batch':>5} {'plain µs':>10} {'sifted µs':>10} {'ratio':>6} {'overhead':>9} {'µs/image':>9}")
    for batch, plain, sifted in rows:
        print(f"{batch:>5} {plain * 1e6:>10.1f} {sifted * 1e6:>10.1f} {sifted / plain:>6.3f} "
              f"{(sifted / plain - 1) * 100:>8.1f}% {(sifted - plain) * 1e6 / batch:>9.2f}")


if __name__ == "__main__":
    main()

"""How fast this machine trains right now: a half-second timing that a sweep's price from an earlier sweep is scaled by.

A shared machine's speed changes from hour to hour (on the 2-core machines putlab is built on, the same sweep took a
quarter longer at a slow hour), so the minutes an earlier sweep took price a new one only at the speed of then. Every
sweep times :data:`STEPS` training passes of the attackers' network (``core.nets.SmallCNN`` at width 32, a batch of
64, as many threads as the machine has CPUs, since a sweep keeps them all busy) before it starts, and keeps the time
beside its minutes; the next sweep like it scales those minutes by how much slower or faster the same steps run now.
"""
from __future__ import annotations

import os
import statistics
import time
from functools import cache

import torch
from torch.nn import functional as F

from core.nets import SmallCNN

STEPS = 10  # forward and backward passes per timing: about 0.15 s on two AVX2 cores
REPEATS = 3  # timings, of which the median is kept (a single one can catch another process's burst)
BATCH, WIDTH = 64, 32  # the farm's attackers' batch and their family's wider member


@cache
def probe_seconds() -> float:
    """Seconds for :data:`STEPS` forward and backward passes of SmallCNN on random images, the median of
    :data:`REPEATS` timings after one unmeasured warm-up pass; taken once per process, its thread count restored."""
    threads = torch.get_num_threads()
    torch.set_num_threads(os.cpu_count() or 1)
    try:
        gen = torch.Generator().manual_seed(0)
        x, y = torch.rand(BATCH, 1, 28, 28, generator=gen), torch.randint(0, 2, (BATCH,), generator=gen)
        model = SmallCNN(2, WIDTH)

        def step() -> None:  # the forward and backward pass; no optimiser (torch.optim's import alone takes seconds)
            model.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()

        step()
        timings = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            for _ in range(STEPS):
                step()
            timings.append(time.perf_counter() - start)
        return statistics.median(timings)
    finally:
        torch.set_num_threads(threads)


def speed_ratio(now_s: float, then_s: float) -> float | None:
    """How much longer the same work takes now than then (``now_s``/``then_s`` probe seconds); None where either
    timing is missing (a sweep recorded before probes were kept)."""
    return now_s / then_s if now_s > 0 and then_s > 0 else None

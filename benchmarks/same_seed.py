"""One releaser trial's game run twice in one process, same config and seed: are its weights and metrics the same?

The game of one ``amnist`` grid point (``--alpha``, ``--lam``, ``--seed``, the profile's config) runs ``--runs`` times
without Ray or MLflow, as :mod:`benchmarks.bench_gpu` runs it. It prints each run's release-side metrics per epoch
and, per run after the first, the largest difference of any weight from the first run's. torch picks its CPU kernels
by the machine's vector instructions; ``ATEN_CPU_CAPABILITY=avx2`` (and ``ONEDNN_MAX_CPU_ISA=AVX2``) makes it pick the
AVX2 ones on a machine that has AVX-512, which shows what another machine does to the same seed.

    PYTHONPATH=. .venv/bin/python benchmarks/same_seed.py --profile quick --lam 1000
    ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 PYTHONPATH=. .venv/bin/python benchmarks/same_seed.py --runs 1
"""
from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Iterator
from typing import Any

import torch
from bench_gpu import preset_config

from search_spaces.amnist import PRESET
from trainables.shared import tune_loop

SHOWN = ("utility/accuracy", "utility/mse", "attack/deep/accuracy")  # the release's utility and the in-game attacker


def tensors(state: Any, path: str = "") -> Iterator[tuple[str, torch.Tensor]]:
    """Every tensor of a nested state (dicts, lists) with its path."""
    if torch.is_tensor(state):
        yield path, state
    elif isinstance(state, dict):
        for key, value in state.items():
            yield from tensors(value, f"{path}/{key}")
    elif isinstance(state, list | tuple):
        for i, value in enumerate(state):
            yield from tensors(value, f"{path}/{i}")


def largest_difference(first: Any, other: Any) -> float:
    """The largest absolute difference between two states' tensors of one path."""
    a, b = dict(tensors(first)), dict(tensors(other))
    return max((float((a[k].double() - b[k].double()).abs().max()) for k in a if a[k].numel()), default=0.0)


def run_game(config: dict[str, Any], run: int) -> Any:
    """One game from scratch, its warm start computed (not read from the machine's shared store); prints each epoch's
    release-side metrics and returns the last state."""
    started = time.perf_counter()
    mechanism = PRESET.mechanism.create(config, torch.device("cpu"))
    mechanism.pretrain_dir = None
    for outcome in tune_loop.epochs(mechanism):
        shown = {k: round(outcome.metrics[k], 4) for k in SHOWN if k in outcome.metrics}
        print(f"run {run} epoch {outcome.epoch}: {shown}", flush=True)
    print(f"run {run}: {time.perf_counter() - started:.0f} s", flush=True)
    return copy.deepcopy(mechanism.state())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--alpha", type=float, default=1.0)
    parser.add_argument("--lam", type=float, default=1000.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    config = PRESET.validate({**preset_config("amnist", args.profile, None), "alpha": args.alpha, "lam": args.lam,
                              "seed": args.seed, "threads": 1})
    print(f"torch {torch.__version__}, CPU kernels {torch.backends.cpu.get_cpu_capability()}; "
          f"{args.profile} profile, α = {args.alpha:g}, λ = {args.lam:g}, seed {args.seed}", flush=True)
    states = [run_game(config, run) for run in range(args.runs)]
    for run, state in enumerate(states[1:], start=1):
        print(f"run {run}: largest weight difference from run 0: {largest_difference(states[0], state):g}")


if __name__ == "__main__":
    main()

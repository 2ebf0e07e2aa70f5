"""What sharing the releaser's warm start saves a trial: ``pretrain()`` alone, computed and then read from the store.

Builds an amnist profile's trial (its data, the preset's base config and the profile's), sets it up, and times
``pretrain()`` on one thread: once computing the warm start into a fresh store, then (another trial of the grid, at
another λ) reading it. Prints both, and the machine's load average. Not a test: timings vary by machine and load.

    .venv/bin/python benchmarks/pretrain_cache.py [--profile quick] [--repeats 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from search_spaces.amnist import PRESET  # noqa: E402
from trainables.releaser.mechanism import Releaser  # noqa: E402


def timed_pretrain(config: dict, store: str) -> tuple[float, float]:
    """(seconds of ``pretrain()``, its ``pretrain/cached`` flag) of a freshly set-up trial sharing ``store``."""
    mechanism = Releaser.create(config)
    mechanism.pretrain_dir = store
    mechanism.setup()
    t0 = time.perf_counter()
    mechanism.pretrain()
    return time.perf_counter() - t0, mechanism.pretrain_metrics["pretrain/cached"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="quick", choices=sorted(PRESET.profiles))
    parser.add_argument("--repeats", type=int, default=2, help="fresh stores, each computed once and read once")
    args = parser.parse_args()
    config = PRESET.base | PRESET.profiles[args.profile].config | {"threads": 1}
    torch.set_num_threads(1)
    print(f"amnist {args.profile}: n_train {config['n_train']}, pretrain_epochs {config['pretrain_epochs']}, "
          f"width {config['width']}, one thread; load average before {os.getloadavg()[0]:.1f}")
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory() as store:
            computed, flag_a = timed_pretrain(config | {"lam": 0.0}, store)
            loaded, flag_b = timed_pretrain(config | {"lam": 100.0}, store)
        assert (flag_a, flag_b) == (0.0, 1.0), (flag_a, flag_b)
        print(f"repeat {repeat + 1}: computed {computed:.2f} s, read {loaded:.3f} s, saved {computed - loaded:.2f} s "
              f"per trial (load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()

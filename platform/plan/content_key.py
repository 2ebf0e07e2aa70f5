"""The content key of a trial (a comparison grid's, or a grid search's of putlab's own mechanisms): a hash of
everything its result depends on, so that a later sweep whose trial has the same key can reuse the stored result
instead of running it again (``platform.run.grid_reuse``).

What goes in, and why:

- the grid's preset (``noise``, or the sweep's own ``amnist``, ...): its mechanism and what its trials report;
- the trial's full config as Tune hands it over: data set, subset sizes, seed, the attackers' budget (epochs,
  patience, search, records), the grid point; all but ``threads`` (:data:`RUN_ONLY`), which says how many cores
  it ran on, not what it computed;
- the sweep's farm as named (its attackers and privacy attackers, in order): they fill the trial's attack metrics
  and its strongest attacker;
- the device kind and, on a CPU, its kernels (AVX2, AVX512: each sums in its own order, so gives other numbers);
- the code version (:func:`code_version`): torch's version and a hash of the Python source of the packages that
  compute a trial's result (:data:`CODE`), read once per process. Any edit there, even a comment, changes every
  key: a stale result is never reused, at the price of rerunning after harmless edits.

Equal keys mean the same computation on the same data; the data files themselves are not hashed (the data set's
name, split sizes and seed pick the records).
"""
from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.code_version import ROOT
from core.code_version import code_version as worker_code_version

VERSION = 2  # what a key holds: bump it when that changes, and no older result matches again
CODE = ("core", "attacks", "trainables", "search_spaces", "platform/run/farm.py")  # what computes a trial's metrics
RUN_ONLY = frozenset({"threads"})  # config keys that say how a trial runs, not what it computes


def hashed(obj: object) -> bool:
    """Whether ``obj`` (a class or function) is defined in a file of :data:`CODE` in this checkout, so that the code
    version sees its edits."""
    try:
        path = Path(inspect.getfile(obj)).resolve()  # type: ignore[arg-type]
    except (TypeError, OSError):
        return False
    return any(path.is_relative_to(ROOT / part) for part in CODE)


def code_version() -> str:
    """torch's version and the hash of :data:`CODE`'s source in this checkout, read once per process."""
    return worker_code_version(CODE)


@dataclass(frozen=True)
class GridKey:
    """What every trial of one comparison grid puts in its key; :meth:`of` adds the trial's config. Picklable: a
    grid's trial logger keeps it in Tune's state."""

    grid: str  # the baseline preset's name
    attackers: tuple[str, ...]  # the sweep's farm as named, in order
    privacy_attackers: tuple[str, ...]
    device: str  # "gpu", or "cpu (<its kernels>)"
    code: str = field(default_factory=code_version)

    def of(self, config: dict[str, Any]) -> str:
        """The content key of the grid's trial with ``config`` (Tune's config of that trial), read as JSON: a trial
        restored by a resumed sweep has its tuples back as lists (Tune's state is JSON), and computes the same."""
        recipe = json.dumps({k: v for k, v in config.items() if k not in RUN_ONLY}, sort_keys=True, default=repr)
        what = (VERSION, self.grid, recipe, self.attackers, self.privacy_attackers, self.device, self.code)
        return hashlib.sha256(repr(what).encode()).hexdigest()[:32]

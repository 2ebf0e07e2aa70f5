"""``--budget``: the longest a user will wait, and the profile whose price on this machine fits in it.

Profiles are priced as the cost line prices a sweep (``platform.run.cost_estimate``): from the newest finished sweep
like it in the store or on this machine. A profile never finished here has no price, and is named as such.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from platform.errors import UsageError
from platform.results.clock import clock
from platform.run.cost_estimate import CostEstimate

DURATION = re.compile(r"(?:(?P<h>\d+(?:\.\d+)?)h)?(?:(?P<m>\d+(?:\.\d+)?)m)?(?:(?P<s>\d+(?:\.\d+)?)s)?")
UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0}


@dataclass(frozen=True)
class BudgetChoice:
    """The profile a budget runs and the line that says why."""

    profile: str
    line: str


def seconds_of(text: str) -> float:
    """A duration as a user writes it ("10m", "90s", "1h30m") in seconds; anything else is a one-line UsageError."""
    found = DURATION.fullmatch(text.strip())
    if not text.strip() or found is None or not any(found.groups()):
        raise UsageError(f"--budget takes a duration such as 10m, 90s or 1h30m (got {text!r})")
    seconds = sum(float(value) * UNIT_S[unit] for unit, value in found.groupdict().items() if value)
    if not math.isfinite(seconds) or seconds <= 0:
        raise UsageError(f"--budget must be a positive duration (got {text!r})")
    return seconds


def choose(priced: Mapping[str, CostEstimate | None], limit_s: float, given: str | None) -> BudgetChoice:
    """The ``given`` profile if its price fits ``limit_s`` (or it has none yet), else the priced profile with the most
    work that fits; a UsageError naming the prices when none does."""
    fits = {name: seconds for name, cost in priced.items() if (seconds := price(cost)) is not None and seconds <= limit_s}
    if given is not None:
        if given in fits or price(priced.get(given)) is None:
            return BudgetChoice(given, f"budget {clock(limit_s)}: profile {given}, {said(priced.get(given))}")
        raise UsageError(f"--profile {given} takes {said(priced.get(given))}, over --budget {clock(limit_s)}: "
                         f"{prices(priced)}")
    if not fits:
        raise UsageError(f"no profile is known to fit --budget {clock(limit_s)} on this machine: {prices(priced)}")
    best = max(fits, key=lambda name: fits[name] or 0.0)
    return BudgetChoice(best, f"budget {clock(limit_s)}: profile {best}, {said(priced[best])}; {prices(priced)}")


def price(cost: CostEstimate | None) -> float | None:
    """A profile's wall seconds here, None when no finished sweep prices it."""
    return None if cost is None else cost.seconds


def said(cost: CostEstimate | None) -> str:
    """'about 1:05 here (sweep X on this machine: 5 trials in 1:05)', or that it has no price yet."""
    return (cost and cost.price()) or "not yet timed on this machine (the ETA follows its first finished trial)"


def prices(priced: Mapping[str, CostEstimate | None]) -> str:
    """Every profile's price here, then those without one: 'fast about 21:39, smoke about 1:05; not yet timed here:
    quick, paper'."""
    timed = sorted(((name, seconds) for name, cost in priced.items() if (seconds := price(cost)) is not None),
                   key=lambda item: item[1], reverse=True)
    untimed = [name for name, cost in priced.items() if price(cost) is None]
    parts = [", ".join(f"{name} about {clock(seconds)}" for name, seconds in timed)] if timed else []
    parts += [f"not yet timed here: {', '.join(untimed)}"] if untimed else []
    return "; ".join(parts)

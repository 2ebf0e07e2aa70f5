"""A served point's audit against its registry version: the privacy number the version records, the audit's strongest
attacker, and the verdict.

The rule: the audit **fails when its strongest attacker's 95 % interval lies wholly above the recorded number's**
(audit ``ci_low`` > recorded ``ci_high``; a number without an interval is its own bound) and passes otherwise. Both
numbers are estimates on a few hundred test records, so an honest point's audit lands within their sampling error of
the record (with intervals of equal width, an honest audit fails about 0.3 % of the time); a point that leaks more
than recorded beyond both errors fails.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from platform.errors import UsageError
from platform.results.numbers import readable

TAG_PREFIX = "metric."  # how platform.select tags a version with its trial's metrics


@dataclass(frozen=True)
class Estimate:
    """An attacker's accuracy with its 95 % interval (the value itself where none was measured), which attacker reached
    it, and on how many training records."""

    value: float
    low: float
    high: float
    attacker: str = ""
    records: int | None = None

    def text(self) -> str:
        """'0.612 [0.551, 0.673] (thickness, 512 records)'."""
        interval = f" [{readable(self.low)}, {readable(self.high)}]" if self.low < self.high else ""
        about = [self.attacker] if self.attacker else []
        if self.records is not None:
            about.append(f"{self.records} records")
        return f"{readable(self.value)}{interval}" + (f" ({', '.join(about)})" if about else "")


def recorded(tags: Mapping[str, str], metric: str) -> Estimate:
    """The privacy number a registry version's tags record: ``metric.<metric>`` with its ``/ci_low`` and ``/ci_high``
    and the winner's ``attack/max/train_records`` where tagged; a UsageError where the version records no number."""
    def number(key: str) -> float | None:
        text = tags.get(TAG_PREFIX + key)
        return float(text) if text is not None else None

    value = number(metric)
    if value is None or math.isnan(value):
        raise UsageError(f"the registry version records no {metric} to audit against (tag {TAG_PREFIX}{metric})")
    low, high = number(f"{metric}/ci_low"), number(f"{metric}/ci_high")
    records = number("attack/max/train_records")
    return Estimate(value, value if low is None else low, value if high is None else high,
                    records=None if records is None else int(records))


def strongest(metrics: Mapping[str, float], attackers: Sequence[str], records: int) -> Estimate:
    """The largest ``attack/<a>/accuracy`` among ``attackers`` that ran, with that attacker's interval."""
    scores = {a: metrics[f"attack/{a}/accuracy"] for a in attackers if f"attack/{a}/accuracy" in metrics}
    if not scores:
        raise UsageError(f"none of the attackers {', '.join(attackers)} could attack these releases")
    winner = max(scores, key=scores.__getitem__)
    value = scores[winner]
    return Estimate(value, metrics.get(f"attack/{winner}/accuracy/ci_low", value),
                    metrics.get(f"attack/{winner}/accuracy/ci_high", value), winner, records)


def passes(record: Estimate, audited: Estimate) -> bool:
    """The module's rule: False only when the audit's interval lies wholly above the recorded one."""
    return audited.low <= record.high

"""A served point's audit against its registry version: the privacy number the version records, the audit's strongest
attacker, and the verdict.

The rule: the audit **fails when its strongest attacker's 95 % interval lies wholly above the recorded number's**
(audit ``ci_low`` > recorded ``ci_high``; a number without an interval is its own bound) and passes otherwise. Both
numbers are estimates on a few hundred test records, so an honest point's audit lands within their sampling error of
the record (with intervals of equal width, an honest audit fails about 0.3 % of the time); a point that leaks more
than recorded beyond both errors fails.

An audit fits its attackers on at least :data:`MIN_RECORDS` records and scores them on at least as many: the attackers
choose their configuration on a 20 % validation split of their records (20 records at 100, where one record moves the
validation accuracy by 5 points), and the 95 % interval of an accuracy over 100 scored records is at most ±9.8 points
wide (1.96·√(0.25/100)). With fewer, the attacker's choice is noise and its interval so wide that a point leaking
well beyond its record would pass.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core import attack_scores
from core.metric_names import STRONGEST_RECORDS
from core.numbers import readable
from platform.errors import UsageError

TAG_PREFIX = "metric."  # how platform.select tags a version with its trial's metrics
MIN_RECORDS = 100  # records to fit the attackers on, and to score them on (the module docstring says why)


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
    records = number(STRONGEST_RECORDS)
    return Estimate(value, value if low is None else low, value if high is None else high,
                    records=None if records is None else int(records))


def strongest(metrics: Mapping[str, float], attackers: Sequence[str], records: int) -> Estimate:
    """The largest ``attack/<a>/accuracy`` among ``attackers`` that ran, with that attacker's interval."""
    best = attack_scores.strongest(metrics.get, attackers)
    if best is None:
        raise UsageError(f"none of the attackers {', '.join(attackers)} could attack these releases")
    value = best.accuracy
    return Estimate(value, value if best.ci_low is None else best.ci_low, value if best.ci_high is None else best.ci_high,
                    best.name, records)


def check_records(fitted: int, scored: int) -> None:
    """A UsageError unless the audit fits on and scores on at least MIN_RECORDS records each."""
    if fitted < MIN_RECORDS:
        raise UsageError(f"the audit would fit its attackers on {fitted} records, fewer than {MIN_RECORDS} (their 20 % "
                         f"validation split would decide nothing): pass --records {MIN_RECORDS} or more")
    if scored < MIN_RECORDS:
        raise UsageError(f"the point's test split holds {scored} records, fewer than the {MIN_RECORDS} an audit scores on "
                         "(its 95 % interval would be too wide to fail)")


def passes(record: Estimate, audited: Estimate) -> bool:
    """The module's rule: False only when the audit's interval lies wholly above the recorded one."""
    return audited.low <= record.high

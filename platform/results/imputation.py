"""The imputation attacker beside a sweep's front (docs/metrics.md#added-leakage-over-the-imputation-baseline).

A mechanism's raw-data reference points log on the parent run the best attacker that never sees the release
(``baseline/attack/imputation/<metric>``, :mod:`attacks.audits.imputation`) and each member of its family
(``baseline/attack/imputation/<member>/<metric>``). Read back here against the front's privacy axis
(``attack/<attacker>/<metric>``, lower is better) they give the baseline of that metric, the member that set it, and
each point's *added* leakage: its value on the axis minus the baseline (negative where the release's attackers read
less than the attacker without the release).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from attacks.audits.imputation import NAME, member_order, simplest_best
from core.numbers import readable
from core.pareto_axis import Axis

PREFIX = f"baseline/attack/{NAME}"
ADDED = "imputation/added"  # points and front.csv: the point's privacy-axis value minus the imputation attacker
TAG_SOURCE = "putlab.imputation_source"  # parent run: the family member that set the baseline
PRIVACY_METRIC = re.compile(r"attack/[^/]+/(?P<metric>[^/]+)")


@dataclass(frozen=True)
class Imputation:
    """The imputation attacker of the front's privacy axis ``axis``: its value, 95 % interval (when logged), the member
    that set it and every member's value."""

    axis: str
    value: float
    low: float | None
    high: float | None
    source: str
    members: tuple[tuple[str, float], ...]

    def added(self, table: pd.DataFrame) -> pd.Series:
        """Each row's added leakage: its ``axis`` value minus the baseline (NaN where the row has no value)."""
        values = table[self.axis] if self.axis in table else pd.Series(np.nan, index=table.index)
        return values.astype(float) - self.value

    def line(self, front: pd.DataFrame | None = None) -> str:
        """One line for the terminal and the report: the baseline, where it comes from, and the added leakage of the
        ``front``'s points (a point table with :data:`ADDED`) from least to most."""
        interval = f" [{readable(self.low)}, {readable(self.high)}]" if self.low is not None and self.high is not None else ""
        members = ", ".join(f"{name} {readable(v)}" for name, v in self.members)
        text = (f"imputation attacker {readable(self.value)}{interval} on {self.axis} (the best attacker without the "
                f"release: {self.source}; family: {members})")
        added = front[ADDED].dropna() if front is not None and ADDED in front else pd.Series(dtype=float)
        if len(added):
            span = signed(added.min()) if added.min() == added.max() else f"{signed(added.min())} … {signed(added.max())}"
            text += f"; the front's points add {span}"
        return text


def signed(value: float) -> str:
    """A difference with its sign: ``+0.05``, ``-0.012``, ``0``."""
    return ("+" if value > 0 else "") + readable(float(value))


def privacy_axis(axes: Sequence[Axis]) -> tuple[str, str] | None:
    """The front's attacker axis, ``attack/<attacker>/<metric>`` with lower better, as (axis metric, metric)."""
    for axis in axes:
        match = PRIVACY_METRIC.fullmatch(axis.metric)
        if match and not axis.higher_is_better:
            return axis.metric, match["metric"]
    return None


def read_imputation(metrics: Mapping[str, float], axes: Sequence[Axis]) -> Imputation | None:
    """The imputation attacker of the privacy axis from the parent run's metrics; None when the front has no attacker
    axis or the sweep logged no baseline of its metric."""
    found = privacy_axis(axes)
    if found is None or f"{PREFIX}/{found[1]}" not in metrics:
        return None
    axis, metric = found
    key = f"{PREFIX}/{metric}"
    members = {name: metrics[f"{PREFIX}/{name}/{metric}"]
               for name in {k.split("/")[3] for k in metrics if k.startswith(f"{PREFIX}/") and k.count("/") == 4}
               if f"{PREFIX}/{name}/{metric}" in metrics}
    low, high = metrics.get(f"{key}/ci_low"), metrics.get(f"{key}/ci_high")
    return Imputation(axis, metrics[key], low, high, simplest_best(members) if members else "",
                      tuple((name, members[name]) for name in sorted(members, key=member_order)))

"""One objective of a Pareto front, declared by a preset and read by every view of its sweep (docs/metrics.md)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Axis:
    """One objective of a front: a metric name (``core.metric_names``), its direction, and its worst/best values.

    ``bound`` is the reference value for the hypervolume: the *worst* value one still cares about.
    A point contributes only where it is strictly better than ``bound`` on every axis.
    ``ideal`` is the *best* achievable value; it only scales the normalised hypervolume.

    Examples:
      - utility accuracy, higher is better, values in [0, 1]:
        ``Axis(UTILITY_ACCURACY, higher_is_better=True, bound=0.0, ideal=1.0)``
      - attacker balanced accuracy, lower is better, values in [0.5, 1]: 1.0 is the worst (the
        attacker always right), 0.5 is chance, i.e. perfect privacy:
        ``Axis(DEEP_ATTACK, higher_is_better=False, bound=1.0, ideal=0.5)``
    """

    metric: str
    higher_is_better: bool
    bound: float
    ideal: float

    def __post_init__(self) -> None:
        """Reject an ideal that is not strictly better than the bound: the box would be empty."""
        better = self.ideal > self.bound if self.higher_is_better else self.ideal < self.bound
        if not better:
            direction = "higher" if self.higher_is_better else "lower"
            raise ValueError(
                f"axis {self.metric!r} is {direction}-is-better, so ideal ({self.ideal}) must be "
                f"strictly {direction} than bound ({self.bound})"
            )

    def to_min(self, values: np.ndarray | float) -> np.ndarray | float:
        """Map values of this axis to a lower-is-better scale (negate if higher is better)."""
        return -values if self.higher_is_better else values

"""Metric names more than one layer reads, declared once: presets name them in their axes and trends, the driver's farm
writes them, the papers and the views read them back. Stored names: never change one without reading the old."""
from __future__ import annotations

STRONGEST_ATTACK = "attack/max/accuracy"
"""The strongest attacker of S at a checkpoint: the farm's best of the attackers' balanced accuracies (its winner is the
tag ``putlab.strongest_attacker``)."""

"""A chosen point's privacy at the full budget: its checkpoint attacked by the preset's privacy attackers trained on
the release of every record the data set holds outside its test split (docs/usage.md#choose-and-register).

The sweep's farm trains its attackers on a profile's budget (5,000 records on AMNIST's quick profile); an attacker who
releases everything it holds reads more. ``python -m platform.select`` registers this number as the point's
``attack/max/accuracy`` and keeps the sweep's beside it as ``attack/max/sweep_accuracy``.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from attacks.attackers.registry import REGISTRY
from attacks.farm.checkpoint import attack_inputs
from core.attack_scores import CI_BOUNDS, strongest
from core.messages import first_line
from core.metric_names import attack_metric
from core.numbers import readable
from platform.errors import UsageError
from platform.run import storage as tune_storage
from platform.run.farm import MAX_METRIC, RECORDS_METRIC
from platform.run.front_curves import available_records
from search_spaces import Preset

SWEEP_METRIC = "attack/max/sweep_accuracy"  # the sweep's own number, at its farm's budget
SWEEP_RECORDS = "attack/max/sweep_train_records"


@dataclass(frozen=True)
class FullBudget:
    """The strongest privacy attacker's accuracy (95 % interval) trained on ``records`` released records."""

    attacker: str
    accuracy: float
    ci_low: float | None
    ci_high: float | None
    records: int

    def registered(self, sweep: dict[str, float]) -> dict[str, float]:
        """The point's metrics (``sweep``: the trial's, from the sweep) with this number as its privacy and the
        sweep's moved beside it (:data:`SWEEP_METRIC`, with its interval and records)."""
        moved = {SWEEP_METRIC: sweep[MAX_METRIC]} if MAX_METRIC in sweep else {}
        moved |= {f"{SWEEP_METRIC}/{b}": sweep[f"{MAX_METRIC}/{b}"] for b in CI_BOUNDS if f"{MAX_METRIC}/{b}" in sweep}
        moved |= {SWEEP_RECORDS: sweep[RECORDS_METRIC]} if RECORDS_METRIC in sweep else {}
        own = {MAX_METRIC: self.accuracy, RECORDS_METRIC: float(self.records)}
        own |= {f"{MAX_METRIC}/{b}": v for b, v in zip(CI_BOUNDS, (self.ci_low, self.ci_high), strict=True) if v is not None}
        kept = {k: v for k, v in sweep.items() if not k.startswith(f"{MAX_METRIC}/") and k not in (MAX_METRIC, RECORDS_METRIC)}
        return kept | moved | own

    def line(self, sweep: dict[str, float]) -> str:
        """'attack/max/accuracy at the full budget: deep 0.91 [0.89, 0.93] on 28,476 released records (the sweep's:
        0.878 on 5,000)'."""
        interval = f" [{readable(self.ci_low)}, {readable(self.ci_high)}]" if self.ci_low is not None and \
            self.ci_high is not None else ""
        before = (f" (the sweep's: {readable(sweep[MAX_METRIC])} on {sweep.get(RECORDS_METRIC, float('nan')):,.0f})"
                  if MAX_METRIC in sweep else "")
        return (f"{MAX_METRIC} at the full budget: {self.attacker} {readable(self.accuracy)}{interval} on "
                f"{self.records:,} released records{before}")


def budget(preset: Preset, config: dict[str, Any], records: int | None) -> int | None:
    """``records``, else every record outside the test split the preset's data counts name (None where they name
    none: the sweep's own number stands)."""
    return records if records is not None else available_records(preset, config)


def attack_full_budget(preset: Preset, config: dict[str, Any], checkpoint: str, row: pd.Series | dict,
                       records: int, why: str) -> FullBudget:
    """The privacy attackers that scored the trial in the sweep (``row``: its metrics), refitted on the checkpoint's
    release of ``records`` records (``why``: how that number was chosen, for the line it prints); the strongest."""
    if preset.checkpoint_inputs is None:
        raise UsageError(f"preset {preset.name!r} has no checkpoints for the attack farm")
    names = [a for a in preset.farm.privacy if a in REGISTRY and not REGISTRY[a].per_target
             and pd.notna(row.get(attack_metric(a)))]
    if not names:
        raise UsageError(f"the trial has no privacy attacker's accuracy to refit ({', '.join(preset.farm.privacy)})")
    print(f"attacking the chosen checkpoint with {', '.join(names)} trained on the release of {records:,} records "
          f"({why})", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tune_storage.download(checkpoint, Path(tmp))
        try:
            inputs = preset.checkpoint_inputs(config | {"attack_records": records}, tmp)
        except ValueError as exc:
            raise UsageError(f"--attack-records: {first_line(exc)}") from None
        metrics = attack_inputs(inputs, names, figures=False).metrics
    best = strongest(metrics.get, names)
    if best is None:
        raise UsageError(f"none of {', '.join(names)} read the release of {records:,} records")
    return FullBudget(best.name, best.accuracy, best.ci_low, best.ci_high,
                      records if best.train_records is None else best.train_records)

"""The rows of the sweep report's tables, computed from the summary and the logged metrics and files (no MLflow, no
HTML): values with their intervals, the attackers' and membership columns, the DP columns, learning curves, the
exposed records, hypervolumes per group, the game's settling, the comparison grids and the hull verdicts.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attacks.attackers.membership_stats import LOW_FPRS
from attacks.audits.exposure import fpr_text
from attacks.audits.learning_curve import DOUBLED, FRACTIONS, percent
from core.metric_names import CONFIDENT_SHARE, TOP_DECILE, attack_metric
from core.pareto_axis import Axis
from platform.results.baseline_hull import AT_SATURATION, BEYOND_SEEDS, MARGIN, MIX, verdict
from platform.results.front_groups import value_text
from platform.results.game import SETTLE_MARGIN, GameCurves, gap_text
from platform.results.summary import SweepSummary

MEMBERSHIP_METRICS = ("advantage", "auc", *LOW_FPRS)  # the report's membership columns, per attacker in this order
CURVE_FLAG = re.compile(r"attack/([^/]+)/still_learning")  # a logged learning curve (attacks/audits/learning_curve.py)
EXPOSED_SHOWN = 8  # records per attacker and network in the report's exposed-records table


def with_interval(row: pd.Series | dict, metric: str) -> dict[str, Any]:
    """A metric's value and, when logged as ``<metric>/ci_low`` and ``<metric>/ci_high``, its 95% interval."""
    get = row.get
    value, low, high = get(metric), get(f"{metric}/ci_low"), get(f"{metric}/ci_high")
    has_ci = low is not None and high is not None and pd.notna(low) and pd.notna(high)
    return {"value": value, "low": low if has_ci else None, "high": high if has_ci else None}


def attacker_names(table: pd.DataFrame) -> list[str]:
    """Attackers with an accuracy in the table (``attack/<name>/accuracy``), the strongest-of column excluded."""
    found = {m.group(1) for c in table.columns if (m := re.fullmatch(r"attack/([^/]+)/accuracy", str(c)))}
    return sorted(found - {"max"})
DP_COLUMNS = {"leakage/dp/epsilon": "ε claimed (accountant)", "leakage/dp/epsilon_lower": "ε lower bound (audit)"}


def dp_columns(table: pd.DataFrame) -> list[str]:
    """The DP trials' claimed ε and the one-run audit's lower bound on it, where the table has them."""
    return [c for c in DP_COLUMNS if c in table.columns]


def learning_curves(metrics: dict[str, float]) -> list[dict[str, Any]]:
    """A run's logged learning curves: per attacker its accuracy at each fraction of its training records (200 %
    empty where not drawn), with intervals, whether it is still learning, and the fitted saturation with its interval
    (empty where the fit gave none)."""
    names = sorted(m.group(1) for k in metrics if (m := CURVE_FLAG.fullmatch(k)))
    return [{"attacker": name, "still_learning": metrics[attack_metric(name, "still_learning")] == 1.0,
             "points": [with_interval(metrics, attack_metric(name, f"curve/{percent(f)}")) for f in (*FRACTIONS, DOUBLED)],
             "saturation": with_interval(metrics, attack_metric(name, "saturation"))}
            for name in names]


def membership_columns(table: pd.DataFrame) -> list[str]:
    """The worst-case membership metrics present in the table, per attacker in the order of :data:`MEMBERSHIP_METRICS`
    (``attack/<name>/advantage``, ``auc`` and the TPR at each low FPR of attacks/attackers/membership_stats.py); a TPR logged
    only as not measurable (``<metric>_measurable``) has its column too."""
    found = {(m.group(1), MEMBERSHIP_METRICS.index(m.group(2))) for c in table.columns
             if (m := re.fullmatch(r"attack/([^/]+)/(.+?)(?:_measurable)?", str(c))) and m.group(2) in MEMBERSHIP_METRICS}
    return [attack_metric(name, MEMBERSHIP_METRICS[i]) for name, i in sorted(found)]


def membership_cell(row: pd.Series | dict, column: str) -> dict[str, Any]:
    """A membership column's value in a trial's row, or a note where the attack logged it as not measurable."""
    value = row.get(column)
    if (value is None or pd.isna(value)) and row.get(f"{column}_measurable") == 0:
        return {"value": None, "note": "not measurable"}
    return {"value": value, "note": ""}


def exposed_rows(path: Path | None, shown: int = EXPOSED_SHOWN) -> list[dict[str, Any]]:
    """One row per attacker and network of an exposed-records CSV: its first ``shown`` records as
    ``#<index> (<FPR>)`` texts, most exposed first."""
    if path is None:
        return []
    rows: dict[tuple[str, str], list[str]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for record in csv.DictReader(fh):
            texts = rows.setdefault((record["attacker"], record["network"]), [])
            if len(texts) < shown:
                texts.append(f"#{record['index']} ({fpr_text(float(record['fpr'])).removeprefix('FPR ')})")
    return [{"attacker": a, "network": n, "records": ", ".join(t)} for (a, n), t in rows.items()]


def group_hypervolumes(metrics: dict[str, float], axis: str | None) -> list[tuple[str, float]]:
    """The parent's hypervolume per value of the ``front_by`` axis (``front/hypervolume/<axis>_<value>``), by value."""
    if axis is None:
        return []
    prefix = f"front/hypervolume/{axis}_"
    found = [(float(k.removeprefix(prefix)), v) for k, v in metrics.items() if k.startswith(prefix)]
    return [(value_text(value), v) for value, v in sorted(found)]


def game_row(game: GameCurves) -> dict[str, Any] | None:
    """What the report says of a trial's game at its last checkpoint: in-game and fresh adversaries, the gap and the
    verdict (None when the trial has no in-game adversary)."""
    if not game.has_game:
        return None
    verdict = game.verdict(SETTLE_MARGIN)
    if verdict is None:
        return {"epoch": None, "line": "no checkpoint with a fresh attacker"}
    c = verdict.checkpoint
    return {"epoch": c.epoch, "in_game": c.in_game, "fresh": {"value": c.fresh, "low": c.ci_low, "high": c.ci_high},
            "attacker": c.attacker, "gap": gap_text(c.gap), "settles": verdict.settles, "line": verdict.line}


def baseline_grids(summary: SweepSummary, axes: list[Axis]) -> list[dict[str, Any]]:
    """Each comparison grid with points: its points on the front's axes, which of its trials were reused from an earlier
    sweep and, per front point, the baseline's privacy (and distortion) at its utility, whether it beats the baseline
    and the baseline points that dominate it on every axis."""
    grids = []
    for curve in summary.comparisons:
        baseline, points = curve.grid, curve.points
        if points.empty:
            continue
        keys = [k for k in baseline.preset.label_keys if k in points]
        compared = summary.compared if baseline.beats in summary.compared else pd.DataFrame()
        grids.append({
            "title": baseline.title, "name": baseline.name, "reused": curve.reuse_note,
            "points": [{"name": row.get("name", ""), "axes": [with_interval(row, a.metric) for a in axes]}
                       for _, row in points.sort_values(keys).iterrows()],
            "front": [{"name": row["name"], "at": [row[baseline.at_utility], *(row[baseline.at(a)] for a in axes[2:])],
                       "beats": row[baseline.beats], "dominated_by": row[baseline.dominated_by]}
                      for _, row in compared.iterrows()],
        })
    return grids


def hull_rows(summary: SweepSummary) -> list[dict[str, str]]:
    """Each compared front point's standing against the baselines' hull, with the mix that reaches it, at its
    saturation estimate and across seeds (empty without a hull)."""
    if summary.hull is None:
        return []
    at_saturation = summary.compared.get(AT_SATURATION, pd.Series(np.nan, index=summary.compared.index))
    return [{"name": row["name"], "verdict": verdict(float(row[MARGIN])), "mix": row[MIX] or "—",
             "saturated": verdict(float(s)) if np.isfinite(s) else "—", "seeds": row[BEYOND_SEEDS] or "—",
             "top_decile": row.get(TOP_DECILE, np.nan), "confident": row.get(CONFIDENT_SHARE, np.nan)}
            for (_, row), s in zip(summary.compared.iterrows(), at_saturation, strict=True)]

"""The self-contained HTML report of a sweep (and of a comparison), built from its MLflow runs and artifacts.

Images are embedded as base64, so the file opens anywhere, offline, each re-encoded as a lossless WebP of 256 colours
(``compact``): the default sweep's report holds its 63 figures in 1.6 MB rather than 4.6 MB. It is written beside the
tracking store (``reports/`` next to a sqlite file, else the current directory) and logged on the parent run as
``report/report.html``.
"""
from __future__ import annotations

import base64
import io
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, FileSystemLoader, select_autoescape
from PIL import Image as Picture

from attacks.audits.exposure import GALLERY_PREFIX
from attacks.audits.learning_curve import DOUBLED, FRACTIONS, percent
from attacks.plots.learning_curve_plot import FILE_PREFIX as CURVE_PREFIX
from core.metric_names import attack_metric
from core.numbers import readable
from core.pareto_axis import Axis
from platform.figures.report_tables import (
    DP_COLUMNS,
    attacker_names,
    baseline_grids,
    dp_columns,
    exposed_rows,
    game_row,
    group_hypervolumes,
    hull_rows,
    learning_curves,
    membership_cell,
    membership_columns,
    with_interval,
)
from platform.results.clock import clock
from platform.results.game import SETTLE_MARGIN
from platform.results.summary import SweepSummary
from platform.results.sweep_record import SweepRecord, TrialRecord
from search_spaces import Preset

TEMPLATE = "report_template.html"
EPOCH_FILE = re.compile(r"epoch(\d+)_(.+\.png)$")
EXPOSED_FILE = re.compile(r"epoch\d+_" + re.escape(GALLERY_PREFIX))  # a membership attacker's exposed-records gallery
CURVE_FILE = re.compile(r"epoch\d+_" + re.escape(CURVE_PREFIX))  # a learning curve's picture
# Colours of an embedded figure (Pillow's maximum-coverage palette, then lossless WebP): the default sweep's 63 figures,
# 3.4 MB of PNG, take 1.15 MB, each pixel's channels within 6 of 255 of the original's (0.07 on average); a pale band
# (an interval shaded at 8 % opacity) keeps its tint. Lossless WebP of every colour takes 1.28 MB; PNG of this palette
# 1.51 MB, and of Pillow's fast octree palette 1.01 MB, but that one turns the pale bands white.
PALETTE = 256
EMBEDDED = "image/webp"


@dataclass(frozen=True)
class Image:
    """A figure ready to embed: its caption and base64 data (of :data:`EMBEDDED`, ``compact``)."""

    caption: str
    data: str

    @property
    def src(self) -> str:
        """The figure as an ``<img>``'s source: a data URL."""
        return f"data:{EMBEDDED};base64,{self.data}"


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(Path(__file__).parent), autoescape=select_autoescape(["html"]))
    env.filters["num"] = lambda v: "" if v is None or (isinstance(v, float) and pd.isna(v)) else readable(v)
    return env


def report_dir(tracking_uri: str) -> Path:
    """``reports/`` beside a sqlite store's file, else under the current directory."""
    if tracking_uri.startswith("sqlite:///"):
        return Path(tracking_uri.removeprefix("sqlite:///")).resolve().parent / "reports"
    return Path.cwd() / "reports"


def compact(png: bytes) -> bytes:
    """An opaque figure's PNG as a lossless WebP of at most :data:`PALETTE` colours (a third of the bytes)."""
    with Picture.open(io.BytesIO(png)) as picture:
        paletted = picture.convert("RGB").quantize(PALETTE, method=Picture.Quantize.MAXCOVERAGE)
    out = io.BytesIO()
    paletted.convert("RGB").save(out, format="WEBP", lossless=True)
    return out.getvalue()


def _png(path: Path, caption: str) -> Image:
    """The PNG at ``path``, made smaller (``compact``), ready to embed under ``caption``."""
    return Image(caption, base64.b64encode(compact(path.read_bytes())).decode("ascii"))


def latest_images(paths: list[Path]) -> list[Image]:
    """The last checkpoint's picture of each kind (``epoch004_released.png`` beats ``epoch002_released.png``)."""
    latest: dict[str, tuple[int, Path]] = {}
    for path in paths:
        match = EPOCH_FILE.search(path.name)
        epoch, kind = (int(match.group(1)), match.group(2)) if match else (0, path.name)
        if kind not in latest or epoch > latest[kind][0]:
            latest[kind] = (epoch, path)
    return [_png(p, f"{kind.removesuffix('.png').replace('_', ' ')} (checkpoint {e})" if e else kind)
            for kind, (e, p) in sorted(latest.items())]


def _duration(start_ms: int | None, end_ms: int | None) -> str:
    if not start_ms:
        return ""
    return clock(((end_ms or time.time() * 1000) - start_ms) / 1000)


def _worked(record: SweepRecord) -> str:
    """The minutes an ended sweep worked (``sweep/active_minutes``) where its span holds pauses of over a minute (it
    was interrupted and resumed); "" where the span is its working time or it has not ended."""
    minutes, span = record.active_minutes, record.span_minutes
    return clock(minutes * 60) if math.isfinite(minutes) and span - minutes > 1 else ""


def reused_from(trial: TrialRecord) -> str:
    """'reused from sweep <name>' for a trial copied from an earlier sweep (``platform.run.grid_reuse``), else ''."""
    return f"reused from sweep {trial.reused_sweep}" if trial.reused_sweep else ""


def sweep_context(record: SweepRecord, preset: Preset, summary: SweepSummary, status: str | None = None) -> dict[str, Any]:
    """Everything the sweep template shows: the summary, and the sweep's record (its ``status``, when the sweep is
    about to end its run with it, else the stored one), its trials and their pictures."""
    params = record.params
    axes = summary.axes or list(preset.front.axes)
    table = summary.trials.assign(pareto_front=summary.front)
    attackers = attacker_names(table) if not table.empty else []
    trials = []
    for _, row in (table.sort_values("pareto_front", ascending=False, kind="stable") if not table.empty else table).iterrows():
        trial = record.trials[row["run_id"]]
        attack_pngs = list(trial.attack_pngs)
        trials.append({
            "name": row["name"], "status": row["status"], "front": bool(row["pareto_front"]),
            "axes": [with_interval(row, a.metric) for a in axes],
            "attacks": [with_interval(row, attack_metric(a)) for a in attackers],
            "strongest": trial.strongest,
            "membership": [membership_cell(row, c) for c in membership_columns(table)],
            "dp": [row.get(c) for c in dp_columns(table)],
            "duration": reused_from(trial) or _duration(trial.start_ms, trial.end_ms),
            "images": latest_images(list(trial.figure_pngs)),
            "roc": latest_images([p for p in attack_pngs if "roc" in p.name]),
            "exposed": latest_images([p for p in attack_pngs if EXPOSED_FILE.search(p.name)]),
            "exposed_rows": exposed_rows(trial.exposed_csv),
            "curves": learning_curves(dict(trial.metrics)),
            "curve_images": latest_images([p for p in attack_pngs if CURVE_FILE.search(p.name)]),
            "game": game_row(trial.game),
            "game_images": [_png(p, "game curves") for p in trial.game_pngs],
        })
    figures = [_png(p, p.stem.replace("_", " ")) for p in record.front_pngs]
    metrics = record.metrics
    finished = int((table["status"] == "FINISHED").sum()) if not table.empty else 0
    failed = int((table["status"] == "FAILED").sum()) if not table.empty else 0
    return {
        "title": f"putlab sweep {record.name}",
        "sweep": record.name, "run_id": record.run_id, "status": status or record.status,
        "preset": preset.name, "mechanism": preset.mechanism_name, "dataset": params.get("dataset", ""),
        "profile": params.get("profile", ""), "search": params.get("search", ""),
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.start_ms / 1000)),
        "wall": _duration(record.start_ms, record.end_ms), "worked": _worked(record),
        "planned": params.get("planned_trials", ""), "finished": finished, "failed": failed,
        "axes": axes, "label_keys": preset.label_keys, "attackers": attackers,
        "membership_columns": membership_columns(table) if not table.empty else [],
        "dp_columns": [DP_COLUMNS[c] for c in dp_columns(table)] if not table.empty else [],
        "front_size": int(summary.front.sum()), "hypervolume": summary.hypervolume,
        "hypervolume_normalised": summary.hypervolume_normalised,
        "front_by": preset.front.by, "group_hypervolumes": group_hypervolumes(dict(metrics), preset.front.by),
        "imputation": summary.imputation.line(summary.front_points) if summary.imputation is not None else None,
        "baseline_grids": baseline_grids(summary, axes),
        "hull": hull_rows(summary),
        "baselines": sorted((k.removeprefix("baseline/"), v) for k, v in metrics.items() if k.startswith("baseline/")),
        "data": sorted((k.removeprefix("data/"), v) for k, v in metrics.items() if k.startswith("data/")),
        "config": sorted(params.items()),
        "figures": figures, "trials": trials, "curve_percents": [percent(f) for f in (*FRACTIONS, DOUBLED)],
        "settle_margin": SETTLE_MARGIN,
        "registered": list(record.registered),
    }


def render_sweep(record: SweepRecord, preset: Preset, summary: SweepSummary, status: str | None = None) -> str:
    """The sweep's report as one HTML string (``status``: see :func:`sweep_context`)."""
    return _environment().get_template(TEMPLATE).render(kind="sweep", **sweep_context(record, preset, summary, status))


def render_comparison(title: str, sweeps: list[dict[str, Any]], axes: list[Axis], fronts_png: Path) -> str:
    """A comparison's report: the overlaid fronts and, per sweep, its hypervolume and front members."""
    return _environment().get_template(TEMPLATE).render(
        kind="comparison", title=title, axes=axes, sweeps=sweeps,
        figures=[_png(fronts_png, "fronts on shared axes")])

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
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, FileSystemLoader, select_autoescape
from mlflow.entities import Run
from mlflow.tracking import MlflowClient
from PIL import Image as Picture

from attacks.audits.exposure import CSV_FILE as EXPOSED_CSV
from attacks.audits.exposure import GALLERY_PREFIX
from attacks.audits.learning_curve import DOUBLED, FRACTIONS, percent
from attacks.plots.learning_curve_plot import FILE_PREFIX as CURVE_PREFIX
from core.metric_names import attack_metric
from core.numbers import readable
from core.pareto_axis import Axis
from platform.figures.game_curves import ARTIFACT_PATH as GAME_PATH
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
from platform.results import tracking
from platform.results.clock import clock
from platform.results.game import SETTLE_MARGIN, read_game_curves
from platform.results.summary import SweepSummary
from search_spaces import Preset

TEMPLATE = "report_template.html"
ARTIFACT_PATH = "report"
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


def _artifacts(client: MlflowClient, run_id: str, folder: str, tmp: Path) -> list[Path]:
    """The PNGs directly under ``folder`` of the run, downloaded into ``tmp`` (none if the folder is absent)."""
    names = [a.path for a in client.list_artifacts(run_id, folder) if a.path.endswith(".png")]
    return [Path(client.download_artifacts(run_id, name, str(tmp))) for name in sorted(names)]


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


def latest_csv(client: MlflowClient, run_id: str, folder: str, suffix: str, tmp: Path) -> Path | None:
    """The run's last checkpoint's ``epoch<NNN>_<suffix>`` under ``folder``, downloaded into ``tmp`` (None if absent)."""
    found = [(int(m.group(1)), a.path) for a in client.list_artifacts(run_id, folder)
             if (m := re.search(r"epoch(\d+)_" + re.escape(suffix) + "$", a.path))]
    if not found:
        return None
    return Path(client.download_artifacts(run_id, max(found)[1], str(tmp)))


def _duration(start_ms: int | None, end_ms: int | None) -> str:
    if not start_ms:
        return ""
    return clock(((end_ms or time.time() * 1000) - start_ms) / 1000)


def _worked(parent: Run) -> str:
    """The minutes an ended sweep worked (``sweep/active_minutes``) where its span holds pauses of over a minute (it
    was interrupted and resumed); "" where the span is its working time or it has not ended."""
    minutes = tracking.active_minutes(parent)
    span = tracking.span_minutes(parent)
    return clock(minutes * 60) if math.isfinite(minutes) and span - minutes > 1 else ""


def registered_points(client: MlflowClient, names: dict[str, str]) -> list[dict[str, str]]:
    """The registry versions made from the trials ``names`` (run id -> trial name), each with its latest audit of the
    served point (``python -m platform.audit``), or "not audited"."""
    if not names:
        return []
    quoted = ", ".join(f"'{run_id}'" for run_id in names)
    versions = client.search_model_versions(f"run_id IN ({quoted})")
    return [{"model": f"{v.name}/{v.version}", "trial": names.get(v.run_id or "", ""),
             "audit": v.tags.get("audit", "not audited"),
             "date": v.tags.get("audit/date", ""), "audited": v.tags.get("audit/attack_accuracy", ""),
             "recorded": v.tags.get("audit/recorded", "")}
            for v in sorted(versions, key=lambda v: (v.name, int(v.version)))]


def reused_from(run: Run) -> str:
    """'reused from sweep <name>' for a trial copied from an earlier sweep (``platform.run.grid_reuse``), else ''."""
    sweep = run.data.tags.get(tracking.TAG_REUSED_SWEEP)
    return f"reused from sweep {sweep}" if sweep else ""


def sweep_context(client: MlflowClient, parent_id: str, preset: Preset, summary: SweepSummary,
                  tmp: Path, status: str | None = None) -> dict[str, Any]:
    """Everything the sweep template shows: the summary, and the parent run (its ``status``, when the sweep is about to
    end its run with it, else the stored one), its children and their artifacts."""
    parent = client.get_run(parent_id)
    params = parent.data.params
    axes = summary.axes or list(preset.front.axes)
    table = summary.trials.assign(pareto_front=summary.front)
    runs = {r.info.run_id: r for r in tracking.child_runs(client, parent.info.experiment_id, parent_id)}

    attackers = attacker_names(table) if not table.empty else []
    trials = []
    for _, row in (table.sort_values("pareto_front", ascending=False, kind="stable") if not table.empty else table).iterrows():
        run = runs[row["run_id"]]
        stored = tracking.artifact_run(run)  # a trial copied from an earlier sweep keeps its figures there
        attack_pngs = _artifacts(client, stored, "attacks", tmp)
        exposed_csv = latest_csv(client, stored, "attacks", EXPOSED_CSV, tmp)
        trials.append({
            "name": row["name"], "status": row["status"], "front": bool(row["pareto_front"]),
            "axes": [with_interval(row, a.metric) for a in axes],
            "attacks": [with_interval(row, attack_metric(a)) for a in attackers],
            "strongest": run.data.tags.get("putlab.strongest_attacker", ""),
            "membership": [membership_cell(row, c) for c in membership_columns(table)],
            "dp": [row.get(c) for c in dp_columns(table)],
            "duration": reused_from(run) or _duration(run.info.start_time, run.info.end_time),
            "images": latest_images(_artifacts(client, stored, "figures", tmp)),
            "roc": latest_images([p for p in attack_pngs if "roc" in p.name]),
            "exposed": latest_images([p for p in attack_pngs if EXPOSED_FILE.search(p.name)]),
            "exposed_rows": exposed_rows(exposed_csv),
            "curves": learning_curves(run.data.metrics),
            "curve_images": latest_images([p for p in attack_pngs if CURVE_FILE.search(p.name)]),
            "game": game_row(read_game_curves(client, run.info.run_id, row["name"])),
            "game_images": [_png(p, "game curves") for p in _artifacts(client, stored, GAME_PATH, tmp)],
        })
    figures = [_png(p, p.stem.replace("_", " ")) for p in _artifacts(client, parent_id, "front", tmp)]
    metrics = parent.data.metrics
    finished = int((table["status"] == "FINISHED").sum()) if not table.empty else 0
    failed = int((table["status"] == "FAILED").sum()) if not table.empty else 0
    return {
        "title": f"putlab sweep {parent.info.run_name}",
        "sweep": parent.info.run_name, "run_id": parent_id, "status": status or parent.info.status,
        "preset": preset.name, "mechanism": preset.mechanism_name, "dataset": params.get("dataset", ""),
        "profile": params.get("profile", ""), "search": params.get("search", ""),
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(parent.info.start_time / 1000)),
        "wall": _duration(parent.info.start_time, parent.info.end_time), "worked": _worked(parent),
        "planned": params.get("planned_trials", ""), "finished": finished, "failed": failed,
        "axes": axes, "label_keys": preset.label_keys, "attackers": attackers,
        "membership_columns": membership_columns(table) if not table.empty else [],
        "dp_columns": [DP_COLUMNS[c] for c in dp_columns(table)] if not table.empty else [],
        "front_size": int(summary.front.sum()), "hypervolume": summary.hypervolume,
        "hypervolume_normalised": summary.hypervolume_normalised,
        "front_by": preset.front.by, "group_hypervolumes": group_hypervolumes(metrics, preset.front.by),
        "imputation": summary.imputation.line(summary.front_points) if summary.imputation is not None else None,
        "baseline_grids": baseline_grids(summary, axes),
        "hull": hull_rows(summary),
        "baselines": sorted((k.removeprefix("baseline/"), v) for k, v in metrics.items() if k.startswith("baseline/")),
        "data": sorted((k.removeprefix("data/"), v) for k, v in metrics.items() if k.startswith("data/")),
        "config": sorted(params.items()),
        "figures": figures, "trials": trials, "curve_percents": [percent(f) for f in (*FRACTIONS, DOUBLED)],
        "settle_margin": SETTLE_MARGIN,
        "registered": registered_points(client, {r.info.run_id: r.info.run_name for r in runs.values()}),
    }


def render_sweep(client: MlflowClient, parent_id: str, preset: Preset, summary: SweepSummary,
                 status: str | None = None) -> str:
    """The sweep's report as one HTML string (``status``: see :func:`sweep_context`)."""
    with tempfile.TemporaryDirectory() as tmp:
        context = sweep_context(client, parent_id, preset, summary, Path(tmp), status)
    return _environment().get_template(TEMPLATE).render(kind="sweep", **context)


def render_comparison(title: str, sweeps: list[dict[str, Any]], axes: list[Axis], fronts_png: Path) -> str:
    """A comparison's report: the overlaid fronts and, per sweep, its hypervolume and front members."""
    return _environment().get_template(TEMPLATE).render(
        kind="comparison", title=title, axes=axes, sweeps=sweeps,
        figures=[_png(fronts_png, "fronts on shared axes")])


def write_report(client: MlflowClient, run_id: str, html: str, path: Path) -> Path:
    """Write ``html`` to ``path`` and log it on run ``run_id`` as ``report/report.html``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        logged = Path(tmp) / "report.html"
        logged.write_text(html, encoding="utf-8")
        client.log_artifact(run_id, str(logged), artifact_path=ARTIFACT_PATH)
    return path


def write_sweep_report(client: MlflowClient, parent_id: str, preset: Preset, summary: SweepSummary, tracking_uri: str,
                       path: Path | None = None, status: str | None = None) -> Path:
    """Build the sweep's report, write it (default ``<report_dir>/<sweep>.html``) and log it on the parent run
    (``status``: the one the sweep is about to end its run with; default the stored one)."""
    name = client.get_run(parent_id).info.run_name
    html = render_sweep(client, parent_id, preset, summary, status)
    return write_report(client, parent_id, html, path or report_dir(tracking_uri) / f"{name}.html")

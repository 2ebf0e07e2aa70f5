"""No legend or label covers a plotted point: the default sweep's front figures, drawn from its stored numbers (by hand
here) and two more trials, with the digit prototype's point in the lower right corner, where the old legend sat, and a
game's curves with a gap label at every second epoch. And the report embeds its figures compacted: a few kilobytes
each, still legible, every one still there."""
from __future__ import annotations

import base64
import io
import re

import numpy as np
import pandas as pd
import pytest
from conftest import SharedSweep
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from PIL import Image

from core.pareto_axis import Axis
from platform.figures.figure_parts import DPI
from platform.figures.front import sweep_front_figure
from platform.figures.game_curves import game_figure
from platform.figures.html_report import compact
from platform.results.game import ADVERSARY, Checkpoint, Curve, GameCurves
from platform.results.imputation import Imputation
from platform.results.pareto import pareto_mask
from platform.results.replicates import band_columns

U, P, D = "utility/fresh_accuracy", "attack/max/accuracy", "utility/psnr"
AXES = (Axis(U, True, 0.0, 1.0), Axis(P, False, 1.0, 0.5), Axis(D, True, 0.0, 60.0))
# The default sweep's points (amnist, profile fast): (name, utility, its band, attacker, its band, PSNR, saturation),
# and two trials at large λ in the lower middle: they leave the old legend (matplotlib's "best" place inside the axes)
# the lower right corner alone, over the digit prototype, as the issue saw it
POINTS = [("alpha=1 lam=0 adv_steps=1", 0.957, (0.943, 0.968), 0.935, (0.917, 0.949), 22.0, 0.949),
          ("alpha=1 lam=100 adv_steps=1", 0.902, (0.881, 0.919), 0.877, (0.856, 0.896), 13.0, 0.979),
          ("alpha=1 lam=300 adv_steps=1", 0.767, (0.739, 0.792), 0.799, (0.771, 0.824), 10.6, 0.888),
          ("alpha=inf lam=100 adv_steps=1", 0.887, (0.865, 0.906), 0.878, (0.855, 0.897), 12.9, np.nan),
          ("alpha=inf lam=300 adv_steps=1", 0.80, (0.77, 0.83), 0.66, (0.63, 0.69), 9.5, np.nan),
          ("alpha=inf lam=1000 adv_steps=1", 0.70, (0.67, 0.73), 0.60, (0.57, 0.63), 8.1, np.nan)]
DOMINATED = np.array([False, True, True, False, True, False])  # by some comparison grid's point, on all three axes
# its comparison grids: (title, the axis its curve follows, [(value, utility, attacker, PSNR)])
GRIDS = [("Gaussian noise", "sigma", [(0.0, 0.978, 1.0, 60.0), (0.3, 0.954, 0.884, 13.3), (0.5, 0.891, 0.857, 9.4),
                                      (1.0, 0.648, 0.771, 6.0)]),
         ("stroke redraw", "radius", [(1.0, 0.938, 0.826, 16.2)]),
         ("digit prototype", "mix", [(0.0, 0.973, 0.623, 12.9)])]  # lower right: under the old legend
IMPUTATION = Imputation(P, 0.624, 0.593, 0.654, "utility", (("prior", 0.5), ("utility", 0.624)))
PER_FIGURE = 30_000  # bytes of an embedded figure, on average, and of the rest of the report: 63 figures then take
TEXT = 100_000  # 2 MB, the default sweep's (it holds 63; each 24 KB on average, the largest 43 KB)


def points() -> pd.DataFrame:
    """The default sweep's point table: its values, their bands, PSNR and saturation."""
    rows = []
    for name, u, (u_low, u_high), p, (p_low, p_high), d, saturation in POINTS:
        rows.append({"name": name, U: u, P: p, D: d, "attack/max/saturation": saturation, band_columns(U)[0]: u_low,
                     band_columns(U)[1]: u_high, band_columns(P)[0]: p_low, band_columns(P)[1]: p_high})
    return pd.DataFrame(rows)


def grids() -> list[tuple[str, pd.DataFrame, str]]:
    """The comparison grids as the front figures take them: (title, points, the axis its curve follows)."""
    return [(title, pd.DataFrame(rows, columns=[key, U, P, D]), key) for title, key, rows in GRIDS]


def default_front(axes: int) -> Figure:
    """The default sweep's front figure on three axes (front.png) or on the first two (front_2d.png)."""
    table = points()
    if axes == 3:
        return sweep_front_figure(table, AXES, pareto_mask(table, AXES), "name", grids(), IMPUTATION, DOMINATED)
    return sweep_front_figure(table, AXES[:2], pareto_mask(table, AXES[:2]), "name", grids(), IMPUTATION)


def outrun_game() -> GameCurves:
    """Eight epochs of a game the releaser outruns, a fresh attacker at every second one: each gap's label starts
    between two epochs' points."""
    epochs = range(1, 9)
    adversary = Curve("adversary", ADVERSARY, "in-game adversary's accuracy", tuple((e, 0.80 - 0.03 * e) for e in epochs))
    utility = Curve("utility", "utility/accuracy", "utility net's accuracy", tuple((e, 0.95 - 0.01 * e) for e in epochs))
    fresh = tuple(Checkpoint(e, 0.86 - 0.01 * e, 0.80 - 0.03 * e, "strongest fresh attacker", 0.83 - 0.01 * e,
                             0.89 - 0.01 * e) for e in epochs[1::2])
    return GameCurves("alpha=1 lam=300 adv_steps=1", (adversary, utility), fresh, tuple((e, 0.9) for e in epochs[1::2]))


def on_screen(fig: Figure) -> np.ndarray:
    """The display coordinates, (n, 2), of every point drawn: scatter plots' points and named lines' markers."""
    found = [c.get_offset_transform().transform(c.get_offsets()) for ax in fig.axes for c in ax.collections
             if isinstance(c, PathCollection) and len(c.get_offsets())]
    found += [line.get_transform().transform(line.get_xydata()) for ax in fig.axes for line in ax.get_lines()
              if line.get_marker() not in ("None", "none", "", " ") and not str(line.get_label()).startswith("_")
              and len(line.get_xydata())]
    drawn = np.concatenate(found)
    return drawn[np.isfinite(drawn).all(axis=1)]


def covered(fig: Figure) -> dict[str, list[tuple[int, int]]]:
    """Each legend and label (by its text) that covers a drawn point, with the points it covers, in display pixels."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = [("legend", legend.get_window_extent(renderer)) for ax in fig.axes if (legend := ax.get_legend())]
    boxes += [(text.get_text(), text.get_window_extent(renderer)) for ax in fig.axes for text in ax.texts
              if text.get_text()]
    drawn = on_screen(fig)
    found = {name: [(round(x), round(y)) for x, y in drawn if box.contains(x, y)] for name, box in boxes}
    return {name: hits for name, hits in found.items() if hits}


@pytest.mark.parametrize("axes", [3, 2], ids=["front", "front_2d"])
def test_no_legend_or_label_of_the_default_front_covers_a_point(axes: int) -> None:
    fig = default_front(axes)
    prototype = fig.axes[0].transData.transform([(0.973, 0.623)])[0]
    assert any(np.allclose(point, prototype) for point in on_screen(fig))  # the point the old legend hid is drawn
    assert covered(fig) == {}
    legend = fig.axes[0].get_legend()
    assert legend is not None and "digit prototype" in [t.get_text() for t in legend.get_texts()]
    assert fig.bbox.contains(*legend.get_window_extent().p0) and fig.bbox.contains(*legend.get_window_extent().p1)


def test_no_legend_or_label_of_a_game_figure_covers_a_point() -> None:
    fig = game_figure(outrun_game())
    assert covered(fig) == {}
    assert sorted(text.get_text() for text in fig.axes[0].texts if text.get_text()) == [
        "gap +0.100", "gap +0.140", "gap +0.180", "gap +0.220"]
    for legend in (ax.get_legend() for ax in fig.axes[:2]):
        assert legend is not None and fig.bbox.contains(*legend.get_window_extent().p0)


def test_an_embedded_figure_takes_a_third_of_its_png_and_keeps_its_pixels() -> None:
    png = io.BytesIO()
    default_front(3).savefig(png, format="png", dpi=DPI)
    webp = compact(png.getvalue())
    assert webp[8:12] == b"WEBP" and len(webp) < len(png.getvalue()) / 3
    original = np.asarray(Image.open(png).convert("RGB"), dtype=int)
    shown = np.asarray(Image.open(io.BytesIO(webp)).convert("RGB"), dtype=int)
    assert np.abs(shown - original).max() <= 8  # legible as drawn
    pale = (original < 250).any(axis=-1) & (original > 240).all(axis=-1)  # e.g. the imputation attacker's band
    assert pale.sum() > 10_000 and (shown[pale] < 255).any(axis=-1).all()  # still tinted, not turned white


def test_the_smoke_sweeps_report_embeds_every_figure_in_a_few_kilobytes(smoke_sweep: SharedSweep) -> None:
    (report,) = (smoke_sweep.folder / "reports").glob("*.html")  # read only: the sweep wrote it
    html = report.read_text(encoding="utf-8")
    figures = re.findall(r'<img alt="([^"]+)" src="data:([^;"]+);base64,([^"]+)"', html)
    assert len(figures) == html.count("<img ")  # every picture embedded, as data
    captions = [caption for caption, _, _ in figures]
    assert {"front", "front 2d", "front by alpha", "trends"} <= set(captions)
    trials = sum(caption.startswith("released") for caption in captions)
    assert trials >= 2 and sum(caption.endswith("game curves") for caption in captions) == trials
    assert {kind for _, kind, _ in figures} == {"image/webp"}
    assert all(base64.b64decode(data)[8:12] == b"WEBP" for _, _, data in figures)
    assert len(html.encode("utf-8")) <= TEXT + PER_FIGURE * len(figures)

"""The game curves of a trial (:mod:`platform.results.game`): one panel per quantity over the epochs, the fresh
attacker's points at the checkpoints beside the in-game adversary's curve with their gap shaded, logged on the trial's
run as ``game/game_curves.png`` when a sweep is published (``platform.publish``). A panel's legend sits under it and
the gaps' labels are moved off the points, so that neither covers one."""
from __future__ import annotations

import textwrap
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from core.legends import legend_below
from platform.figures.labels import PointLabel, place_labels
from platform.results.game import SETTLE_MARGIN, GameCurves, gap_text

FILE = "game_curves.png"
COLUMNS = 3
PANEL = (3.6, 2.7)  # inches per panel
DPI = 100
IN_GAME = {"adversary": "in-game adversary", "utility": "in-game utility net"}  # legends of the panels with fresh points
GAP_WIDTH = 0.18  # half-width, in epochs, of the shaded bar between the in-game adversary and the fresh attacker


def _adversary_panel(ax: Axes, game: GameCurves, margin: float) -> list[PointLabel]:
    """The in-game adversary's curve, the fresh attacker at each checkpoint (with its interval) and the gap shaded:
    red where it exceeds ``margin``, green where the game settles; returns each gap's label, beside its shaded bar."""
    labels = []
    for c in game.checkpoints:
        color = "tab:red" if c.gap > margin else "tab:green"
        ax.fill_between([c.epoch - GAP_WIDTH, c.epoch + GAP_WIDTH], c.in_game, c.fresh, color=color, alpha=0.25, lw=0)
        labels.append(PointLabel(c.epoch + GAP_WIDTH, (c.in_game + c.fresh) / 2, f"gap {gap_text(c.gap)}", color, 7))
    for name in dict.fromkeys(c.attacker for c in game.checkpoints):
        shown = [c for c in game.checkpoints if c.attacker == name]
        errors = [[c.fresh - (c.ci_low if c.ci_low is not None else c.fresh) for c in shown],
                  [(c.ci_high if c.ci_high is not None else c.fresh) - c.fresh for c in shown]]
        ax.errorbar([c.epoch for c in shown], [c.fresh for c in shown], yerr=errors, fmt="D", color="tab:red",
                    ms=5, capsize=3, ls="--" if len(shown) > 1 else "none", label=name)
    return labels


def _panel(ax: Axes, game: GameCurves, index: int, margin: float, xlim: tuple[float, float]) -> list[PointLabel]:
    """One curve's panel over the epochs ``xlim``, with its legend under it where it has fresh points; returns its gap
    labels, to be placed once the figure is laid out."""
    curve = game.curves[index]
    ax.plot(curve.epochs, curve.values, marker="o", ms=4, color="tab:blue", label=IN_GAME.get(curve.key, curve.metric))
    labels = _adversary_panel(ax, game, margin) if curve.key == "adversary" else []
    if curve.key == "utility" and game.fresh_utility:
        ax.plot([e for e, _ in game.fresh_utility], [v for _, v in game.fresh_utility], "s", color="tab:orange", ms=5,
                label="fresh digit classifier (data user)")
    ax.set_title(curve.label, fontsize=9)
    ax.set_xlabel("epoch", fontsize=8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    ax.set_xlim(*xlim)
    if curve.key in IN_GAME:
        legend_below(ax, 6)
    return labels


def plot_game_curves(game: GameCurves, path: str | Path, margin: float = SETTLE_MARGIN) -> Path:
    """PNG of ``game`` (``game_figure``)."""
    game_figure(game, margin).savefig(path, dpi=DPI)
    return Path(path)


def game_figure(game: GameCurves, margin: float = SETTLE_MARGIN) -> Figure:
    """A panel per curve of ``game``, titled with the trial and its verdict at the last checkpoint."""
    rows = -(-len(game.curves) // COLUMNS)
    fig = Figure(figsize=(PANEL[0] * COLUMNS, PANEL[1] * rows + 0.6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, COLUMNS, squeeze=False).ravel()
    epochs = [e for c in game.curves for e in c.epochs]
    labels = {}
    for index, ax in enumerate(axes):
        if index >= len(game.curves):
            ax.set_visible(False)
            continue
        labels[ax] = _panel(ax, game, index, margin, (min(epochs) - 0.5, max(epochs) + 0.8))
    verdict = game.verdict(margin)
    title = f"{game.trial}: " + (verdict.line if verdict else "no checkpoint with a fresh attacker yet")
    fig.suptitle(textwrap.fill(title, 130), fontsize=9)
    fig.tight_layout()
    for ax, found in labels.items():
        place_labels(ax, found)
    return fig

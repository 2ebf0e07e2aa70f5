"""Named sweep presets: mechanism, data, grids per profile, Optuna ranges and Pareto axes.

A preset is plain configuration (one module per preset); the driver in ``platform/`` reads it, and everything it
runs (the trainable, config checks, data counts, baselines, farm inputs, the served release) comes from the preset's
:class:`~trainables.shared.mechanism.Mechanism`. Figures of a whole sweep that only one study needs come from its preset too
(:data:`SweepFigure`): the driver draws them with the summary and knows none of them by name.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.metric_names import DECLARED, PSNR_OF_MSE
from core.pareto_axis import Axis
from search_spaces.grids import Grid, GridSpec, axes, sub_grids

if TYPE_CHECKING:
    import pandas as pd

    from trainables.shared.mechanism import Mechanism


@dataclass(frozen=True)
class Profile:
    """One scale of a preset: config overrides, the grid over the search axes, and trial resources.

    ``grid`` is one dict of axis -> values, or a list of such dicts naming the same axes: the sweep runs the union of
    their cross products (``search_spaces.grids``), e.g. one λ list per α."""

    description: str
    config: dict[str, Any]
    grid: GridSpec
    optuna_samples: int
    cpus_per_trial: float = 1.0

    def __post_init__(self) -> None:
        """Refuse a malformed grid when the preset is defined (a ValueError naming the problem)."""
        sub_grids(self.grid)

    @property
    def grids(self) -> tuple[Grid, ...]:
        """The sub-grids (one for a plain dict)."""
        return sub_grids(self.grid)

    @property
    def axes(self) -> Grid:
        """Each axis with every value it takes in any sub-grid."""
        return axes(self.grids)


@dataclass(frozen=True)
class OptunaRange:
    """A continuous (or integer) range of one search axis for ``--search optuna``."""

    low: float
    high: float
    log: bool = False
    integer: bool = False


@dataclass(frozen=True)
class SweepTrials:
    """What a preset's sweep figures draw from, read by the driver from the sweep's child runs when it publishes."""

    # One row per trial: run_id, name, status, the label keys' params, every latest metric, pareto_front.
    table: pd.DataFrame
    # run_id -> the per-step values of the preset's ``sweep_history`` metrics (index: step, a column per metric).
    histories: Mapping[str, pd.DataFrame] = field(default_factory=dict)


SweepFigure = Callable[[SweepTrials, Path], list[Path]]
"""A figure of a whole sweep, contributed by its preset: ``figure(trials, folder)`` draws into ``folder`` and returns the
files drawn. A file directly in ``folder`` goes on the sweep's parent run under ``front/``; one in ``folder/<run_id>/``
on that trial's own run. It draws from ``trials`` only and never touches the MLflow store; it returns no file where its
metrics are missing."""


@dataclass(frozen=True)
class Front:
    """What a sweep's Pareto front is over: its axes, the objectives ``--search optuna`` steers by, and the grid axis
    whose every value also gets a front of its own."""

    axes: tuple[Axis, ...]  # the front's objectives (a dict of Axis's fields reads as that Axis)
    objectives: tuple[tuple[str, str], ...]  # (metric reported by the trial itself, "max" | "min")
    by: str | None = None  # a grid axis: the sweep report also draws one front per value of it (and the joint one)

    def __post_init__(self) -> None:
        """Each axis given as a dict as its :class:`Axis`."""
        given: tuple[Any, ...] = self.axes
        object.__setattr__(self, "axes", tuple(Axis(**a) if isinstance(a, Mapping) else a for a in given))


@dataclass(frozen=True)
class Farm:
    """The attack farm every checkpoint of the sweep meets."""

    attackers: tuple[str, ...] = ()  # run by the attack farm on every checkpoint
    privacy: tuple[str, ...] = ()  # whose accuracy counts for attack/max/accuracy


@dataclass(frozen=True)
class Presentation:
    """How the sweep is drawn beyond its front."""

    checkpoint_figures: tuple[str, ...] = ()  # PNGs a trial writes into its checkpoints
    trend_metrics: tuple[str, ...] = ()  # plotted against every axis (default: the Pareto axes)
    sweep_figures: tuple[SweepFigure, ...] = ()  # the study's own figures of the whole sweep, drawn when it is published
    sweep_history: tuple[str, ...] = ()  # metrics whose per-step values the sweep figures read (SweepTrials.histories)
    title: str = ""  # how a figure names this preset's curve when it is another's comparison grid (default: its name)


@dataclass(frozen=True)
class Preset:
    """Everything a sweep needs to know about one experiment: what it runs (the mechanism on its data, the base config,
    the profiles' grids, the Optuna ranges), its :class:`Front`, its :class:`Farm` and its :class:`Presentation`."""

    name: str
    mechanism: type[Mechanism]
    dataset: str
    base: dict[str, Any]
    profiles: dict[str, Profile]
    default_profile: str
    optuna: dict[str, OptunaRange]
    label_keys: tuple[str, ...]  # the grid axes, in the order used to name trials
    front: Front
    farm: Farm = Farm()
    presentation: Presentation = Presentation()
    canonical: Callable[[dict], dict] | None = None  # maps a grid point to its representative (equivalent points run once)
    # presets whose grids run beside this one's on its data, drawn on the front and compared with it (amnist: noise,
    # the stroke redraw and the digit prototype; platform.results.comparison_grid); a sweep skips them with
    # --no-comparison-grids. One name alone (a preset written before there could be several) reads as a tuple of one.
    comparison_grids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """A single comparison grid's name (or None) as the tuple of names it means; a ValueError naming an axis or
        objective whose metric no one declared."""
        named: Any = self.comparison_grids
        if named is None or isinstance(named, str):
            object.__setattr__(self, "comparison_grids", (named,) if named else ())
        check_metrics(self)

    @property
    def mechanism_name(self) -> str:
        """The mechanism's label on runs and operating points, e.g. "releaser"."""
        return self.mechanism.name

    @property
    def trainable(self) -> Callable[[dict], None]:
        """The Ray Tune function trainable of the mechanism."""
        from trainables.shared.tune_loop import run_trial

        return run_trial(self.mechanism)

    @property
    def validate(self) -> Callable[[dict], dict[str, Any]]:
        """config -> the config with typed values; raises a one-line ValueError."""
        return _plain(self.mechanism, "validate")

    @property
    def data_counts(self) -> Callable[[dict], dict[str, int]]:
        """config -> sizes of the data a trial uses (raises early if there is none)."""
        return _plain(self.mechanism, "data_counts")

    @property
    def raw_references(self) -> Callable[[dict], dict[str, float]] | None:
        """config -> raw-data reference points, logged on the parent (None: the mechanism has none)."""
        return self._offered("RAW_REFERENCE", "raw_references")

    @property
    def checkpoint_inputs(self) -> Callable[[dict, str], Any] | None:
        """(config, checkpoint dir) -> attacks.base.CheckpointInputs (None: nothing for the attack farm)."""
        return self._offered("FARM", "checkpoint_inputs")

    @property
    def load_release(self) -> Callable[[dict, str], Any] | None:
        """(config, checkpoint dir) -> trainables.shared.release_map.ReleaseMap (None: nothing to serve)."""
        return self._offered("SERVE", "load_release")

    @property
    def audit_input(self) -> Callable[[dict, int], Any] | None:
        """(config, records) -> the unreleased attacks.base.AttackInput a served point is audited with (None: none)."""
        return self._offered("AUDIT", "audit_input")

    def _offered(self, capability: str, entry: str) -> Callable[..., Any] | None:
        """The mechanism's ``entry`` as a plain function where it declares the ``trainables.shared.mechanism.Capability`` named
        ``capability``, else None (imported here: naming a preset loads no torch)."""
        from trainables.shared.mechanism import Capability

        return _plain(self.mechanism, entry) if Capability[capability] in self.mechanism.capabilities else None


def check_metrics(preset: Preset) -> None:
    """Every metric the preset's axes and Optuna objectives name is one of ``core.metric_names.DECLARED`` or one its
    mechanism declares (``Mechanism.metrics``): else a one-line ValueError naming it."""
    known = DECLARED | set(preset.mechanism.metrics)
    named = [("Pareto axis", axis.metric) for axis in preset.front.axes]
    named += [("Optuna objective", metric) for metric, _ in preset.front.objectives]
    for role, metric in named:
        if metric not in known:
            raise ValueError(f"preset {preset.name!r}: {role} metric {metric!r} is neither in core.metric_names.DECLARED "
                             f"nor in {preset.mechanism.__name__}.metrics")


def _plain(mechanism: type[Mechanism], method: str) -> Callable[..., Any]:
    """The classmethod ``mechanism.method`` as a plain function (``ray.remote`` takes functions, not methods)."""

    def call(*args: Any) -> Any:
        return getattr(mechanism, method)(*args)

    call.__name__ = f"{mechanism.__name__}.{method}"
    return call


PSNR_AXIS = Axis(PSNR_OF_MSE, higher_is_better=True, bound=0.0, ideal=60.0)
"""The image fronts' distortion objective: the PSNR of the release's mean squared error against the raw images in dB
(``core.image_quality``), from 0 dB (a per-pixel MSE of 1, the worst of images in [0, 1]) to 60 dB (an exact copy). It
averages over records, so a per-record mix of releases has the mix of their MSEs (the mean of per-image PSNRs, logged
as ``utility/psnr``, rewards a release that copies some records and wrecks others). Without it a release that keeps only
what the front's two other axes score, such as each image's class mean, would pass for a good mechanism."""


def lambda_zero_anchor(point: dict[str, Any]) -> dict[str, Any]:
    """Every α trains the same game at λ = 0 (the privacy term has weight 0): represent them all by α = 1, so a sweep
    runs one λ = 0 trial (per seed) however many α (or per-α λ lists) its grid has, and every α's front starts there."""
    return {**point, "alpha": 1.0} if point.get("lam") == 0 else point


def presets() -> dict[str, Preset]:
    """All presets by name: every module of ``search_spaces`` that defines ``PRESET``, then those installed packages
    publish in the ``putlab.presets`` entry-point group (core.plugins; imported lazily: each pulls in its trainable and
    torch); a name taken twice is a PluginClash."""
    from search_spaces.plugins import PRESETS

    return PRESETS.discover()

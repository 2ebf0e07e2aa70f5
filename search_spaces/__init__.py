"""Named sweep presets: mechanism, data, grids per profile, Optuna ranges and Pareto axes.

A preset is plain configuration (one module per preset); the driver in ``platform/`` reads it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Profile:
    """One scale of a preset: config overrides, the grid over the search axes, and trial resources."""

    description: str
    config: dict[str, Any]
    grid: dict[str, list]
    optuna_samples: int
    cpus_per_trial: float = 1.0


@dataclass(frozen=True)
class OptunaRange:
    """A continuous (or integer) range of one search axis for ``--search optuna``."""

    low: float
    high: float
    log: bool = False
    integer: bool = False


@dataclass(frozen=True)
class Preset:
    """Everything a sweep needs to know about one experiment."""

    name: str
    mechanism: str
    dataset: str
    trainable: Callable[[dict], None]
    validate: Callable[[dict], dict[str, Any]]  # raises ValueError; returns the config with typed values
    base: dict[str, Any]
    profiles: dict[str, Profile]
    default_profile: str
    optuna: dict[str, OptunaRange]
    pareto_axes: tuple[dict[str, Any], ...]
    data_counts: Callable[[dict], dict[str, int]]
    optuna_objectives: tuple[tuple[str, str], ...]  # (metric reported by the trial itself, "max" | "min")
    label_keys: tuple[str, ...]  # the grid axes, in the order used to name trials
    baselines: Callable[[dict], dict[str, float]] | None = None  # raw-data reference points, logged on the parent
    checkpoint_inputs: Callable[[dict, str], Any] | None = None  # (config, dir) -> attacks.base.CheckpointInputs
    farm_attackers: tuple[str, ...] = ()  # run by the attack farm on every checkpoint
    privacy_attackers: tuple[str, ...] = ()  # whose accuracy counts for attack/max/accuracy
    checkpoint_figures: tuple[str, ...] = ()  # PNGs a trial writes into its checkpoints
    trend_metrics: tuple[str, ...] = ()  # plotted against every axis (default: the Pareto axes)
    sweep_figures: tuple[str, ...] = ()  # driver-drawn figures on the parent run (platform.sweep_report.SWEEP_FIGURES)
    load_release: Callable[[dict, str], Any] | None = None  # (config, checkpoint dir) -> trainables.release_map.ReleaseMap
    canonical: Callable[[dict], dict] | None = None  # maps a grid point to its representative (equivalent points run once)


def lambda_zero_anchor(point: dict[str, Any]) -> dict[str, Any]:
    """Every α trains the same game at λ = 0 (the privacy term has weight 0): represent them all by α = 1."""
    return {**point, "alpha": 1.0} if point.get("lam") == 0 else point


def presets() -> dict[str, Preset]:
    """All presets by name (imported lazily: each pulls in its trainable and torch)."""
    from search_spaces import adult_membership, amnist, amnist_privatizer, cloak_mnist, eco, eco_si, gmm

    return {p.name: p for p in (amnist.PRESET, amnist_privatizer.PRESET, adult_membership.PRESET, gmm.PRESET,
                                cloak_mnist.PRESET, eco.PRESET, eco_si.PRESET)}

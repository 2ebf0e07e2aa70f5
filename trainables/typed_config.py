"""A frozen dataclass base for trial configs: typed values, unknown keys and out-of-range values rejected in one line.

Besides each config's own ``checks``, every config gets the same generic guards: numbers must be finite (NaN never,
infinity only for the fields a config lists in ``infinite``), every numeric field has sensible bounds looked up by
name in :data:`FIELD_BOUNDS` (e.g. ``epochs`` at most 10,000, ``width`` at least 1), and ``data_root`` must be a
folder (missing is allowed only where the config downloads into it).
"""
from __future__ import annotations

import math
from dataclasses import asdict, fields
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, ClassVar, TypeVar

C = TypeVar("C", bound="TypedConfig")

# (field-name pattern, lowest, highest): the first pattern matching a numeric field bounds it, in every config.
FIELD_BOUNDS: tuple[tuple[str, float, float], ...] = (
    ("seed", 0, 2**31 - 1),
    ("data_seed", 0, 2**31 - 1),
    ("kill_worker_after_epoch", -1, 10_000),  # a test hook: -1 = never
    ("*epochs", 0, 10_000),
    ("adv_steps", 0, 1_000),
    ("estimator_steps", 0, 1_000),
    ("*steps", 0, 1_000_000),
    ("n_train", 0, 10_000_000),
    ("n_test", 0, 10_000_000),
    ("n", 0, 10_000_000),
    ("*_samples", 0, 10_000_000),
    ("mc_runs", 0, 100_000),
    ("batch_size", 1, 65_536),
    ("width", 1, 1_024),
    ("hidden", 1, 4_096),
    ("*_hidden", 1, 4_096),
    ("*_layers", 1, 64),
    ("noise_channels", 0, 256),
    ("noise_dim", 0, 4_096),
    ("threads", 1, 1_024),
    ("*lr", 0, 10),
    ("*_weight", 0, 1e6),
    ("samples_in_figure", 0, 64),
    ("figure_days", 1, 366),
    ("*_every", 0, 1_000_000),
)
INT_LIMIT = 10**9  # any other whole number: |value| <= this (sizes, counts, draws)
FLOAT_LIMIT = 1e9  # any other real number: |value| <= this (weights, scales, thresholds)


def coerce(name: str, value: object, default: object) -> object:
    """Convert ``value`` to the type of the field's default (None allowed where the default is None)."""
    if value is None and default is None:
        return None
    kind = int if default is None else type(default)
    if kind is bool and isinstance(value, bool) or kind is str and isinstance(value, str):
        return value
    if kind in (int, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and math.isnan(value):
            raise ValueError(f"{name} must be a number, not NaN")
        if kind is int and (math.isinf(value) or value != int(value)):
            raise ValueError(f"{name} must be a finite whole number (got {value!r})")
        return kind(value)
    expected = "a number" if kind in (int, float) else f"a {kind.__name__}"
    raise ValueError(f"{name} must be {expected} (got {value!r})")


def bounds_of(name: str, kind: type) -> tuple[float, float]:
    """The (lowest, highest) allowed value of a numeric field: :data:`FIELD_BOUNDS` by name, else the generic limit."""
    for pattern, low, high in FIELD_BOUNDS:
        if fnmatchcase(name, pattern):
            return low, high
    limit = INT_LIMIT if kind is int else FLOAT_LIMIT
    return -limit, limit


def check_bounds(name: str, value: object, infinite: bool) -> None:
    """ValueError naming ``name`` when a numeric value is infinite (unless allowed) or outside its bounds."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return
    if math.isinf(value):
        if infinite:
            return
        raise ValueError(f"{name} must be finite (got {value})")
    low, high = bounds_of(name, type(value))
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{number(low)}, {number(high)}] (got {number(value)})")


def number(value: float) -> str:
    """A bound or value as people write it: 2147483647, 0.001, 1e+308."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def check_data_root(root: str, download: bool) -> None:
    """ValueError when ``data_root`` is set but is a file, or missing where nothing downloads into it."""
    if not root:
        return
    path = Path(root).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"data_root {root} is not a directory")
    if not path.exists() and not download:
        raise ValueError(f"data_root {root} does not exist (create it, set download=true, or leave it empty)")


class TypedConfig:
    """Mixin for ``@dataclass(frozen=True)`` configs; subclasses list their range checks in ``checks``."""

    kind: ClassVar[str] = "config"
    infinite: ClassVar[frozenset[str]] = frozenset()  # float fields where inf is meaningful (e.g. α = ∞)

    @classmethod
    def from_dict(cls: type[C], config: dict[str, Any]) -> C:
        """Build from a Tune config, rejecting unknown keys and out-of-range values with one line."""
        unknown = sorted(set(config) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"unknown {cls.kind} config key(s): {', '.join(unknown)}")
        cfg = cls(**{k: coerce(k, v, getattr(cls, k)) for k, v in config.items()})
        for f in fields(cls):
            check_bounds(f.name, getattr(cfg, f.name), f.name in cls.infinite)
        check_data_root(getattr(cfg, "data_root", ""), bool(getattr(cfg, "download", False)))
        for ok, message in cfg.checks():
            if not ok:
                raise ValueError(message)
        return cfg

    @classmethod
    def normalise(cls, config: dict[str, Any]) -> dict[str, Any]:
        """Validate ``config`` and return it with every value in its field's type (2 -> 2.0 for a float)."""
        return cls.from_dict(config).as_dict()

    def checks(self) -> list[tuple[bool, str]]:
        """(condition, message naming the value) pairs; the first false one is raised."""
        return []

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (for MLflow params and checkpoints)."""
        return asdict(self)

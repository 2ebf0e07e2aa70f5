"""A frozen dataclass base for trial configs: typed values, unknown keys and out-of-range values rejected in one line."""
from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any, ClassVar, TypeVar

C = TypeVar("C", bound="TypedConfig")


def coerce(name: str, value: object, default: object) -> object:
    """Convert ``value`` to the type of the field's default (None allowed where the default is None)."""
    if value is None and default is None:
        return None
    kind = int if default is None else type(default)
    if kind is bool and isinstance(value, bool) or kind is str and isinstance(value, str):
        return value
    if kind in (int, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
        if kind is int and value != int(value):
            raise ValueError(f"{name} must be a whole number (got {value!r})")
        return kind(value)
    expected = "a number" if kind in (int, float) else f"a {kind.__name__}"
    raise ValueError(f"{name} must be {expected} (got {value!r})")


class TypedConfig:
    """Mixin for ``@dataclass(frozen=True)`` configs; subclasses list their range checks in ``checks``."""

    kind: ClassVar[str] = "config"

    @classmethod
    def from_dict(cls: type[C], config: dict[str, Any]) -> C:
        """Build from a Tune config, rejecting unknown keys and out-of-range values with one line."""
        unknown = sorted(set(config) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"unknown {cls.kind} config key(s): {', '.join(unknown)}")
        cfg = cls(**{k: coerce(k, v, getattr(cls, k)) for k, v in config.items()})
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

"""How a trial config's problems read: one :class:`ConfigError` (a ValueError) with one line per problem, each naming
the field, what it must be (its bounds read from the field's own constraints, e.g. "must be in [0, 1]") and the value
given; the few helpers that write those lines.
"""
from __future__ import annotations

import math
import types
import typing
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

if TYPE_CHECKING:
    from core.config import TrialConfig

class ConfigError(ValueError):
    """Every problem of one config, one line each: ``field: what is wrong (got value)``."""

    def __init__(self, model: type[TrialConfig], error: ValidationError) -> None:
        self.lines = [line for details in error.errors() for line in describe(model, details)]
        super().__init__("\n".join(self.lines))


def describe(model: type[TrialConfig], error: ErrorDetails) -> list[str]:
    """One pydantic error as the lines of :class:`ConfigError`."""
    name = ".".join(str(part) for part in error["loc"])
    kind, value = error["type"], error.get("input")
    if kind == "value_error":
        message = str(error.get("ctx", {}).get("error", error["msg"]))
        return message.splitlines() if not name else [f"{name}: {message} (got {shown(value)})"]
    if kind == "extra_forbidden":
        return [f"{name}: unknown {model.kind} config key"]
    if kind == "missing":
        return [f"{name}: required"]
    if kind == "finite_number":
        message = "must be a number, not NaN" if isinstance(value, float) and math.isnan(value) else "must be finite"
    elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        message = bounds_text(model, name) or error["msg"]
    else:
        message = MESSAGES.get(kind, error["msg"]).format(**error.get("ctx", {}))
    return [f"{name}: {message} (got {shown(value)})"]
MESSAGES = {
    "int_type": "must be a whole number",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "literal_error": "must be {expected}",
}


def problem(name: str, message: str, value: object) -> str:
    """A cross-field problem in the same form as a field's: ``name: message (got value)``."""
    return f"{name}: {message} (got {shown(value)})"


def shown(value: object) -> str:
    """A value as the user wrote it: 0.5, 1e+308, 'wide'."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, int) and abs(value) >= 10**15:
        return f"{float(value):g}"
    return repr(value)


def number(value: float) -> str:
    """A bound as people write it: 2147483647, 0.001, 1e+09 stays 1000000000."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def interval(low: float | None, low_open: bool, high: float | None, high_open: bool) -> str:
    """How bounds read: ``[0, 10000]``, ``(0, 1)``, ``> 0``, ``<= 1`` (empty without bounds)."""
    if low is not None and high is not None:
        return f"{'(' if low_open else '['}{number(low)}, {number(high)}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {number(low)}"
    if high is not None:
        return f"{'<' if high_open else '<='} {number(high)}"
    return ""


def bounds_text(model: type[TrialConfig], name: str) -> str:
    """``must be in [0, 10000]``, ``must be > 0``, ... from the field's JSON schema (the bounds declared once)."""
    text = interval(*field_bounds(model, name))
    if not text:
        return ""
    return f"must be in {text}" if text[0] in "[(" else f"must be {text}"


def field_bounds(model: type[TrialConfig], name: str) -> tuple[float | None, bool, float | None, bool]:
    """(low, low exclusive, high, high exclusive) of a numeric field, read from the model's JSON schema."""
    spec = model.model_json_schema()["properties"].get(name, {})
    for option in spec.get("anyOf", [spec]):
        if option.get("type") in ("integer", "number"):
            spec = option
    low = spec.get("exclusiveMinimum", spec.get("minimum"))
    high = spec.get("exclusiveMaximum", spec.get("maximum"))
    return low, "exclusiveMinimum" in spec, high, "exclusiveMaximum" in spec


@cache
def int_fields(model: type[TrialConfig]) -> frozenset[str]:
    """Names of the fields annotated ``int`` (or ``int | None``)."""
    return frozenset(name for name, info in model.model_fields.items() if is_int(info.annotation))


def is_int(annotation: Any) -> bool:
    """Whether an annotation is ``int``, possibly Annotated or optional (bool is not an int here)."""
    if typing.get_origin(annotation) is Annotated:
        return is_int(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(is_int(arg) for arg in typing.get_args(annotation))
    return annotation is int

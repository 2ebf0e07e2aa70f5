"""A preset's config fields (type, default, bounds, description) read from its model's JSON schema, as text or Markdown.

``python -m platform.sweep <preset> --config-schema`` prints them; ``scripts/config_docs.py`` writes
docs/configuration.md from the same rows, so a field is documented once, in its model's ``Field(description=...)``.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from core.config import TrialConfig
from core.config_errors import interval
from platform.errors import UsageError
from search_spaces import Preset

TYPES = {"integer": "int", "number": "float", "string": "str", "boolean": "bool", "null": "None"}


@dataclass(frozen=True)
class FieldDoc:
    """One config field as the documentation shows it."""

    name: str
    type: str
    default: str
    bounds: str
    description: str


def config_model(preset: Preset) -> type[TrialConfig]:
    """The config model of the preset's mechanism (it validates every grid point)."""
    model = preset.mechanism.config_class
    if not (isinstance(model, type) and issubclass(model, TrialConfig)):
        raise UsageError(f"preset {preset.name!r}: its mechanism's config_class {model!r} is not a TrialConfig model")
    return model


def field_docs(model: type[TrialConfig], values: dict[str, Any] | None = None) -> list[FieldDoc]:
    """Every field of ``model``, its own before the shared groups'; ``values`` (e.g. a preset's base) replace the defaults."""
    properties = model.model_json_schema()["properties"]
    own = [name for name in model.__annotations__ if name in properties]
    rows = []
    for name in [*own, *(name for name in properties if name not in own)]:
        spec = properties[name]
        options = spec.get("anyOf", [spec])
        default = (values or {}).get(name, spec.get("default"))
        rows.append(FieldDoc(name, " or ".join(type_of(o) for o in options), shown_default(default),
                             ", ".join(filter(None, (bounds_of(o) for o in options))), spec.get("description", "")))
    return rows


def type_of(spec: dict[str, Any]) -> str:
    """``int``, ``float``, ``str``, ``one of 'a', 'b'``."""
    if "enum" in spec:
        return "one of " + ", ".join(json.dumps(v) for v in spec["enum"])
    return TYPES.get(spec.get("type", ""), spec.get("type", "any"))


def bounds_of(spec: dict[str, Any]) -> str:
    """``[1, 10000]``, ``> 0``, ``(0, 1)``: the interval a number must lie in (empty for other types)."""
    low = spec.get("exclusiveMinimum", spec.get("minimum"))
    high = spec.get("exclusiveMaximum", spec.get("maximum"))
    return interval(low, "exclusiveMinimum" in spec, high, "exclusiveMaximum" in spec)


def shown_default(value: Any) -> str:
    """A default as it is written on the command line (``--set key=value``)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return "inf" if math.isinf(value) else f"{value:g}"
    return json.dumps(value) if isinstance(value, str) and not value else str(value)


def text_table(preset: Preset) -> str:
    """The preset's fields as aligned plain text for the terminal."""
    model = config_model(preset)
    rows = field_docs(model, preset.base)
    header = FieldDoc("field", "type", "value", "bounds", "description")
    widths = [max(len(getattr(r, k)) for r in [header, *rows]) for k in ("name", "type", "default", "bounds")]
    lines = [f"config of preset {preset.name} ({model.__name__}; set with --set KEY=VALUE):"]
    for r in [header, *rows]:
        cells = (r.name, r.type, r.default, r.bounds)
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + "  " + r.description)
    return "\n".join(lines)


def markdown_table(model: type[TrialConfig]) -> str:
    """The model's fields as a Markdown table (docs/configuration.md)."""
    lines = ["| field | type | default | bounds | description |", "|---|---|---|---|---|"]
    for r in field_docs(model):
        cells = (f"`{r.name}`", r.type, f"`{r.default}`", r.bounds, r.description)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)

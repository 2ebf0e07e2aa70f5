"""Resolve a preset, a profile and ``--set`` overrides into one validated sweep specification."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from core.config_errors import shown
from platform.errors import UsageError
from search_spaces import Preset, grids, presets
from search_spaces.plugins import load_preset_file

MAX_GRID_POINTS = 100_000  # the most trials a sweep may plan: larger grids are refused before they are built


@dataclass(frozen=True)
class SweepSpec:
    """What one sweep runs: fixed config, the grid's sub-grids (``search_spaces.grids``), and the preset it came from."""

    preset: Preset
    profile: str
    config: dict[str, Any]
    grids: tuple[dict[str, list], ...]

    @property
    def grid(self) -> dict[str, list]:
        """Each grid axis with every value it takes in any sub-grid (the axes trials are named and searched by)."""
        return grids.axes(self.grids)

    @property
    def grid_param(self) -> dict[str, list] | list[dict[str, list]]:
        """The grid as the parent run records it: the one dict, or the list of sub-grids."""
        return self.grids[0] if len(self.grids) == 1 else list(self.grids)

    def with_axis(self, key: str, values: list) -> SweepSpec:
        """The spec with grid axis ``key`` set to ``values`` in every sub-grid (and no longer a fixed config value)."""
        config = {k: v for k, v in self.config.items() if k != key}
        return replace(self, config=config, grids=grids.with_axis(self.grids, key, values))

    def size_bound(self) -> int:
        """The number of grid points before equivalent ones collapse (from the axes' lengths, no point built)."""
        return sum(math.prod(len(values) for values in sub.values()) for sub in self.grids)

    def product_points(self) -> list[dict[str, Any]]:
        """The union of the sub-grids' cross products, equivalent points included (what ``--set`` values are checked
        on)."""
        return [{**self.config, **point} for point in grids.expand(self.grids)]

    def grid_points(self) -> list[dict[str, Any]]:
        """Every distinct trial configuration of the grid (the union of the sub-grids' cross products).

        Points the preset declares equivalent (e.g. every α at λ = 0 trains the same releaser) collapse into
        one, so a sweep never trains the same thing twice.
        """
        points = self.product_points()
        if self.preset.canonical is None:
            return points
        unique = {repr(sorted(p.items())): p for p in map(self.preset.canonical, points)}
        return list(unique.values())


def parse_value(text: str) -> Any:
    """A ``--set`` value: none, true/false, int, float (inf allowed), else the string itself."""
    lowered = text.strip().lower()
    if lowered in ("none", "null"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("inf", "+inf", "infinity", "∞"):
        return math.inf
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


def parse_overrides(items: Sequence[str]) -> dict[str, str]:
    """``["key=value", ...]`` into a dict of raw strings; a malformed item is a UsageError."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set expects key=value, got {item!r}")
        out[key.strip()] = value
    return out


def get_preset(name: str | None) -> Preset:
    """The preset called ``name``, or a UsageError listing the known ones."""
    try:
        known = presets()
    except ValueError as exc:  # an installed package's preset that does not load or clashes
        raise UsageError(str(exc)) from None
    if name not in known:
        raise UsageError(f"unknown preset {name!r}; known presets: {', '.join(sorted(known))}")
    return known[name]


def preset_from_file(path: str) -> Preset:
    """The ``PRESET`` of a user's preset file (search_spaces.plugins.load_preset_file), or a one-line UsageError."""
    try:
        return load_preset_file(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def preset_of(params: dict[str, Any]) -> Preset:
    """The preset of a sweep from its parent run's params: its ``preset_file`` if it has one, else its ``preset``."""
    return preset_from_file(params["preset_file"]) if params.get("preset_file") else get_preset(params["preset"])


def resolve(preset_name: str | None, profile: str | None, overrides: Sequence[str],
            preset_file: str | None = None) -> SweepSpec:
    """Preset (by name, or from ``preset_file``) defaults, then the profile, then ``--set``; every grid point validated
    before anything runs."""
    if preset_file:
        preset = preset_from_file(preset_file)
    elif preset_name is None:
        raise UsageError("give a preset name or --preset-file PATH (exactly one)")
    else:
        preset = get_preset(preset_name)
    profile = profile or preset.default_profile
    if profile not in preset.profiles:
        raise UsageError(f"unknown profile {profile!r} for preset {preset.name!r}; known: {', '.join(preset.profiles)}")
    chosen = preset.profiles[profile]
    config = {**preset.base, **chosen.config}
    spec = SweepSpec(preset, profile, config, chosen.grids)
    given = parse_overrides(overrides)
    for key, raw in given.items():
        if key in spec.grid or (key == "seed" and "," in raw):  # a seed list replicates every point (platform.plan.seed_axis)
            spec = spec.with_axis(key, [parse_value(part) for part in raw.split(",")])  # in every sub-grid
        elif key in config and "," in raw and not any(isinstance(parse_value(part), str) for part in raw.split(",")):
            raise UsageError(f"invalid value in preset {preset.name!r}: {key}: takes one value, not a list (got {raw!r}); "
                             f"the grid axes take lists: {', '.join(spec.grid)}")
        elif key in config:
            spec = replace(spec, config={**spec.config, key: parse_value(raw)})
        else:
            raise UsageError(f"unknown override key {key!r} for preset {preset.name!r}; "
                             f"known: {', '.join(sorted({*config, *spec.grid}))}")
    spec = replace(spec, config={k: v for k, v in spec.config.items() if k not in spec.grid})
    if spec.size_bound() > MAX_GRID_POINTS:  # before each point is validated, which would take minutes
        raise UsageError(f"the grid has {spec.size_bound()} points, more than {MAX_GRID_POINTS}: narrow the --set lists")
    return typed_spec(spec, written(given))


def written(given: Mapping[str, str]) -> dict[tuple[str, str], str]:
    """How the user wrote each number, boolean or none ``--set`` gives, by (key, each way a problem may show the value
    parsed): so a problem quotes ``99999999999999999999999`` and ``1e400``, not ``1e+23`` and ``inf``."""
    texts: dict[tuple[str, str], str] = {}
    for key, raw in given.items():
        for part in raw.split(","):
            value = parse_value(part)
            if not isinstance(value, str):
                whole = isinstance(value, float) and value.is_integer()  # an int field shows it as a whole number
                texts |= {(key, form): part.strip() for form in {shown(value), *([shown(int(value))] if whole else [])}}
    return texts


def quoted(problem: str, texts: Mapping[tuple[str, str], str]) -> str:
    """``problem`` (``key: message (got value)``) quoting the user's text of the value, where ``--set`` gave it."""
    head, sep, got = problem.rpartition(" (got ")
    text = texts.get((problem.partition(": ")[0], got.removesuffix(")")))
    return f"{head} (got {text})" if sep and text is not None else problem


def typed_spec(spec: SweepSpec, texts: Mapping[tuple[str, str], str] = MappingProxyType({})) -> SweepSpec:
    """The spec with its config and every sub-grid's values typed by the preset's config (``validated``: all problems
    of all sub-grids reported at once, quoting ``texts``: how the user wrote a value)."""
    per_sub = [[{**spec.config, **point} for point in grids.expand([sub])] for sub in spec.grids]
    typed = iter(validated(spec.preset, [point for points in per_sub for point in points], texts))
    subs = []
    for sub, points in zip(spec.grids, per_sub, strict=True):
        chunk = [next(typed) for _ in points]
        subs.append({k: list(dict.fromkeys(point[k] for point in chunk)) for k in sub})
    config = {k: v for k, v in chunk[0].items() if k not in spec.grid}
    return replace(spec, config=config, grids=grids.sub_grids(subs))


def validated(preset: Preset, points: list[dict[str, Any]],
              texts: Mapping[tuple[str, str], str] = MappingProxyType({})) -> list[dict[str, Any]]:
    """Every point typed by the preset's config; else one UsageError listing each distinct problem on its own line
    (quoting ``texts``, see :func:`written`)."""
    typed: list[dict[str, Any]] = []
    problems: list[str] = []
    for point in points:
        try:
            typed.append(preset.validate(point))
        except (ValueError, TypeError) as exc:
            problems.extend(quoted(line, texts) for line in str(exc).splitlines())
    problems = list(dict.fromkeys(problems))  # a bad fixed value fails every grid point the same way
    if len(problems) == 1:
        raise UsageError(f"invalid value in preset {preset.name!r}: {problems[0]}")
    if problems:
        raise UsageError(f"{len(problems)} invalid values in preset {preset.name!r}:\n" + "\n".join(f"  {p}" for p in problems))
    return typed

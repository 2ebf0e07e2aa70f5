"""Presets from outside putlab: a preset file (``--preset-file``) and the ``putlab.presets`` entry points of installed
packages.

A preset file is a Python file defining ``PRESET``; its folder is on ``sys.path`` while it loads, so it can import its
sibling modules (its mechanism). Every module loaded from that folder is then pickled by value for Ray
(``ray.cloudpickle.register_pickle_by_value``): Tune trials, the attack farm and baselines unpickle the user's
mechanism class on workers where those modules are not importable (another node, or a worker without that folder).
"""
from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path

from core.files.source import InputFileError
from core.messages import first_line
from core.plugins import PluginKind
from search_spaces import Preset

PRESETS: PluginKind[Preset] = PluginKind("preset", "search_spaces", "PRESET", "putlab.presets", Preset,
                                         lambda preset: preset.name)


def module_name(path: Path) -> str:
    """The module name a preset file loads under: its stem and a digest of its absolute path (unique per file)."""
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    return f"putlab_preset_{stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"


def load_preset_file(path: str | Path) -> Preset:
    """The ``PRESET`` of the Python file at ``path``, its modules registered for pickling by value.

    Raises a one-line InputFileError (a ValueError) when the file is missing, fails to import, or has no Preset called
    ``PRESET``.
    """
    path = Path(path).expanduser().resolve()
    source = f"preset file {path}"
    if path.is_dir():
        raise InputFileError(source, "is a folder: give the Python file that defines PRESET")
    if not path.is_file():
        raise InputFileError(source, "does not exist")
    name = module_name(path)
    if name not in sys.modules:
        _import(path, name)
    preset = getattr(sys.modules[name], "PRESET", None)
    if not isinstance(preset, Preset):
        found = "no PRESET" if preset is None else f"PRESET is a {type(preset).__name__}"
        raise InputFileError(source, f"must define PRESET = search_spaces.Preset(...) ({found})")
    return preset


def _import(path: Path, name: str) -> None:
    """Execute the file as module ``name`` with its folder importable, then pickle its folder's modules by value."""
    from ray import cloudpickle

    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputFileError(f"preset file {path}", "is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    saved = list(sys.path)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's code: any failure is one line naming the file
        del sys.modules[name]
        raise InputFileError(f"preset file {path}", f"does not import: {type(exc).__name__}: {first_line(exc)}"
                                                    f"{regrouped(exc)}") from None
    finally:
        sys.path[:] = saved  # workers must not depend on it: the modules travel by value
    for loaded in [m for m in list(sys.modules.values()) if _lies_in(m, path.parent)]:
        cloudpickle.register_pickle_by_value(loaded)


def _lies_in(module: object, folder: Path) -> bool:
    """Whether ``module`` was loaded from a file directly in ``folder``."""
    file = getattr(module, "__file__", None)
    if not file:
        return False
    return Path(file).resolve().parent == folder


# Preset keywords of before the preset had typed parts, and where each went.
REGROUPED = {"pareto_axes": "front=Front(axes=...)", "optuna_objectives": "front=Front(objectives=...)",
             "front_by": "front=Front(by=...)", "farm_attackers": "farm=Farm(attackers=...)",
             "privacy_attackers": "farm=Farm(privacy=...)", "checkpoint_figures": "presentation=Presentation(...)",
             "trend_metrics": "presentation=Presentation(...)", "sweep_figures": "presentation=Presentation(...)",
             "sweep_history": "presentation=Presentation(...)", "title": "presentation=Presentation(title=...)",
             "baseline": "comparison_grids=..."}


def regrouped(exc: Exception) -> str:
    """Where an old flat Preset keyword that ``exc`` refuses went (docs/extending.md), or nothing."""
    found = re.search(r"unexpected keyword argument '(\w+)'", str(exc)) if isinstance(exc, TypeError) else None
    if found is None or found.group(1) not in REGROUPED:
        return ""
    return f" ({found.group(1)} is now {REGROUPED[found.group(1)]}: see docs/extending.md)"


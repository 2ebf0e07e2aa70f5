"""Data files shipped inside installed wheels, located without importing their packages (docs/data.md)."""
from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path


def packaged_folder(package: str, relative: str, names: tuple[str, ...]) -> Path | None:
    """``<package>/<relative>`` when it holds every file in ``names``, else None (package missing too)."""
    spec = find_spec(package)
    if spec is None:
        return None
    folders = list(spec.submodule_search_locations or [])
    if not folders and spec.origin:
        folders = [str(Path(spec.origin).parent)]
    for folder in folders:
        candidate = Path(folder) / relative
        if all((candidate / name).is_file() for name in names):
            return candidate
    return None

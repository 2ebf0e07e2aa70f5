"""Files putlab writes for a later reader (caches, fits, data): written through a temporary sibling renamed over the
final name, so a concurrent reader sees all of a file or none of it, and read back as tensors and plain values only
(``weights_only``: no pickled code runs from a shared folder), a missing or damaged file reading as None."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import torch


def write_atomically(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """``write`` a new file at ``path`` (its folder made if needed) through a temporary sibling and ``os.replace``;
    the sibling is opened with "xb", so the file gets the umask's permissions like any other."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(tmp, "xb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def save_atomically(path: Path, state: object) -> None:
    """``torch.save(state)`` to ``path`` through :func:`write_atomically`."""
    write_atomically(path, lambda f: torch.save(state, f))


def load_saved(path: Path, map_location: str | torch.device = "cpu") -> Any | None:
    """What :func:`save_atomically` stored at ``path`` (tensors and plain values only), or None when it is missing or
    unreadable (the caller computes it again)."""
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except Exception:  # noqa: BLE001 - any damaged file is computed again
        return None

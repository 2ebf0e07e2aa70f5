"""The version of the code that computes a result, for the keys of stored results (comparison trials, pretrained states,
raw-data fits): torch's version and a hash of the Python source, so that an edit never lets a stale result be read."""
from __future__ import annotations

import hashlib
from functools import cache
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository: the packages below are read from here
WORKER_CODE = ("core", "attacks", "trainables")  # what computes a pretrained state or an attacker's fit


def source_hash(root: Path, paths: tuple[str, ...]) -> str:
    """A hash of every ``.py`` file under ``paths`` (folders or files, relative to ``root``): names and bytes."""
    digest = hashlib.sha256()
    for path in paths:
        top = root / path
        for file in sorted(top.rglob("*.py")) if top.is_dir() else [top]:
            digest.update(str(file.relative_to(root)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:32]


@cache
def code_version(paths: tuple[str, ...] = WORKER_CODE) -> str:
    """torch's version and the hash of ``paths``' source in this checkout, read once per process. Any edit there, even
    a comment, changes it: a stored result is then computed again, never read stale."""
    return f"torch {version('torch')}, source {source_hash(ROOT, paths)}"

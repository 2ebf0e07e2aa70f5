"""Checks of an MLflow tracking URI that need no MLflow call (so no retries, nothing created): its scheme, its driver,
and for sqlite the file and its folder. Shared by the platform's commands and the release service; each raises a
ValueError with one line naming the problem.
"""
from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path
from urllib.parse import urlparse

TRACKING_SCHEMES = ("sqlite", "http", "https", "postgresql", "mysql", "mssql", "databricks")
POSTGRES_EXTRA = "pip install -e '.[postgres]'"
SQLITE_HEADER = b"SQLite format 3\0"


def read_only(path: Path) -> bool:
    """True when ``path`` cannot be written: no write bit for anyone (which root ignores), or access denied."""
    return not path.stat().st_mode & 0o222 or not os.access(path, os.W_OK)


def check_writable_dir(path: Path, what: str) -> None:
    """``path`` (or, if missing, its nearest existing parent) is a folder this process can create files in."""
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{what} {path} is not a folder ({existing} is a file)")
    if read_only(existing):
        raise ValueError(f"{what} {path} is not writable ({existing} is read-only)")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise ValueError(f"{what} {path} is not writable: {exc.strerror or exc}") from None


def sqlite_path(uri: str) -> Path | None:
    """The file of a ``sqlite:///`` URI (``~`` expanded), None for any other URI."""
    return Path(uri.removeprefix("sqlite:///")).expanduser() if uri.startswith("sqlite:///") else None


def check_tracking_uri(uri: str, create: bool = True) -> None:
    """A tracking URI MLflow can use: a known scheme; for sqlite a file (not a folder) in a writable folder, and one
    that already holds a store unless ``create`` (read-only commands must never create a store)."""
    scheme = urlparse(uri).scheme.split("+")[0]
    if scheme not in TRACKING_SCHEMES:
        raise ValueError(f"unsupported MLflow tracking URI {uri!r}: use sqlite:///<path>, http(s)://<server> "
                         f"or a database URI ({', '.join(TRACKING_SCHEMES)})")
    if scheme == "postgresql":
        check_postgres_driver(uri)
    if scheme != "sqlite":
        return
    db = sqlite_path(uri)
    if db is None or not uri.removeprefix("sqlite:///"):
        raise ValueError(f"MLflow tracking URI {uri!r} needs a file: sqlite:///<relative path> or sqlite:////<absolute path>")
    if db.is_dir():
        raise ValueError(f"MLflow tracking store {db} is a folder, not an sqlite file")
    if not create:
        if not db.exists():
            raise ValueError(f"no MLflow tracking store at {db} (a sweep creates one; check --tracking-uri)")
        with db.open("rb") as f:
            if f.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                raise ValueError(f"{db} is not an MLflow tracking store (not an sqlite file)")
    if db.exists() and read_only(db):
        raise ValueError(f"MLflow tracking store {db} is read-only")
    check_writable_dir(db.parent, "the folder of MLflow tracking store")


def check_postgres_driver(uri: str) -> None:
    """The Python driver a ``postgresql[+driver]://`` URI names is installed (psycopg, from the ``postgres`` extra)."""
    scheme = urlparse(uri).scheme
    driver = scheme.partition("+")[2] or "psycopg2"  # SQLAlchemy's default for a bare postgresql://; its module's name
    if importlib.util.find_spec(driver) is None:
        hint = "" if driver == "psycopg" else " and write the URI as postgresql+psycopg://..."
        raise ValueError(f"the MLflow tracking URI needs the PostgreSQL driver {driver}, which is not installed: "
                         f"{POSTGRES_EXTRA}{hint}")

"""Where Tune keeps trials and checkpoints: a local folder, or a URI (``s3://``, ``gs://``, ``file://``) that pyarrow
opens exactly as Ray Tune does, so the sweep, ``platform.attack`` and ``platform.select`` find checkpoints anywhere.

A multi-node cluster needs one of the two that every node sees: a shared file system mounted at the same path, or a
cloud URI. A location (what the run tag ``putlab.checkpoint`` holds) is a plain path for local storage, else a URI of
the same scheme and query as the storage URI.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from core.files.source import MIB, InputFileError, decode_text
from core.messages import first_line
from platform.errors import UsageError

MAX_TEXT_BYTES = 256 * MIB  # a Tune text file read back (result.json grows by a few kB per iteration)


def is_uri(storage: str) -> bool:
    """True for ``scheme://...``, False for a local path."""
    return "://" in storage


def resolve(storage: str) -> str:
    """A URI unchanged; a local path made absolute (``~`` expanded), as Tune and the other nodes need it."""
    return storage if is_uri(storage) else str(Path(storage).expanduser().resolve())


def filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """(pyarrow file system, path on it) of a local path or URI; a URI pyarrow cannot open is a UsageError."""
    if not is_uri(location):
        return pafs.LocalFileSystem(), location
    try:
        return pafs.FileSystem.from_uri(location)
    except Exception as exc:  # noqa: BLE001 - unknown scheme, missing credentials, bad query: pyarrow's own one-line reason
        raise UsageError(f"storage {location} cannot be opened: {first_line(exc)}") from None


def local_path(storage: str) -> Path | None:
    """The local folder behind a local path or a local-file-system URI (``file://``), None for remote storage."""
    fs, path = filesystem(storage)
    return Path(path) if isinstance(fs, pafs.LocalFileSystem) else None


def location(storage: str, fs_path: str) -> str:
    """The location of ``fs_path`` (a path on the storage's file system, as Tune reports it) for the run tags."""
    if not is_uri(storage):
        return fs_path
    parts = urlsplit(storage)
    return f"{parts.scheme}://{fs_path}" + (f"?{parts.query}" if parts.query else "")  # s3://bucket/..., file:///...


def join(location_: str, *names: str) -> str:
    """``location_/name/...``, keeping a URI's query (e.g. ``?endpoint_override=...``) at the end."""
    if not is_uri(location_):
        return str(Path(location_, *names))
    parts = urlsplit(location_)
    path = "/".join([parts.path.rstrip("/"), *names])
    return f"{parts.scheme}://{parts.netloc}{path}" + (f"?{parts.query}" if parts.query else "")


def parent(location_: str) -> str:
    """The folder holding ``location_`` (a checkpoint's trial folder)."""
    if not is_uri(location_):
        return str(Path(location_).parent)
    parts = urlsplit(location_)
    path = parts.path.rstrip("/").rpartition("/")[0]
    return f"{parts.scheme}://{parts.netloc}{path}" + (f"?{parts.query}" if parts.query else "")


def exists(location_: str, directory: bool = False) -> bool:
    """Whether a file (or, with ``directory``, a folder) is at ``location_``."""
    fs, path = filesystem(location_)
    kind = fs.get_file_info(path).type
    return kind == (pafs.FileType.Directory if directory else pafs.FileType.File)


def read_text(location_: str, limit: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of the file at ``location_``; an InputFileError (one line) over ``limit`` bytes or not text."""
    fs, path = filesystem(location_)
    with fs.open_input_stream(path) as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise InputFileError(location_, f"is over the limit of {limit:,} bytes")
    return decode_text(data, location_)


def download(location_: str, destination: Path) -> None:
    """Copy the folder at ``location_`` into the local folder ``destination``."""
    fs, path = filesystem(location_)
    destination.mkdir(parents=True, exist_ok=True)
    pafs.copy_files(path, str(destination), source_filesystem=fs, destination_filesystem=pafs.LocalFileSystem())


def folders(location_: str, prefix: str) -> list[str]:
    """The names of the folders in ``location_`` named ``prefix*``, sorted; none when ``location_`` is not a folder."""
    fs, path = filesystem(location_)
    if fs.get_file_info(path).type != pafs.FileType.Directory:
        return []
    return sorted(entry.base_name for entry in fs.get_file_info(pafs.FileSelector(path))
                  if entry.type == pafs.FileType.Directory and entry.base_name.startswith(prefix))


def newest(location_: str, prefix: str, marker: str) -> str | None:
    """The name of the most recently modified folder in ``location_`` named ``prefix*`` that holds a file ``marker``."""
    fs, path = filesystem(location_)
    if fs.get_file_info(path).type != pafs.FileType.Directory:
        return None
    found = []
    for entry in fs.get_file_info(pafs.FileSelector(path)):
        if entry.type == pafs.FileType.Directory and entry.base_name.startswith(prefix):
            info = fs.get_file_info(f"{entry.path}/{marker}")
            if info.type == pafs.FileType.File:
                found.append((info.mtime_ns or 0, entry.base_name))
    return max(found)[1] if found else None

"""A file's bytes and text, within a size limit, and the error every reader of :mod:`core.files` raises."""
from __future__ import annotations

import stat
from pathlib import Path

from core.messages import one_line

MIB = 1 << 20


class InputFileError(ValueError):
    """A file putlab reads that is missing, unreadable, malformed or off its schema. Its message is one line: the file
    (as the caller shows it) and what is wrong with it."""

    def __init__(self, source: str | Path, problem: str) -> None:
        self.source, self.problem = one_line(str(source)), one_line(problem)
        super().__init__(f"{self.source} {self.problem}")


def read_bytes(path: Path, limit: int, source: str | None = None) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them; an InputFileError otherwise (``source``:
    how messages name the file, default the path)."""
    shown = source or str(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputFileError(shown, "does not exist") from None
    except OSError as exc:
        raise InputFileError(shown, f"cannot be read: {exc.strerror or type(exc).__name__}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputFileError(shown, "is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise InputFileError(shown, "is not a regular file")
    if info.st_size > limit:
        raise InputFileError(shown, f"is {info.st_size:,} bytes, over the limit of {limit:,}")
    try:
        with path.open("rb") as stream:
            data = stream.read(limit + 1)
    except OSError as exc:
        raise InputFileError(shown, f"cannot be read: {exc.strerror or type(exc).__name__}") from None
    if len(data) > limit:  # it grew since it was measured
        raise InputFileError(shown, f"is over the limit of {limit:,} bytes")
    return data


def decode_text(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark dropped); an InputFileError for binary or undecodable bytes."""
    if b"\x00" in data:
        raise InputFileError(source, "is binary (it holds NUL bytes), not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(source, f"is not UTF-8 text (undecodable byte at offset {exc.start}): a binary file?") from None


def read_text(path: Path, limit: int, source: str | None = None) -> str:
    """The UTF-8 text of the file at ``path`` (see :func:`read_bytes` and :func:`decode_text`)."""
    return decode_text(read_bytes(path, limit, source), source or str(path))

"""One-line messages from exceptions, for the commands' ``error: <one line>`` and the service's 4xx bodies."""
from __future__ import annotations


def first_line(exc: BaseException | str) -> str:
    """The first non-blank line of an exception's message (its type's name when the message is blank), or of a text."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if lines:
        return lines[0]
    return type(exc).__name__ if isinstance(exc, BaseException) else ""


def one_line(text: str) -> str:
    """``text`` with its line breaks (and other control characters) as spaces: a message that prints as one line."""
    return "".join(" " if not c.isprintable() else c for c in text).strip()


def printable(text: str) -> str:
    """``text`` with every control character but its line breaks as a space: what a user gave (a path's carriage return)
    can neither split a line nor hide one."""
    return "".join(c if c.isprintable() or c == "\n" else " " for c in text)


def exception_line(exc: BaseException) -> str:
    """An exception as one line of at most 500 characters: its type's name, then its message's first line."""
    return first_line(f"{type(exc).__name__}: {exc}")[:500]

"""Durations as people read them: ``h:mm:ss`` clocks (numbers as people read them: ``core.numbers.readable``)."""
from __future__ import annotations


def clock(seconds: float) -> str:
    """``h:mm:ss`` (or ``m:ss`` under an hour) for a duration in seconds."""
    seconds = round(max(0.0, seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"

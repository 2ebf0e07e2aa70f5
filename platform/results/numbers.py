"""Numbers and durations as people read them: ``readable`` (significant digits, integers as integers; it lives in
``core.numbers``, where the presets' own figures use it too) and ``m:ss`` clocks."""
from __future__ import annotations

from core.numbers import readable

__all__ = ["clock", "readable"]


def clock(seconds: float) -> str:
    """``h:mm:ss`` (or ``m:ss`` under an hour) for a duration in seconds."""
    seconds = round(max(0.0, seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"

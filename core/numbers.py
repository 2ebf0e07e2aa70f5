"""Numbers as people read them: significant digits (λ = 0.0001, not 0.000) and integers as integers (1, not 1.000).

Shared by the driver's tables and reports and by the figures presets draw on the worker side."""
from __future__ import annotations

import math

import numpy as np


def readable(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits, no exponent between 1e-4 and 1e6, integers without a point."""
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == round(value) and abs(value) < 1e15:
        return str(int(value))
    if abs(value) < 1e-4 or abs(value) >= 1e6:
        return f"{value:.{digits}g}"
    # Significant digits, but never rounding away the integer part (1234.5 -> 1234.5 at 3 digits would read 1230).
    shown = np.format_float_positional(value, precision=max(digits, len(str(int(abs(value))))),
                                       unique=False, fractional=False, trim="-")
    return shown.rstrip(".")

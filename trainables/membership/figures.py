"""Box plots of the per-record KL leakage ρ_KL, one box per trial, drawn from the statistics each trial logged.

A trial logs ρ_KL's quartiles and whiskers over its records (``leakage/kl/rho/q1`` ... ``whishi``) and their mean
(``leakage/kl/rho``, drawn as a dot), so the sweep's figure needs no per-record data. Boxes follow the sweep's
varying axes in order (the levels of the one varying factor for the ``paper-*`` profiles). The adult-membership
preset draws it on the sweep's parent run (search_spaces/adult_membership.py). Plotting only.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from core.numbers import readable

RHO = "leakage/kl/rho"
STATS = ("q1", "median", "q3", "whislo", "whishi")
FIGURE = "kl_boxplots.png"


def plot_kl_boxes(table: pd.DataFrame, keys: Sequence[str], path: str | Path) -> Path | None:
    """PNG with one box of per-record ρ_KL per finished trial, labelled by the axes that vary; None without any."""
    needed = [RHO, *(f"{RHO}/{s}" for s in STATS)]
    usable = table[table["status"] == "FINISHED"] if "status" in table else table
    if usable.empty or any(c not in usable for c in needed):
        return None
    usable = usable.dropna(subset=needed)
    varying = [k for k in keys if k in usable and usable[k].nunique() > 1]
    usable = usable.sort_values(varying) if varying else usable
    boxes = [{"label": ", ".join(f"{k}={readable(row[k])}" for k in varying) or str(row.get("name", "")),
              "med": row[f"{RHO}/median"], "q1": row[f"{RHO}/q1"], "q3": row[f"{RHO}/q3"],
              "whislo": row[f"{RHO}/whislo"], "whishi": row[f"{RHO}/whishi"], "mean": row[RHO], "fliers": []}
             for _, row in usable.iterrows()]
    fig = Figure(figsize=(max(4.0, 0.9 * len(boxes) + 1.5), 4.0))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.bxp(boxes, showmeans=True, meanprops={"marker": "o", "markerfacecolor": "tab:red", "markeredgecolor": "none"})
    low = min(b["whislo"] for b in boxes)
    # Per-record estimates are unbiased and can fall below 0; symlog keeps those visible where log could not.
    ax.set_yscale("log" if low > 0 else "symlog", **({} if low > 0 else {"linthresh": 1e-2}))
    ax.axhline(0, color="grey", linewidth=0.5)
    ax.set_ylabel("ρ_KL per record (box: quartiles, whiskers 1.5 IQR; dot: mean)", fontsize=8)
    ax.tick_params(axis="x", labelrotation=30 if len(boxes) > 6 else 0, labelsize=8)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return Path(path)


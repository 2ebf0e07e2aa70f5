"""Does a per-record mix of two releases read as the mix of their readings? The premise of the baselines' hull
(docs/metrics.md#the-baselines-hull), checked on a ``prototype-mix`` sweep: at each interior share p of verbatim records,
the measured digit accuracy, strongest attacker and PSNR of the mean squared error beside the hull's value there (the
p-weighted mean of the two ends', verbatim 0 and 1; the MSE mixed, not the decibels), with the measured value's 95 %
interval, and the strongest attacker's per-record view (its most confident tenth, the share it reads right with
probability ≥ 0.9).

    .venv/bin/python -m platform.sweep prototype-mix --no-learning-curve
    PYTHONPATH=. .venv/bin/python benchmarks/hull_premise.py --tracking-uri sqlite:///$PWD/mlflow.db putlab-prototype-mix
"""
from __future__ import annotations

import argparse

import pandas as pd

from core.image_quality import mse_of_psnr, psnr_of_mse
from core.metric_names import CONFIDENT_SHARE, FRESH_ACCURACY, PSNR_OF_MSE, STRONGEST_ATTACK, TOP_DECILE
from core.numbers import readable
from platform.results import drivers
from platform.results.store import Store
from platform.results.summary import read_summary
from search_spaces import presets

ACCURACIES = (FRESH_ACCURACY, STRONGEST_ATTACK)


def hull_value(ends: pd.DataFrame, metric: str, share: float) -> float:
    """The mix of the two ends' ``metric`` at a share ``share`` of verbatim records (a PSNR through its MSE)."""
    low, high = (float(ends.loc[v, metric]) for v in (0.0, 1.0))
    if metric == PSNR_OF_MSE:
        return psnr_of_mse((1 - share) * mse_of_psnr(low) + share * mse_of_psnr(high))
    return (1 - share) * low + share * high


def interval(row: pd.Series, metric: str) -> str:
    """``[low, high]`` where the trial logged its 95 % interval, else ''."""
    low, high = row.get(f"{metric}/ci_low"), row.get(f"{metric}/ci_high")
    return f" [{readable(low)}, {readable(high)}]" if low is not None and pd.notna(low) else ""


def table(trials: pd.DataFrame) -> list[str]:
    """One line per interior share and axis: the hull's value, the measured one with its interval, and whether the
    interval holds the hull's value; then each share's per-record view."""
    by_share = trials.set_index("verbatim")
    lines = ["share p | axis | hull (mix of the ends) | measured [95 %] | within"]
    for share, row in by_share.drop(index=[0.0, 1.0]).iterrows():
        for metric in (*ACCURACIES, PSNR_OF_MSE):
            expected, measured = hull_value(by_share, metric, float(share)), float(row[metric])
            ci = interval(row, metric)
            low, high = row.get(f"{metric}/ci_low"), row.get(f"{metric}/ci_high")
            within = "yes" if ci and low <= expected <= high else ("no" if ci else "—")
            lines.append(f"{share:g} | {metric} | {readable(expected)} | {readable(measured)}{ci} | {within}")
    lines.append("share p | strongest attacker's most confident tenth | share read right with probability ≥ 0.9")
    for share, row in by_share.iterrows():
        lines.append(f"{share:g} | {readable(row.get(TOP_DECILE))} | {readable(row.get(CONFIDENT_SHARE))}")
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep", help="a prototype-mix sweep: its name, parent run id, or its experiment (the newest)")
    p.add_argument("--tracking-uri", required=True)
    args = p.parse_args()
    client = Store.open(args.tracking_uri, create=False)
    _, parent_id = drivers.sweep_of(client, args.sweep)
    trials = read_summary(client, parent_id, presets()["prototype-mix"]).trials
    print("\n".join(table(trials[trials["status"] == "FINISHED"])))


if __name__ == "__main__":
    main()

"""The adult-membership preset end to end: one point per trial, leakage metrics, trend plot and front."""
from __future__ import annotations

import pytest

from pathlib import Path

import pandas as pd

from conftest import run_sweep, store
from platform.trend_plot import trend_table


@pytest.mark.slow  # end to end, about a minute or more: runs under -m slow (CI runs both)
def test_adult_membership_smoke_sweep(workdir: Path) -> None:
    out = run_sweep(workdir, "adult-membership", "--profile", "smoke")
    assert out.returncode == 0, out.stderr[-3000:]
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-adult-membership")
    runs = client.search_runs([exp.experiment_id])
    (parent,) = [r for r in runs if r.data.tags.get("putlab.role") == "sweep"]
    children = [r for r in runs if r.data.tags.get("putlab.role") == "trial"]
    assert parent.data.metrics["data/adult_train"] == 30162 and parent.data.metrics["data/adult_test"] == 15060
    assert sorted(c.data.params["n"] for c in children) == ["100", "2000"]
    for child in children:
        for key in ("utility/accuracy", "attack/yeom/advantage", "attack/yeom/auc", "leakage/kl/rho", "leakage/kl/mi_bound"):
            assert key in child.data.metrics, key
        assert child.data.metrics["leakage/kl/mi_bound"] == child.data.metrics["leakage/kl/rho"] / 4
        assert 0.6 < child.data.metrics["utility/accuracy"] < 0.9
    assert {a.path for a in client.list_artifacts(parent.info.run_id, "front")} >= {"front/front.png", "front/trends.png"}


def test_trend_table_averages_over_the_other_axes() -> None:
    table = pd.DataFrame({"n": [1, 1, 2, 2], "lam": [0, 1, 0, 1], "rho": [4.0, 2.0, 1.0, 3.0],
                          "status": ["FINISHED"] * 3 + ["FAILED"]})
    trend = trend_table(table, "n", "rho")
    assert trend.loc[1].tolist() == [3.0, 2.0, 4.0] and trend.loc[2].tolist() == [1.0, 1.0, 1.0]

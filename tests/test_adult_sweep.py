"""The adult-membership preset end to end: one point per trial, leakage metrics, trend and box plots, front on |advantage|."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.image
import pandas as pd
import pytest
from conftest import run_sweep, store

from platform.figures.trends import trend_table
from platform.plan.spec import resolve
from trainables.membership.figures import plot_kl_boxes


@pytest.mark.slow  # end to end, about a minute or more: runs under -m slow (CI runs both)
def test_adult_membership_smoke_sweep(workdir: Path) -> None:
    out = run_sweep(workdir, "adult-membership", "--profile", "smoke")
    assert out.returncode == 0, out.stderr[-3000:]
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-adult-membership")
    assert exp is not None
    runs = client.search_runs([exp.experiment_id])
    (parent,) = [r for r in runs if r.data.tags.get("putlab.role") == "sweep"]
    children = [r for r in runs if r.data.tags.get("putlab.role") == "trial"]
    assert parent.data.metrics["data/adult_train"] == 30162 and parent.data.metrics["data/adult_test"] == 15060
    assert sorted(c.data.params["n"] for c in children) == ["100", "2000"]
    for child in children:
        for key in ("utility/accuracy", "attack/yeom/advantage_abs", "attack/yeom/advantage_abs/ci_high",
                    "attack/yeom/auc", "leakage/kl/rho", "leakage/kl/rho/median", "leakage/kl/mi_bound"):
            assert key in child.data.metrics, key
        assert child.data.metrics["leakage/kl/mi_bound"] == child.data.metrics["leakage/kl/rho"] / 4
        assert 0.6 < child.data.metrics["utility/accuracy"] < 0.9
        assert child.data.params["model"] == "linear"
    artifacts = {a.path for a in client.list_artifacts(parent.info.run_id, "front")}
    assert artifacts >= {"front/front.png", "front/trends.png", "front/kl_boxplots.png"}


def test_trend_table_averages_over_the_other_axes() -> None:
    table = pd.DataFrame({"n": [1, 1, 2, 2], "lam": [0, 1, 0, 1], "rho": [4.0, 2.0, 1.0, 3.0],
                          "status": ["FINISHED"] * 3 + ["FAILED"]})
    trend = trend_table(table, "n", "rho")
    assert trend.loc[1].tolist() == [3.0, 2.0, 4.0] and trend.loc[2].tolist() == [1.0, 1.0, 1.0]
    # a table without a status column: every row counts (it raised KeyError)
    assert trend_table(table.drop(columns="status"), "n", "rho").loc[2].tolist() == [2.0, 1.0, 3.0]


def _box_row(n: int, median: float, status: str = "FINISHED") -> dict:
    stats = {"q1": median / 2, "median": median, "q3": 2 * median, "whislo": median / 4, "whishi": 4 * median}
    return {"n": n, "lam": 1e-3, "status": status, "leakage/kl/rho": 1.5 * median,
            **{f"leakage/kl/rho/{k}": v for k, v in stats.items()}}


def test_kl_box_plot_draws_one_box_per_finished_trial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib.axes import Axes

    drawn = []
    original = Axes.bxp

    def record(ax: Axes, stats: list, **kw: Any) -> object:
        drawn.append((ax, stats))
        return original(ax, stats, **kw)

    monkeypatch.setattr(Axes, "bxp", record)
    table = pd.DataFrame([_box_row(1000, 0.01), _box_row(10, 5.0), _box_row(100, 0.3), _box_row(30, 1.0, "FAILED")])
    path = plot_kl_boxes(table, ("n", "lam"), tmp_path / "boxes.png")
    assert path is not None and matplotlib.image.imread(path).ndim == 3
    ((ax, stats),) = drawn
    assert [b["label"] for b in stats] == ["n=10", "n=100", "n=1000"]  # sorted by the varying axis, failed one left out
    assert [b["med"] for b in stats] == [5.0, 0.3, 0.01] and stats[0]["mean"] == 7.5
    assert ax.get_yscale() == "log"
    # An unbiased per-record ρ below 0 switches to symlog, where log would hide it.
    negative = pd.DataFrame([_box_row(10, 5.0), {**_box_row(100, 0.3), "leakage/kl/rho/whislo": -0.2}])
    plot_kl_boxes(negative, ("n",), tmp_path / "negative.png")
    assert drawn[-1][0].get_yscale() == "symlog"
    assert plot_kl_boxes(table.drop(columns="leakage/kl/rho/q1"), ("n",), tmp_path / "none.png") is None


# The paper's figures: Fig. 1 n at λ = 0; Fig. 3 λ at n = 10; Fig. 4 p_x at n = 10, λ = 1e-6; Fig. 5 σ at n = 30, λ = 0.
@pytest.mark.parametrize("profile, axis, n, lam", [("paper-n", "n", None, 0.0), ("paper-lam", "lam", 10, None),
                                                   ("paper-p_x", "p_x", 10, 1e-6), ("paper-sigma", "sigma", 30, 0.0)])
def test_paper_profiles_vary_one_factor_with_a_hundred_records(profile: str, axis: str, n: int | None,
                                                               lam: float | None) -> None:
    spec = resolve("adult-membership", profile, [])
    assert list(spec.grid) == [axis] and len(spec.grid[axis]) >= 5
    assert spec.config["kl_records"] >= 100 and spec.config["model"] == "linear"
    assert spec.config["mc_runs"] > spec.config.get("p_x", max(spec.grid.get("p_x", [0]))) + 3
    assert spec.config.get("p_x", 5) == 5 and spec.config.get("sigma", 0.0) == 0.0
    if n is not None:
        assert spec.config["n"] == n
    if lam is not None:
        assert spec.config["lam"] == lam


@pytest.mark.parametrize("profile, model", [("paper-net-n", "tanh_net"), ("paper-n-probes", "linear")])
def test_the_network_profiles_are_the_papers_fig_2_setting(profile: str, model: str) -> None:
    spec = resolve("adult-membership", profile, [])
    assert list(spec.grid) == ["n"] and spec.config["model"] == model
    assert (spec.config["lam"], spec.config["p_x"], spec.config["sigma"]) == (0.0, 5, 0.0)

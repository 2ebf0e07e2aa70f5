"""``benchmarks/front_full_budget.py``: what it reads off a front point's run, against values logged by hand."""
from __future__ import annotations

from conftest import benchmark_script
from mlflow.entities import Metric, Run, RunData, RunInfo

from platform.run.full_budget import FullBudget


def run_with(metrics: dict[str, float]) -> Run:
    """A finished run as MLflow's client returns it, holding ``metrics`` (their latest values)."""
    info = RunInfo("r", "0", "u", "FINISHED", 0, 1, "active", run_name="alpha=1 lam=100")
    return Run(info, RunData(metrics=[Metric(k, v, 0, 4) for k, v in metrics.items()]))


def test_a_front_points_curve_and_estimate_are_read_as_logged_and_compared_with_the_full_budget() -> None:
    bench = benchmark_script("front_full_budget")
    logged = {"attack/deep/curve/200": 0.911, "attack/deep/curve/25": 0.856, "attack/deep/curve/100": 0.891,
              "attack/deep/curve/50": 0.876, "attack/deep/curve/50/ci_low": 0.85, "attack/deep/curve/25/records": 1250,
              "attack/max/saturation": 0.95, "attack/max/saturation/ci_low": 0.90, "attack/max/saturation/ci_high": 1.0}
    run = run_with(logged)
    assert bench.curve_of(run) == {25: 0.856, 50: 0.876, 100: 0.891, 200: 0.911}  # by percent, bounds left out
    assert bench.estimate_of(run) == (0.95, 0.90, 1.0)
    bare = run_with({"attack/max/accuracy": 0.878})
    assert bench.curve_of(bare) == {} and bench.estimate_of(bare) is None

    reading = bench.FrontReading("p", 0.878, 5000, bench.curve_of(run), bench.estimate_of(run),
                                 FullBudget("deep", 0.93, 0.91, 0.95, 28476), 1.0)
    assert abs(reading.estimate_gap - 0.02) < 1e-12 and reading.inside
    outside = bench.FrontReading("p", 0.878, 5000, {}, (0.95, 0.94, 0.97), FullBudget("deep", 0.93, None, None, 28476), 1.0)
    assert not outside.inside
    line = bench.row(reading)
    assert "| 0.878 (5,000) | 0.856 / 0.876 / 0.891 / 0.911 | 0.950 [0.900, 1.000] | deep 0.930 [0.910, 0.950] (28,476) |" in line
    assert "+0.052 | +0.020 | yes |" in line

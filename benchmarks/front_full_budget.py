"""Every front point of a finished sweep at the full budget, beside its learning curve and fitted saturation.

The sweep logs, for each front point, the strongest attacker on its farm's budget (``attack/max/accuracy``, 5,000
records on AMNIST's quick profile), that attacker's learning curve (25 / 50 / 100 / 200 % of those records) and the
power law's saturation estimate with its 95 % interval (``attack/max/saturation``). This attacks each front point's
last checkpoint as ``python -m platform.select`` does (``platform.run.full_budget``: the preset's privacy attackers on
the release of every record outside the test split) and prints the three side by side, with how far the estimate was
from the full-budget reading and whether that reading lies inside the estimate's interval.

    PYTHONPATH=. .venv/bin/python benchmarks/front_full_budget.py --tracking-uri sqlite:///mlflow.db putlab-amnist
"""
from __future__ import annotations

import argparse
import re
import time
from dataclasses import dataclass

import torch

from platform.results import tracking
from platform.results.store import Run, Store
from platform.run.catch_up import checkpoints_of, trial_config
from platform.run.full_budget import FullBudget, attack_full_budget, budget
from search_spaces import presets

CURVE = re.compile(r"attack/(?P<attacker>[^/]+)/curve/(?P<percent>\d+)$")


@dataclass(frozen=True)
class FrontReading:
    """One front point: its logged number, curve, estimate and full-budget reading."""

    name: str
    logged: float
    logged_records: int
    curve: dict[int, float]  # percent of the farm's records -> accuracy
    estimate: tuple[float, float, float] | None  # saturation, ci_low, ci_high
    full: FullBudget
    seconds: float

    @property
    def estimate_gap(self) -> float | None:
        """Estimate minus the full-budget reading (None without an estimate)."""
        return None if self.estimate is None else self.estimate[0] - self.full.accuracy

    @property
    def inside(self) -> bool | None:
        """Whether the full-budget reading lies inside the estimate's interval."""
        return None if self.estimate is None else self.estimate[1] <= self.full.accuracy <= self.estimate[2]


def curve_of(run: Run) -> dict[int, float]:
    """The strongest attacker's learning curve as logged on ``run`` (percent -> accuracy; empty without one)."""
    found: dict[str, dict[int, float]] = {}
    for key, value in run.data.metrics.items():
        if (m := CURVE.match(key)) is not None:
            found.setdefault(m["attacker"], {})[int(m["percent"])] = value
    return dict(sorted(next(iter(found.values()), {}).items()))


def estimate_of(run: Run) -> tuple[float, float, float] | None:
    """``attack/max/saturation`` with its interval, where the sweep fitted one."""
    m, key = run.data.metrics, "attack/max/saturation"
    if not all(k in m for k in (key, f"{key}/ci_low", f"{key}/ci_high")):
        return None
    return m[key], m[f"{key}/ci_low"], m[f"{key}/ci_high"]


def read_point(run: Run, preset_name: str, records: int | None) -> FrontReading:
    """Attack ``run``'s last checkpoint at the full budget (or ``records``) and collect its logged numbers."""
    preset = presets()[preset_name]
    _, location = checkpoints_of(run)[-1]
    config = trial_config(location)
    n = budget(preset, config, records)
    if n is None:
        raise SystemExit(f"preset {preset_name!r} names no records outside its test split; pass --attack-records")
    t0 = time.perf_counter()
    full = attack_full_budget(preset, config, location, run.data.metrics, n, "the front point's full budget")
    m = run.data.metrics
    return FrontReading(run.info.run_name, m["attack/max/accuracy"], int(m.get("attack/max/train_records", 0)),
                        curve_of(run), estimate_of(run), full, time.perf_counter() - t0)


def row(r: FrontReading) -> str:
    """One table line."""
    curve = " / ".join(f"{v:.3f}" for v in r.curve.values()) or "—"
    est = f"{r.estimate[0]:.3f} [{r.estimate[1]:.3f}, {r.estimate[2]:.3f}]" if r.estimate else "—"
    full = f"{r.full.attacker} {r.full.accuracy:.3f}"
    full += f" [{r.full.ci_low:.3f}, {r.full.ci_high:.3f}]" if r.full.ci_low is not None and r.full.ci_high is not None else ""
    gap = f"{r.estimate_gap:+.3f}" if r.estimate_gap is not None else "—"
    inside = {True: "yes", False: "no", None: "—"}[r.inside]
    return (f"| {r.name} | {r.logged:.3f} ({r.logged_records:,}) | {curve} | {est} | {full} ({r.full.records:,}) | "
            f"{r.full.accuracy - r.logged:+.3f} | {gap} | {inside} | {r.seconds:.0f} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep", help="sweep run id, sweep name, or experiment name (its newest sweep)")
    p.add_argument("--tracking-uri", default="sqlite:///mlflow.db")
    p.add_argument("--trial", help="only front points whose run name contains this text")
    p.add_argument("--attack-records", type=int, help="records to release (default: every record outside the test split)")
    p.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    args = p.parse_args()
    if args.attack_records is not None and args.attack_records < 1:
        p.error("--attack-records must be at least 1")
    torch.set_num_threads(args.threads)
    client = Store(args.tracking_uri)
    exp_id, parent_id = client.find_sweep(args.sweep)
    preset_name = client.run(parent_id).data.params["preset"]
    front = [r for r in client.child_runs(exp_id, parent_id) if r.data.tags.get(tracking.TAG_FRONT) == "true"
             and (args.trial is None or args.trial in r.info.run_name) and checkpoints_of(r)]
    print(f"{len(front)} front point(s) of {preset_name}; each attacked at the full budget (several minutes each)",
          flush=True)
    print("| trial | logged (records) | curve 25 / 50 / 100 / 200 % | saturation [95 %] | full budget [95 %] (records) "
          "| full − logged | estimate − full | full inside the interval | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for run in front:
        print(row(read_point(run, preset_name, args.attack_records)), flush=True)


if __name__ == "__main__":
    main()

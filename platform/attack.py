"""``python -m platform.attack <sweep>``: attack the stored checkpoints of an existing sweep again.

Adds the metrics of the named attackers to the same MLflow child runs, only where a checkpoint
lacks them (running it twice adds nothing), refreshes ``attack/max/accuracy``, and recomputes the
sweep's front (``platform.run.catch_up``, which the sweep also runs to catch up after a resume).
A sweep with no finished trial, or whose recorded checkpoints are gone, is refused before anything is stored.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from attacks.attackers.registry import check_names
from core.commands import python_module
from platform.cli import exit_with, guarded
from platform.errors import UsageError
from platform.plan.spec import preset_of
from platform.publish import publish, write_sweep_report
from platform.results import drivers
from platform.results.store import Run, Store
from platform.results.summary import SweepSummary, format_summary
from platform.run import preflight
from platform.run.catch_up import attack_missing, missing_checkpoints
from platform.run.farm import FarmPlan
from platform.run.front_curves import stored_available
from platform.run.learning_curves import draw_curves
from platform.run.tuner import init_ray
from search_spaces import Preset

SHOWN_MISSING = 3  # missing checkpoints named in a refusal; the rest are counted
STOP_HINT = "Ctrl+C cancels them; the command run again attacks what is still missing"


def run(argv: list[str] | None = None) -> int:
    """Re-attack a sweep; returns the exit code."""
    p = argparse.ArgumentParser(prog="python -m platform.attack", description=__doc__.splitlines()[0])
    p.add_argument("target", help="a sweep's parent run id, a sweep name, or an experiment name (its newest sweep)")
    p.add_argument("--attackers", help="comma-separated attackers (default: the preset's farm)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI (default: sqlite:///<cwd>/mlflow.db)")
    p.add_argument("--address", help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)")
    p.add_argument("--learning-curve", action="store_true",
                   help="also refit each front trial's strongest attacker on 25/50/100%% of its training records "
                        "(200%% where the data set holds them) and fit where it saturates")
    args = p.parse_args(argv)
    preflight.check_not_empty(args, "attackers", "tracking_uri", "address")
    if args.address:  # a bad address is refused before the store is read (init_ray connects to it later)
        preflight.check_ray_address(args.address)
    tracking_uri = args.tracking_uri or f"sqlite:///{Path.cwd() / 'mlflow.db'}"
    store = Store.open(tracking_uri, create=False)
    exp_id, parent_id = drivers.sweep_of(store, args.target)
    preset = preset_of(store.run(parent_id).data.params)
    attackers = tuple(a.strip() for a in args.attackers.split(",")) if args.attackers else None
    try:
        check_names(attackers or ())
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if preset.checkpoint_inputs is None:
        raise UsageError(f"preset {preset.name!r} has no checkpoints for the attack farm")
    runs = store.child_runs(exp_id, parent_id)
    check_attackable(store.run(parent_id).info.run_name, preset.name, runs)
    init_ray(args.address)
    plan = FarmPlan.of(preset.mechanism, preset.checkpoint_inputs, preset.farm.attackers, preset.farm.privacy,
                       {"cpu": 1, "gpu": 0})
    done, failed = attack_missing(store, runs, plan, attackers, hint=STOP_HINT)
    print(f"attacked {done} checkpoint(s) of sweep run {parent_id}" + (f", {failed} failed" if failed else ""), flush=True)
    summary = publish(store, parent_id, preset)
    print(format_summary(summary, preset.label_keys))
    curve_failed = learning_curves(store, parent_id, preset, summary, plan, tracking_uri) if args.learning_curve else 0
    if failed:
        print(f"error: {failed} checkpoint attack(s) failed (tag putlab.farm_error on their runs)", file=sys.stderr)
    if curve_failed:
        print(f"error: {curve_failed} learning curve(s) failed (the lines above say why)", file=sys.stderr)
    return 1 if failed or curve_failed else 0


def check_attackable(sweep: str, preset: str, runs: list[Run]) -> None:
    """A UsageError, before anything runs or is stored, when the sweep has no finished trial or some of the
    checkpoints its trials recorded are no longer stored (the first few named, then how many more)."""
    if not any(run.info.status == "FINISHED" for run in runs):
        statuses = Counter(run.info.status for run in runs)
        found = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items())) or "none"
        raise UsageError(f"sweep {sweep} has no finished trial to attack (its trial runs: {found}); "
                         f"finish it first: {python_module('platform.sweep', preset, '--resume', sweep)}")
    missing = sorted(missing_checkpoints(runs))
    if missing:
        more = f" and {len(missing) - SHOWN_MISSING} more" if len(missing) > SHOWN_MISSING else ""
        raise UsageError(f"sweep {sweep}: {len(missing)} recorded checkpoint(s) are no longer stored, so nothing was "
                         f"attacked: {', '.join(missing[:SHOWN_MISSING])}{more}")


def learning_curves(store: Store, parent_id: str, preset: Preset, summary: SweepSummary, plan: FarmPlan,
                    tracking_uri: str) -> int:
    """Draw the learning curves of the front's trials and rewrite the sweep's report; returns how many failed."""
    front = summary.trials.loc[summary.front, "run_id"] if summary.front.any() else []
    runs = [store.run(run_id) for run_id in front]
    drawn, failed = draw_curves(store, runs, plan, stored_available(preset, runs))
    print(f"drew {drawn} learning curve(s) of the strongest attackers of {len(runs)} front point(s)", flush=True)
    print(f"report: {write_sweep_report(store, parent_id, preset, summary, tracking_uri)}", flush=True)
    return failed


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and exit code 2."""
    return guarded(lambda: run(argv))


if __name__ == "__main__":
    exit_with(main)

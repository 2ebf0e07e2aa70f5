"""``python -m platform.select <sweep>``: choose an operating point from a sweep and register it for serving.

Choose by a privacy constraint (``--max-attack 0.6``: the best utility among finished trials whose strongest attacker
scores at most 0.6) or by ``--trial`` (a trial id or run name). The trial's last checkpoint, its config and metrics are
logged under ``operating_point/<id>/`` on its MLflow run and registered as a new version of a registered model, tagged with
what was chosen and why, so the MLflow UI shows what is deployed. ``serve.app`` loads registered versions.

Before it registers, the chosen checkpoint is attacked again by the preset's privacy attackers trained on the release
of every record the data set holds outside its test split (``platform.run.full_budget``): that number is registered as
the point's ``attack/max/accuracy``, the sweep's own beside it as ``attack/max/sweep_accuracy``.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from core.commands import python_module
from core.files.structured import parse_json
from core.pareto_axis import Axis
from core.quiet import silence
from platform.cli import guarded
from platform.errors import UsageError
from platform.plan.spec import preset_of
from platform.results import drivers, tracking
from platform.results.store import ModelVersion, Store
from platform.results.summary import trials_table
from platform.run import preflight
from platform.run import storage as tune_storage
from platform.run.farm import MAX_METRIC
from platform.run.full_budget import FullBudget, attack_full_budget, budget
from search_spaces import Preset
from serve.points import POINT_DIR, POINT_FILE, PRESET_TAG

MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass(frozen=True)
class Choice:
    """The chosen trial's row of the trials table and a sentence saying why it was chosen."""

    row: pd.Series
    reason: str


def choose(table: pd.DataFrame, axes: list[Axis], max_attack: float | None = None, trial: str | None = None) -> Choice:
    """The operating point: the named trial, or the best utility among finished trials meeting the privacy bound."""
    utility, privacy = axes
    finished = table[table["status"] == "FINISHED"] if not table.empty else table
    if trial is not None and finished.empty:
        raise UsageError(f"no finished trial {trial!r}: the sweep has no finished trial yet")
    if trial is not None:
        named = finished[(finished["trial_id"] == trial) | (finished["name"] == trial)]
        if named.empty:
            raise UsageError(f"no finished trial {trial!r} in this sweep")
        return Choice(named.iloc[0], f"chosen by trial id {trial}")
    missing = [a.metric for a in axes if a.metric not in finished]
    if finished.empty or missing:
        raise UsageError(f"the sweep has no finished trial reporting {', '.join(missing or [utility.metric, privacy.metric])}"
                         f" ({python_module('platform.attack', '<sweep>')} adds missing attacks)")
    finished = finished.dropna(subset=[utility.metric, privacy.metric])
    ok = finished[finished[privacy.metric] <= max_attack]
    if ok.empty:
        raise UsageError(f"no finished trial has {privacy.metric} <= {max_attack:g} "
                         f"(the lowest is {finished[privacy.metric].min():.4f})")
    best = ok.sort_values([utility.metric, privacy.metric], ascending=[not utility.higher_is_better, True]).iloc[0]
    return Choice(best, f"best {utility.metric} among {len(ok)} of {len(finished)} finished trials "
                        f"with {privacy.metric} <= {max_attack:g}")


def point_metrics(row: pd.Series) -> dict[str, float]:
    """The trial's shared-name metrics (utility, attacks, leakage, fairness) from its table row."""
    prefixes = ("utility/", "attack/", "leakage/", "fairness/")
    return {k: float(v) for k, v in row.items() if isinstance(k, str) and k.startswith(prefixes) and pd.notna(v)}


def register(store: Store, model_name: str, preset: Preset, choice: Choice, checkpoint: str,
             config: dict, preset_file: str | None = None, full: FullBudget | None = None) -> ModelVersion:
    """Log the checkpoint (a local path or a storage URI) and a point description on the trial's run, then register
    them as a new model version (``preset_file``: where a preset from outside putlab lies, for serving; ``full``: the
    privacy at the full budget, registered as the point's, the sweep's number beside it)."""
    run_id, preset_name = choice.row["run_id"], preset.name
    metrics = point_metrics(choice.row)
    metrics = full.registered(metrics) if full is not None else metrics
    point = {"preset": preset_name, "mechanism": preset.mechanism_name, "config": config, "metrics": metrics,
             "trial_id": choice.row["trial_id"], "run_name": choice.row["name"], "reason": choice.reason}
    point |= {"preset_file": preset_file} if preset_file else {}
    artifact_path = f"{POINT_DIR}/{uuid.uuid4().hex[:12]}"  # each version's own copy: later selections never change it
    with tempfile.TemporaryDirectory() as tmp:
        tune_storage.download(checkpoint, Path(tmp))
        (Path(tmp) / POINT_FILE).write_text(json.dumps(point, indent=2, default=str))
        store.log_folder(run_id, tmp, artifact_path)
    try:
        store.ensure_model(model_name, {PRESET_TAG: preset_name},
                           f"putlab operating points of preset {preset_name} ({preset.mechanism_name})")
        tags = {PRESET_TAG: preset_name, "putlab.mechanism": preset.mechanism_name,
                "putlab.trial_id": str(choice.row["trial_id"]), "putlab.selection": choice.reason}
        tags |= {f"metric.{k}": f"{v:.6g}" for k, v in metrics.items()}
        summary = ", ".join(f"{a.metric} {metrics[a.metric]:.4f}" for a in preset.front.axes if a.metric in metrics)
        return store.register(model_name, run_id, artifact_path, tags,
                              f"trial {choice.row['name']}: {summary}. {choice.reason}.")
    except Exception:
        # A failed registration leaves no orphaned copy of the checkpoint behind.
        store.delete_files(run_id, artifact_path)
        raise


def check_still_within(full: FullBudget, max_attack: float | None) -> None:
    """Say so when the point met ``--max-attack`` at the sweep's budget but not at the full one (it is still
    registered: the registry records both numbers)."""
    if max_attack is not None and full.accuracy > max_attack:
        print(f"warning: at the full budget the point's {MAX_METRIC} {full.accuracy:.4f} is above --max-attack "
              f"{max_attack:g}, which it met at the sweep's budget", flush=True)


def full_budget(args: argparse.Namespace, preset: Preset, config: dict, checkpoint: str, choice: Choice) -> FullBudget | None:
    """The chosen checkpoint's privacy at the full budget (``--attack-records``, else every record outside the test
    split); None, said why, with ``--sweep-budget``, for a preset without a farm or whose data counts name no total."""
    if args.sweep_budget or preset.checkpoint_inputs is None:
        return None
    records = budget(preset, config, args.attack_records)
    if records is None:
        print(f"preset {preset.name!r} does not say how many records its data set holds: the sweep's privacy number is "
              "registered (--attack-records N attacks again on N)", flush=True)
        return None
    why = ("--attack-records" if args.attack_records is not None
           else "every record outside the test split; fewer: --attack-records N, none: --sweep-budget")
    full = attack_full_budget(preset, config, checkpoint, choice.row, records, why)
    print(full.line(point_metrics(choice.row)), flush=True)
    check_still_within(full, args.max_attack)
    return full


def run(argv: list[str] | None = None) -> int:
    """Choose and register; returns the exit code."""
    p = argparse.ArgumentParser(prog="python -m platform.select", description=__doc__.splitlines()[0])
    p.add_argument("target", help="a sweep's parent run id, a sweep name, or an experiment name (its newest sweep)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--max-attack", type=float, help="best utility among trials whose strongest attacker is at most this")
    how.add_argument("--trial", help="a trial id or run name of the sweep")
    p.add_argument("--name", help="registered model name (default: putlab-<preset>)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI (default: sqlite:///<cwd>/mlflow.db)")
    budget_group = p.add_mutually_exclusive_group()
    budget_group.add_argument("--attack-records", type=int, metavar="N",
                              help="train the full-budget attackers on the release of N records (default: every record "
                                   "the data set holds outside its test split)")
    budget_group.add_argument("--sweep-budget", action="store_true",
                              help="register the sweep's own privacy number (its farm's budget) without attacking again")
    args = p.parse_args(argv)
    silence()
    preflight.check_not_empty(args, "tracking_uri")
    if args.attack_records is not None and args.attack_records < 1:
        raise UsageError(f"--attack-records must be at least 1 (got {args.attack_records})")
    if args.name is not None and not MODEL_NAME.fullmatch(args.name):
        raise UsageError(f"--name {args.name!r} is not a usable model name: letters, digits, '.', '_', '-' "
                         "(it is part of the service's URL), at most 100 characters")

    store = Store.open(args.tracking_uri or f"sqlite:///{Path.cwd() / 'mlflow.db'}", create=False)
    exp_id, parent_id = drivers.sweep_of(store, args.target)
    sweep_params = store.run(parent_id).data.params
    preset = preset_of(sweep_params)
    if preset.load_release is None:
        raise UsageError(f"preset {preset.name!r} has no release map to serve")
    axes = list(preset.front.axes[:2])  # utility and privacy choose; a distortion axis does not
    choice = choose(trials_table(store, exp_id, parent_id, preset.label_keys), axes, args.max_attack, args.trial)
    checkpoint = store.run(choice.row["run_id"]).data.tags.get(tracking.TAG_CHECKPOINT, "")
    params = tune_storage.join(tune_storage.parent(checkpoint), "params.json") if checkpoint else ""
    if not checkpoint or not tune_storage.exists(tune_storage.join(checkpoint, "state.pt")) or not tune_storage.exists(params):
        raise UsageError(f"the checkpoint of trial {choice.row['name']} is missing: {checkpoint}")
    config = parse_json(tune_storage.read_text(params), dict[str, Any], f"the trial's stored config {params}")
    full = full_budget(args, preset, config, checkpoint, choice)
    version = register(store, args.name or f"putlab-{preset.name}", preset, choice, checkpoint, config,
                       sweep_params.get("preset_file"), full)
    print(f"registered {version.name} version {version.version}: {version.description}", flush=True)
    command = python_module("serve", "--tracking-uri", store.tracking_uri, "--models", f"{version.name}/{version.version}")
    print(f"serve it: {command}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and exit code 2."""
    return guarded(lambda: run(argv))


if __name__ == "__main__":
    sys.exit(main())

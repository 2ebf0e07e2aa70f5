"""``python -m platform.sweep <preset>``: run a privacy-utility sweep on Ray Tune, tracked in MLflow.

Validates everything (preset, grid values, overrides, tracking store, data) before any trial is
scheduled; then one Tune trial per configuration, a child MLflow run per trial, raw-data baselines,
and the sweep's Pareto front with its hypervolume on the parent run.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import ray
from mlflow.tracking import MlflowClient

from attacks.registry import check_names
from core.commands import command
from core.quiet import silence
from platform.attack import attack_missing
from platform.cli import guarded
from platform.errors import UsageError
from platform.figures.html_report import write_sweep_report
from platform.plan import resume_options
from platform.plan.noise_grid import PARAM as NOISE_PARAM
from platform.plan.noise_grid import baseline_spec, logged_spec
from platform.plan.schema import config_model, text_table
from platform.plan.seed_axis import with_seeds
from platform.plan.spec import SweepSpec, get_preset, resolve
from platform.publish import publish
from platform.results import tracking
from platform.results.noise_baseline import baseline_table, finished_trials, format_comparison
from platform.results.numbers import readable
from platform.results.pareto import Axis
from platform.results.summary import format_summary
from platform.run import preflight, resume_seal
from platform.run import storage as tune_storage
from platform.run.cost_estimate import CostEstimate, last_finished
from platform.run.farm import FarmPlan
from platform.run.interrupts import SweepEnding, resume_command
from platform.run.noise_grid import run_baseline, tune_name
from platform.run.progress import SweepProgress
from platform.run.trial_logger import MlflowTrialLogger
from platform.run.tuner import TUNER_STATE, build_tuner, default_gpus_per_trial, find_sweep, init_ray, restore_tuner

BASELINE_GRACE_S = 10  # how long an interrupted sweep waits for raw-data baselines already under way


def log_ready_baselines(client: MlflowClient, parent_id: str, baselines: ray.ObjectRef | None) -> None:
    """On an interruption, keep the raw-data baselines if they are done (waiting at most a few seconds): a resumed
    sweep then skips them, and a partial sweep still reports them."""
    if baselines is not None and ray.wait([baselines], timeout=BASELINE_GRACE_S)[0]:
        tracking.log_metrics(client, parent_id, ray.get(baselines))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see ``--help``); ``given`` names the options it gives (a resumed sweep checks those)."""
    p = argparse.ArgumentParser(
        prog="python -m platform.sweep",
        description="Run a privacy-utility sweep of a preset on Ray Tune; track it in MLflow with its Pareto front.",
        epilog="Example: python -m platform.sweep amnist --profile smoke --set lam=0,1,10 --set epochs=2. "
               "The config keys of a preset: python -m platform.sweep amnist --config-schema",
    )
    p.add_argument("preset", nargs="?", help="preset name, e.g. amnist (see search_spaces/); or give --preset-file")
    p.add_argument("--preset-file", metavar="PATH",
                   help="a Python file defining PRESET = search_spaces.Preset(...) with your own mechanism (see examples/)")
    p.add_argument("--profile", help="scale of the sweep: smoke | quick (default) | paper "
                                     "(adult-membership: paper-n, paper-lam, paper-p_x, paper-sigma)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, or a grid axis with comma-separated values (alpha=0.5,1,inf)")
    p.add_argument("--search", choices=("grid", "optuna"), default="grid",
                   help="grid (default) or Optuna multi-objective search over the axes' continuous ranges")
    p.add_argument("--samples", type=int, help="number of Optuna trials (default: the profile's)")
    p.add_argument("--seeds", type=int, default=1,
                   help="replicate every grid point over N seeds: the config's seed, seed + 1, ... (default 1)")
    p.add_argument("--attackers", help="comma-separated attack farm for every checkpoint, or 'none' (default: the preset's)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI (default: sqlite:///<cwd>/mlflow.db)")
    p.add_argument("--experiment", help="MLflow experiment name (default: putlab-<preset>)")
    p.add_argument("--storage", default="putlab_runs",
                   help="Tune storage for trials and checkpoints: a folder every node sees, or a URI such as "
                        "s3://bucket/runs (default: ./putlab_runs)")
    p.add_argument("--gpus-per-trial", type=float, help="GPU share per trial (default: 0.25 when the cluster has GPUs, else 0)")
    p.add_argument("--max-concurrent", type=int, help="most trials running at once (default: as resources allow)")
    p.add_argument("--max-failures", type=int, default=2, help="retries of a failed trial from its last checkpoint (default 2)")
    p.add_argument("--address", help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)")
    p.add_argument("--resume", nargs="?", const="", metavar="SWEEP",
                   help="continue an interrupted sweep (default: the newest of this preset) with the options it recorded; "
                        "finished trials are kept")
    p.add_argument("--config-schema", nargs="?", const="text", choices=("text", "json"),
                   help="print the preset's config fields (type, value, bounds, description; json: the JSON schema) "
                        "and exit")
    p.add_argument("--no-noise-baseline", action="store_true",
                   help="skip the Gaussian-noise baseline an image preset (amnist, amnist-privatizer) runs beside its "
                        "grid and draws on its front")
    p.add_argument("--yes", action="store_true",
                   help=f"run a sweep of more than {preflight.CONFIRM_TRIALS} trials (refused without it)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="every trial event, Ray's resources, the workers' and dependencies' own output")
    args = p.parse_args(argv)
    for action in p._actions:  # parsed again without defaults: only what the command line gives is set
        action.default = argparse.SUPPRESS
    args.given = frozenset(vars(p.parse_args(argv)))
    return args


def farm_attackers(args: argparse.Namespace, spec: SweepSpec) -> tuple[str, ...]:
    """The attackers run on every checkpoint: ``--attackers`` (validated) or the preset's farm."""
    if args.attackers is None:
        return spec.preset.farm_attackers
    names = () if args.attackers.strip() == "none" else tuple(a.strip() for a in args.attackers.split(","))
    try:
        check_names(names)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return names


def verify_resume_state(storage: str, name: str) -> None:
    """The sweep's Tune state, and its noise baseline's where it has one, are sealed by this user's resume key
    (``platform.run.resume_seal``): checked before anything is unpickled or recorded."""
    for folder in (name, tune_name(name)):
        location = tune_storage.join(storage, folder)
        if folder == name or tune_storage.exists(tune_storage.join(location, TUNER_STATE)):
            resume_seal.verify(location)


def check_data(spec: SweepSpec) -> dict[str, int]:
    """Load the preset's data once on the driver, so missing data fails before any trial is scheduled."""
    point = spec.grid_points()[0]
    try:
        return spec.preset.data_counts(point)
    except Exception as exc:  # noqa: BLE001 - DataUnavailableError, a bad path, a corrupt file: one line for the user
        raise UsageError(f"data for preset {spec.preset.name!r} unavailable: {str(exc).splitlines()[0]}") from None


def planned_cost(client: MlflowClient, exp_id: str, spec: SweepSpec, planned: int, baseline_trials: int,
                 attackers: tuple[str, ...]) -> CostEstimate:
    """The sweep's plan and its expected wall time, priced from the newest finished sweep like it in the store."""
    epochs, every = spec.config.get("epochs"), spec.config.get("checkpoint_every") or 0
    checkpoints = 1 if not epochs else len({e for e in range(1, epochs + 1) if e == epochs or (every and e % every == 0)})
    like = {"preset": spec.preset.name, "profile": spec.profile} | tracking.flatten("attackers", attackers)
    return CostEstimate(planned, baseline_trials, attackers, checkpoints, last_finished(client, exp_id, like))


def run(args: argparse.Namespace, ending: SweepEnding) -> int:
    """The sweep itself; returns the process exit code (``ending`` records interruptions and crashes)."""
    preflight.check_sweep_options(args)
    silence(args.verbose)
    if (args.preset is None) == (args.preset_file is None):
        raise UsageError("give a preset name or --preset-file PATH (exactly one)")
    preset_file = args.preset_file and str(Path(args.preset_file).expanduser().resolve())
    spec = with_seeds(resolve(args.preset, args.profile, args.overrides, preset_file), args.seeds, args.search)
    if args.resume is None:  # a resumed sweep keeps the plan it was started with
        preflight.check_sweep_size(spec, args.search, args.samples, args.yes)
    axes = [Axis(**a) for a in spec.preset.pareto_axes]
    attackers = farm_attackers(args, spec)
    tracking_uri = args.tracking_uri or f"sqlite:///{Path.cwd() / 'mlflow.db'}"
    client = tracking.connect(tracking_uri)
    storage = tune_storage.resolve(args.storage)
    preflight.check_storage(storage)
    name = find_sweep(storage, spec.preset.name, args.resume or None) if args.resume is not None \
        else f"{spec.preset.name}-{spec.profile}-{time.strftime('%Y%m%d-%H%M%S')}"
    local = tune_storage.local_path(storage)
    if args.resume is not None and local is not None:  # a bucket's permissions are the store's own business
        preflight.check_resume_source(local, local / name, local / name / TUNER_STATE)
    if args.resume is not None:
        verify_resume_state(storage, name)
        args, spec = resume_options.resume(client, args, spec, attackers, name, preset_file)
        attackers = farm_attackers(args, spec)

    counts = check_data(spec)
    print(f"data: {counts}", flush=True)
    planned = (len(spec.grid_points()) if args.search == "grid"
               else (args.samples or spec.preset.profiles[spec.profile].optuna_samples))
    if args.resume is not None:
        print(f"resuming sweep {name} from {tune_storage.join(storage, name)} (its own grid and config)", flush=True)
    else:
        print(f"sweep {name}: preset {spec.preset.name}, profile {spec.profile}, {args.search} search, {planned} trials",
              flush=True)

    init_ray(args.address, args.verbose)
    gpus = default_gpus_per_trial() if args.gpus_per_trial is None else args.gpus_per_trial
    cpus = spec.preset.profiles[spec.profile].cpus_per_trial
    spec = replace(spec, config={**spec.config, "threads": max(1, int(cpus))})
    resources = {"cpu": cpus, "gpu": gpus}
    if args.verbose:
        print(f"ray: {ray.cluster_resources()}; per trial {resources}", flush=True)
    preflight.check_resources(resources, ray.cluster_resources())

    exp_id = tracking.experiment_id(client, args.experiment or f"putlab-{spec.preset.name}")
    parent_id, reopened = tracking.start_parent(client, exp_id, name, {
        "preset": spec.preset.name, "profile": spec.profile, "mechanism": spec.preset.mechanism_name,
        "dataset": spec.preset.dataset, "search": args.search, "storage": tune_storage.join(storage, name),
        "grid": spec.grid_param, "config": spec.config, "planned_trials": planned, "attackers": attackers,
        NOISE_PARAM: spec.preset.noise_baseline and not args.no_noise_baseline,
    } | ({"preset_file": preset_file} if preset_file else {}))
    again = f"--preset-file={preset_file}" if preset_file else spec.preset.name  # how the resume command names it
    ending.attach(client, exp_id, parent_id, resume_command(again, name, {
        "--tracking-uri": tracking_uri, "--storage": storage, "--experiment": args.experiment,
        "--address": args.address, "--attackers": args.attackers, "--gpus-per-trial": args.gpus_per_trial}))
    planned = int(client.get_run(parent_id).data.params["planned_trials"])  # a resumed sweep keeps its own plan
    params = client.get_run(parent_id).data.params
    noise = baseline_spec(logged_spec(spec, params)) if params.get(NOISE_PARAM) == "True" else None
    if noise is not None:
        print(f"noise baseline: {len(noise.grid_points())} trials after the sweep's own (σ ∈ "
              f"{{{', '.join(f'{v:g}' for v in noise.grid['sigma'])}}}), same data and farm; off: --no-noise-baseline",
              flush=True)
    print(planned_cost(client, exp_id, spec, planned, len(noise.grid_points()) if noise else 0, attackers).line(),
          flush=True)
    if not reopened:
        tracking.log_metrics(client, parent_id, {f"data/{k}": float(v) for k, v in counts.items()})
    has_baselines = any(k.startswith("baseline/") for k in client.get_run(parent_id).data.metrics)
    baselines = None
    if spec.preset.baselines is not None and not has_baselines:
        baselines = ray.remote(spec.preset.baselines).options(num_cpus=cpus, num_gpus=gpus).remote(spec.grid_points()[0])

    plan = None
    if attackers and spec.preset.checkpoint_inputs is not None:
        plan = FarmPlan(spec.preset.checkpoint_inputs, attackers, spec.preset.privacy_attackers, resources)
    if args.resume is not None:
        tuner = restore_tuner(spec, resources, storage, name)
    else:
        logger = MlflowTrialLogger(tracking_uri, exp_id, parent_id, spec.preset.label_keys, spec.preset.checkpoint_figures,
                                   storage=storage, mechanism=spec.preset.mechanism_name,
                                   shown=tuple(m for m, _ in spec.preset.optuna_objectives),
                                   total_epochs=spec.config.get("epochs"), farm=plan, verbose=args.verbose)
        tuner = build_tuner(spec, search=args.search, samples=args.samples, resources=resources,
                            storage=storage, name=name, callbacks=[logger],
                            max_concurrent=args.max_concurrent, max_failures=args.max_failures,
                            progress=SweepProgress(planned))
    with ending.fitting():
        results = tuner.fit()
    if ending.signal is not None:
        log_ready_baselines(client, parent_id, baselines)
        return ending.interrupted()
    caught_up = attack_missing(client, exp_id, parent_id, plan)[0] if plan else 0  # attacks an interruption lost
    noise_results = None
    if noise is not None:
        with ending.fitting():
            noise_results = run_baseline(noise, tracking_uri=tracking_uri, exp_id=exp_id, parent_id=parent_id,
                                         storage=storage, sweep=name, farm=plan, resources=resources,
                                         max_concurrent=args.max_concurrent, max_failures=args.max_failures,
                                         verbose=args.verbose)
        if ending.signal is not None:
            log_ready_baselines(client, parent_id, baselines)
            return ending.interrupted()
    if caught_up:
        print(f"attack farm: caught up on {caught_up} checkpoint(s)", flush=True)

    if baselines is not None:
        baseline_metrics: dict[str, float] = ray.get(baselines)
        tracking.log_metrics(client, parent_id, baseline_metrics)
    parent_metrics = client.get_run(parent_id).data.metrics
    summary = publish(client, parent_id, spec.preset)
    print(format_summary(summary, axes, spec.preset.label_keys))
    if noise is not None:
        print(format_comparison(summary.compared, summary.noise, axes,
                                finished_trials(baseline_table(client, exp_id, parent_id))))
    if spec.preset.baselines is not None:
        shown = (f"{k} {readable(v)}" for k, v in sorted(parent_metrics.items()) if k.startswith("baseline/"))
        print("raw-data baselines: " + ", ".join(shown))
    print(f"report: {write_sweep_report(client, parent_id, spec.preset, summary, tracking_uri)}", flush=True)
    incomplete = results.num_errors > 0 or results.num_terminated < planned
    if noise_results is not None and noise is not None:
        incomplete |= noise_results.num_errors > 0 or noise_results.num_terminated < len(noise.grid_points())
    experiment = client.get_experiment(exp_id).name
    if tracking_uri.startswith(("http://", "https://")):  # a tracking server is its own UI
        print(f"MLflow: open {tracking.ui_url(tracking_uri, exp_id)}  (experiment {experiment}; the front's trials: "
              f"expand run {name})")
    else:
        print(f"MLflow: {command('mlflow', 'ui', '--backend-store-uri', tracking_uri, '--workers', '1')}  "
              f"(experiment {experiment}, run {name})")
        print(f"       then open {tracking.ui_url(tracking_uri, exp_id)}  (the front's trials: expand run {name})")
    if incomplete:
        return ending.interrupted(f"{name} incomplete")
    client.set_terminated(parent_id, "FINISHED")
    return 0


def print_config_schema(args: argparse.Namespace) -> int:
    """``--config-schema``: the preset's config fields as a table, or its model's JSON schema."""
    preset = get_preset(args.preset)
    if args.config_schema == "json":
        print(json.dumps(config_model(preset).model_json_schema(), indent=2))
    else:
        print(text_table(preset))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and exit code 2."""
    args = parse_args(argv)
    if args.config_schema:
        return guarded(lambda: print_config_schema(args))
    with SweepEnding() as ending:
        return guarded(lambda: run(args, ending))


if __name__ == "__main__":
    sys.exit(main())

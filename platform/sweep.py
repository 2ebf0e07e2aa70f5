"""``python -m platform.sweep <preset>``: run a privacy-utility sweep on Ray Tune, tracked in MLflow.

Validates everything (preset, grid values, overrides, tracking store, data) before any trial is
scheduled; then one Tune trial per configuration, a child MLflow run per trial, raw-data reference points,
and the sweep's Pareto front with its hypervolume on the parent run.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from attacks.attackers.registry import check_names
from core.commands import python_module
from core.messages import first_line
from core.quiet import silence
from platform.cli import exit_with, guarded
from platform.errors import UsageError
from platform.plan import resume_options
from platform.plan.options import SweepOptions
from platform.plan.schema import config_model, text_table
from platform.plan.seed_axis import with_seeds
from platform.plan.spec import SweepSpec, get_preset, resolve
from platform.plan.sweep_plan import SweepPlan
from platform.results import tracking
from platform.results.comparison_grid import ComparisonGrid
from platform.results.store import Run, Store
from platform.run import preflight, resume_seal
from platform.run import storage as tune_storage
from platform.run.comparison_grid import tune_name
from platform.run.interrupts import SweepEnding
from platform.run.tuner import TUNER_STATE, find_sweep

if TYPE_CHECKING:
    from platform.run.cost_estimate import CostEstimate



class RenamedFlag(argparse.Action):
    """A flag kept under its old name: it sets what the new one sets, and says once on stderr that it was renamed."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, True)
        new = "--" + self.dest.replace("_", "-")
        print(f"note: {option_string} is the old name of {new}; it still works, but use {new}", file=sys.stderr)

def parse_args(argv: list[str] | None = None) -> SweepOptions:
    """The command line (see ``--help``) as typed options; ``given`` names the options it gives (the defaults are
    :class:`SweepOptions`'s)."""
    p = argparse.ArgumentParser(
        prog="python -m platform.sweep",
        description="Run a privacy-utility sweep of a preset on Ray Tune; track it in MLflow with its Pareto front.",
        epilog="Example: python -m platform.sweep amnist --profile smoke --set lam=0,1,10 --set epochs=2. "
               "The config keys of a preset: python -m platform.sweep amnist --config-schema",
    )
    p.add_argument("preset", nargs="?", help="preset name, e.g. amnist (see search_spaces/); or give --preset-file")
    p.add_argument("--preset-file", metavar="PATH",
                   help="a Python file defining PRESET = search_spaces.Preset(...) with your own mechanism (see examples/)")
    p.add_argument("--profile", help="scale of the sweep: smoke | quick | paper, amnist also fast (its default) and scale; "
                                     "the preset's default otherwise (adult-membership: paper-n, paper-lam, paper-p_x, "
                                     "paper-sigma)")
    p.add_argument("--set", dest="overrides", action="append", metavar="KEY=VALUE",
                   help="override a config value, or a grid axis with comma-separated values (alpha=0.5,1,inf)")
    p.add_argument("--search", choices=("grid", "optuna"),
                   help="grid (default) or Optuna multi-objective search over the axes' continuous ranges")
    p.add_argument("--samples", type=int, help="number of Optuna trials (default: the profile's)")
    p.add_argument("--seeds", type=int,
                   help="replicate every grid point over N seeds: the config's seed, seed + 1, ... (default 1)")
    p.add_argument("--attackers", help="comma-separated attack farm for every checkpoint, or 'none' (default: the preset's)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI (default: sqlite:///<cwd>/mlflow.db)")
    p.add_argument("--experiment", help="MLflow experiment name (default: putlab-<preset>)")
    p.add_argument("--storage",
                   help="Tune storage for trials and checkpoints: a folder every node sees, or a URI such as "
                        "s3://bucket/runs (default: ./putlab_runs)")
    p.add_argument("--gpus-per-trial", type=float, help="GPU share per trial (default: 0.25 when the cluster has GPUs, else 0)")
    p.add_argument("--max-concurrent", type=int, help="most trials running at once (default: as resources allow)")
    p.add_argument("--max-failures", type=int, help="retries of a failed trial from its last checkpoint (default 2)")
    p.add_argument("--address", help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)")
    p.add_argument("--resume", nargs="?", const="", metavar="SWEEP",
                   help="continue an interrupted sweep (default: the newest of this preset) with the options it recorded; "
                        "finished trials are kept")
    p.add_argument("--config-schema", nargs="?", const="text", choices=("text", "json"),
                   help="print the preset's config fields (type, value, bounds, description; json: the JSON schema) "
                        "and exit")
    p.add_argument("--no-comparison-grids", action="store_true", default=None,
                   help="skip the comparison grids a preset runs beside its own and draws on its front (amnist, "
                        "amnist-privatizer: Gaussian noise, the stroke redraw and the digit prototype)")
    p.add_argument("--no-baseline", dest="no_comparison_grids", action=RenamedFlag, default=None, nargs=0,
                   help=argparse.SUPPRESS)  # the option's name before comparison grids had their own
    p.add_argument("--no-reuse", action="store_true", default=None,
                   help="run every trial again (the sweep's own and its comparison grids'), even those an earlier sweep "
                        "in the store ran with the same data, seed, farm and code (default: those are copied from it, "
                        "and the report says so)")
    p.add_argument("--learning-curve", action=argparse.BooleanOptionalAction, default=None,
                   help="refit every front point's strongest attacker on 25/50/100/200%% of its records and fit where "
                        "it saturates, beside the comparison grids (default: on, off in the smoke profile)")
    p.add_argument("--budget", metavar="TIME",
                   help="the longest you will wait, e.g. 10m, 90s or 1h30m: without --profile the profile with the "
                        "most work that finished sweeps on this machine price within it runs; a --profile priced over "
                        "it is refused")
    p.add_argument("--yes", action="store_true", default=None,
                   help=f"run a sweep of more than {preflight.CONFIRM_TRIALS} trials (refused without it)")
    p.add_argument("-v", "--verbose", action="store_true", default=None,
                   help="every trial event, Ray's resources, the workers' and dependencies' own output")
    return SweepOptions.given_by(vars(p.parse_args(argv)))  # every default None: what is set, the line gives


def farm_attackers(args: SweepOptions, spec: SweepSpec) -> tuple[str, ...]:
    """The attackers run on every checkpoint, ``--attackers`` or the preset's farm, checked against the registry (so
    an installed attacker plug-in that is broken stops the sweep here, in one line)."""
    if args.attackers is None:
        names = spec.preset.farm.attackers
    else:
        names = () if args.attackers.strip() == "none" else tuple(a.strip() for a in args.attackers.split(","))
    try:
        check_names(names)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return names


def check_data(spec: SweepSpec) -> dict[str, int]:
    """Load the preset's data once on the driver, so missing data fails before any trial is scheduled."""
    point = spec.grid_points()[0]
    try:
        return spec.preset.data_counts(point)
    except Exception as exc:  # noqa: BLE001 - DataUnavailableError, a bad path, a corrupt file: one line for the user
        raise UsageError(f"data for preset {spec.preset.name!r} unavailable: {first_line(exc)}") from None


def requested_spec(args: SweepOptions) -> tuple[SweepSpec, str | None]:
    """The preset (by name or file) at the profile, with ``--set`` values and the seed axis; and the file's full path."""
    if (args.preset is None) == (args.preset_file is None):
        raise UsageError("give a preset name or --preset-file PATH (exactly one)")
    preset_file = args.preset_file and str(Path(args.preset_file).expanduser().resolve())
    spec = with_seeds(resolve(args.preset, args.profile, args.overrides, preset_file), args.seeds, args.search)
    if args.resume is None:  # a resumed sweep keeps the plan it was started with
        preflight.check_sweep_size(spec, args.search, args.samples, args.yes)
    return spec, preset_file


def plan_sweep(args: SweepOptions) -> SweepPlan:
    """What will run: the spec and farm, the store and storage checked, and for ``--resume`` the sweep's recorded
    options in place of the command line's."""
    spec, preset_file = requested_spec(args)
    grids = ComparisonGrid.all(spec.preset)
    attackers = farm_attackers(args, spec)
    tracking_uri = args.tracking_uri or f"sqlite:///{Path.cwd() / 'mlflow.db'}"
    store = Store.open(tracking_uri)
    storage = tune_storage.resolve(args.storage)
    preflight.check_storage(storage)
    if args.resume is None:
        name = f"{spec.preset.name}-{spec.profile}-{time.strftime('%Y%m%d-%H%M%S')}"
    else:
        name = find_sweep(storage, spec.preset.name, args.resume or None)
        experiment = args.experiment or f"putlab-{spec.preset.name}"
        parent = resume_options.recorded_parent(store, experiment, name)
        if not args.resume:
            check_newest_unfinished(store, parent, storage, name, spec.preset.name,
                                    [args.preset] if args.preset else ["--preset-file", str(preset_file)])
        check_resume_source(storage, name, grids)
        recorded = resume_options.recorded_params(store, parent, experiment, name)
        args, spec = resume_options.resume(args, spec, attackers, recorded, preset_file, grids)
        attackers = farm_attackers(args, spec)
    options = {"--tracking-uri": tracking_uri, "--storage": storage, "--experiment": args.experiment,
               "--address": args.address, "--attackers": args.attackers,
               "--gpus-per-trial": None if args.gpus_per_trial is None else str(args.gpus_per_trial)}
    return SweepPlan(spec=spec, attackers=attackers, name=name, tracking_uri=tracking_uri,
                     experiment=args.experiment or f"putlab-{spec.preset.name}", storage=storage,
                     location=tune_storage.join(storage, name), preset_file=preset_file, search=args.search,
                     samples=args.samples, comparison_grids=grids,
                     with_comparison_grids=bool(grids) and not args.no_comparison_grids, resumed=args.resume is not None,
                     address=args.address, gpus_per_trial=args.gpus_per_trial, max_concurrent=args.max_concurrent,
                     max_failures=args.max_failures, verbose=args.verbose,
                     learning_curves=learning_curves(args.learning_curve, spec.profile), reuse=not args.no_reuse,
                     options=tuple(options.items()))


def learning_curves(asked: bool | None, profile: str) -> bool:
    """Whether the sweep draws its front points' learning curves: as asked, else in every profile but the smoke one
    (whose seconds-long check they would outlast)."""
    return asked if asked is not None else profile != "smoke"


def check_newest_unfinished(store: Store, parent: Run | None, storage: str, name: str, preset: str,
                            start: list[str]) -> None:
    """A bare ``--resume`` continues the newest sweep of ``preset`` (``name``, whose ``parent`` run the store holds, or
    None) only while it is unfinished: once its parent run has FINISHED, a UsageError naming it, how to start a new
    sweep (``start``: the preset's arguments) and the unfinished sweeps of the preset that ``--resume`` can name."""
    if parent is None or parent.info.status != "FINISHED":
        return
    sweeps = store.runs([parent.info.experiment_id], where=f"tags.`{tracking.TAG_ROLE}` = 'sweep'",
                                order_by=["attributes.start_time DESC"], max_results=1000)
    unfinished = [r.info.run_name for r in sweeps if r.info.status != "FINISHED" and r.data.params.get("preset") == preset
                  and tune_storage.exists(tune_storage.join(storage, r.info.run_name, TUNER_STATE))]
    more = f" (and {len(unfinished) - 3} more)" if len(unfinished) > 3 else ""
    others = (f"or resume an unfinished one by name: --resume {' | '.join(unfinished[:3])}{more}" if unfinished
              else "no unfinished sweep is left to resume")
    raise UsageError(f"the newest sweep of this preset, {name}, has finished (--resume continues unfinished sweeps); "
                     f"start a new one: {python_module('platform.sweep', *start)}; {others}")


def check_resume_source(storage: str, name: str, grids: tuple[ComparisonGrid, ...]) -> None:
    """The sweep's Tune state can be read (a local folder's permissions: a bucket's are the store's business) and is
    sealed by this user's resume key, and so is each of its comparison ``grids``' where it has one
    (``platform.run.resume_seal``): checked before anything is unpickled or recorded."""
    local = tune_storage.local_path(storage)
    if local is not None:
        preflight.check_resume_source(local, local / name, local / name / TUNER_STATE)
    for folder in (name, *(tune_name(name, grid.name) for grid in grids)):
        location = tune_storage.join(storage, folder)
        if folder == name or tune_storage.exists(tune_storage.join(location, TUNER_STATE)):
            resume_seal.verify(location)


def announce(plan: SweepPlan, counts: dict[str, int]) -> None:
    """The data the sweep reads, and what it runs."""
    print(f"data: {counts}", flush=True)
    if plan.resumed:
        print(f"resuming sweep {plan.name} from {plan.location} (its own grid and config)",
              flush=True)
    else:
        print(f"sweep {plan.name}: preset {plan.spec.preset.name}, profile {plan.spec.profile}, {plan.search} search, "
              f"{plan.planned} trials", flush=True)


def run(args: SweepOptions, ending: SweepEnding) -> int:
    """The sweep as named steps; returns the process exit code (``ending`` records interruptions and crashes)."""
    # imported here, not at the top: they cost seconds, and a refused command or --help needs neither
    from platform.publish import publish_sweep
    from platform.run.launch import catch_up, fit, launch

    preflight.check_sweep_options(args)
    silence(args.verbose)
    if args.budget is not None:
        args = within_budget(args)
    plan = plan_sweep(args)
    counts = check_data(plan.spec)
    announce(plan, counts)
    sweep = launch(plan, counts, ending)
    results = fit(sweep, ending)
    caught_up = catch_up(sweep, ending) if results is not None else None
    if results is None or caught_up is None:
        return ending.interrupted()
    return publish_sweep(sweep, results, caught_up, ending)


def within_budget(args: SweepOptions) -> SweepOptions:
    """``--budget``: the options with the profile it runs (the one given, or the one with the most work this machine
    prices within it), said in one line before anything runs."""
    from platform.run.budget import choose, seconds_of

    limit_s = seconds_of(args.budget or "")
    if args.resume is not None:
        raise UsageError("--budget picks a new sweep's profile; a resumed sweep runs the one it recorded")
    preset = requested_spec(args)[0].preset
    priced = {name: priced_profile(replace(args, profile=name)) for name in preset.profiles}
    choice = choose(priced, limit_s, args.profile)
    print(choice.line, flush=True)
    return replace(args, profile=choice.profile, given=args.given | {"profile"})


def priced_profile(args: SweepOptions) -> CostEstimate | None:
    """The sweep ``args`` plan priced on this machine, None when that profile cannot be planned with them (too many
    trials without --yes, a --set value it refuses)."""
    from platform.run.cost_estimate import estimate, machine_kind
    from platform.run.launch import threaded

    try:
        plan = plan_sweep(args)
    except UsageError:
        return None
    store = Store(plan.tracking_uri)
    experiment = store.experiment_named(plan.experiment)
    exp_id = experiment.experiment_id if experiment else None
    return estimate(store, exp_id, plan, threaded(plan.spec), machine_kind())


def print_config_schema(args: SweepOptions) -> int:
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
    exit_with(main)

"""``--resume`` keeps the sweep's own options: what its parent run recorded (profile, search, attackers, baseline
grid and its reuse, learning curves, seeds, ``--set`` values) wins, and an option given again that contradicts it is a UsageError.

Options that only say how to run (``--max-concurrent``, ``--max-failures``, ``--gpus-per-trial``, ``--address``)
are not recorded and may change on resume.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from core.files.structured import parse_json
from platform.errors import UsageError
from platform.plan.comparison_grid import logged_spec
from platform.plan.options import SweepOptions
from platform.plan.seed_axis import with_seeds
from platform.plan.spec import SweepSpec, parse_overrides, resolve
from platform.results.comparison_grid import ComparisonGrid
from platform.results.replicates import SEED
from platform.results.store import Run, Store

KEPT = "a resumed sweep keeps its own options"


def recorded_parent(store: Store, experiment: str, sweep: str) -> Run | None:
    """The sweep's parent run in the store, read once (None when the store holds no such run)."""
    found = store.experiment_named(experiment)
    parent = store.find_parent(found.experiment_id, sweep) if found is not None else None
    return None if parent is None else store.run(parent)


def recorded_params(store: Store, parent: Run | None, experiment: str, sweep: str) -> dict[str, str]:
    """The params the sweep's ``parent`` run recorded; a UsageError when the store holds no such run."""
    if parent is None:
        raise UsageError(f"sweep {sweep} has no run in MLflow experiment {experiment!r} of {store.tracking_uri}: "
                         f"resume it with the --tracking-uri and --experiment it ran with")
    return parent.data.params


def recorded_attackers(params: dict[str, str]) -> tuple[str, ...]:
    """The attack farm the sweep ran with (its ``attackers`` param, a JSON list)."""
    return parse_json(params["attackers"], tuple[str, ...], "the sweep's recorded param 'attackers'")


def comparison_grids_on(params: dict[str, str], grids: tuple[ComparisonGrid, ...]) -> bool:
    """Whether the sweep runs its preset's comparison grids ``grids`` (those it recorded)."""
    return any(params.get(grid.param) == "True" for grid in grids)


@dataclass(frozen=True)
class Recorded:
    """What the sweep's parent run recorded, read once: its params, its farm, whether it runs its comparison grids
    (``grids``: its preset's, whether run or not) and reuses their stored trials."""

    params: dict[str, str]
    attackers: tuple[str, ...]
    grids: tuple[ComparisonGrid, ...]
    comparison_grids_on: bool
    learning_curves: bool | None  # None: a sweep older than the record, which runs as the command line says
    reuse: bool | None  # likewise

    @classmethod
    def read(cls, params: dict[str, str], grids: tuple[ComparisonGrid, ...]) -> Recorded:
        """The record of a parent run's ``params``."""
        curves, reuse = params.get("learning_curves"), params.get("reuse")
        return cls(params, recorded_attackers(params), grids, comparison_grids_on(params, grids),
                   None if curves is None else curves == "True", None if reuse is None else reuse == "True")


def axis_or_value(spec: SweepSpec, key: str) -> Any:
    """What ``spec`` sets ``key`` to: its grid axis's values (as a set of reprs: order does not matter), else its
    config value (None when it has neither)."""
    return {repr(v) for v in spec.grid[key]} if key in spec.grid else spec.config.get(key)


def check_given(args: SweepOptions, recorded: Recorded, cli: SweepSpec, attackers: tuple[str, ...],
                preset_file: str | None) -> None:
    """A UsageError naming the first option the command line gives (``args.given``) that contradicts what the sweep
    recorded; ``cli`` and ``attackers`` are the command line's spec and farm."""
    params = recorded.params
    if params.get("preset") != cli.preset.name:
        raise UsageError(f"the sweep is of preset {params.get('preset')!r}, not {cli.preset.name!r}")
    differ = [
        ("profile", f"--profile {args.profile}", args.profile != params["profile"], f"profile {params['profile']}"),
        ("search", f"--search {args.search}", args.search != params["search"], f"{params['search']} search"),
        ("samples", f"--samples {args.samples}", params["search"] == "optuna" and args.samples != int(params["planned_trials"]),
         f"{params['planned_trials']} samples"),
        ("attackers", f"--attackers {args.attackers}", attackers != recorded.attackers,
         f"attackers {','.join(recorded.attackers) or 'none'}"),
        ("no_comparison_grids", "--no-comparison-grids", recorded.comparison_grids_on, "comparison grid on"),
        ("learning_curve", "--learning-curve" if args.learning_curve else "--no-learning-curve",
         recorded.learning_curves is not None and args.learning_curve != recorded.learning_curves,
         f"learning curves {'on' if recorded.learning_curves else 'off'}"),
        ("no_reuse", "--no-reuse", recorded.reuse is True, "reuse of stored trials"),
    ]
    for option, text, contradicts, was in differ:
        if option in args.given and contradicts:
            raise UsageError(f"{text} contradicts the sweep's recorded {was}; {KEPT} (drop {text.split()[0]})")
    if not {"overrides", "seeds"} & args.given:
        return
    ran = resumed_spec(args, params, preset_file)
    asked = with_seeds(resolve(args.preset, params["profile"], args.overrides, preset_file), args.seeds, params["search"])
    for key in [*parse_overrides(args.overrides), *([SEED] if "seeds" in args.given else [])]:
        if axis_or_value(asked, key) != axis_or_value(ran, key):
            text = f"--seeds {args.seeds}" if key == SEED and "seeds" in args.given else f"--set {key}"
            raise UsageError(f"{text} contradicts the sweep's recorded {key} = {ran.grid.get(key, ran.config.get(key))}; "
                             f"{KEPT} (drop it)")


def restored(args: SweepOptions, recorded: Recorded) -> SweepOptions:
    """``args`` with the recorded options in place of the command line's (its ``--set`` values and seeds are in the
    recorded config and grid, which :func:`resumed_spec` reads)."""
    params = recorded.params
    samples = int(params["planned_trials"]) if params["search"] == "optuna" else args.samples
    curves = args.learning_curve if recorded.learning_curves is None else recorded.learning_curves
    no_reuse = args.no_reuse if recorded.reuse is None else not recorded.reuse
    return replace(args, profile=params["profile"], search=params["search"], samples=samples, overrides=(), seeds=1,
                   attackers=",".join(recorded.attackers) or "none", no_comparison_grids=not recorded.comparison_grids_on,
                   learning_curve=curves, no_reuse=no_reuse)


def resumed_spec(args: SweepOptions, params: dict[str, str], preset_file: str | None) -> SweepSpec:
    """The sweep as its parent run recorded it (profile, config, grid with its seed axis)."""
    return with_seeds(logged_spec(resolve(args.preset, params["profile"], [], preset_file), params), 1, params["search"])


def summary(recorded: Recorded, spec: SweepSpec) -> str:
    """One line: the recorded options the resumed sweep runs with."""
    params = recorded.params
    seeds = len(spec.grid.get(SEED, [None]))
    names = [b.name for b in recorded.grids if b.param in params]
    state = "on" if recorded.comparison_grids_on else "off"
    reuse = " (stored trials not reused)" if recorded.reuse is False else ""
    grid = f"{', '.join(names)} baseline{'s' if len(names) > 1 else ''} {state}{reuse}, " if names else ""
    curves = "" if recorded.learning_curves is None else f"learning curves {'on' if recorded.learning_curves else 'off'}, "
    return (f"resuming with the sweep's recorded options: profile {params['profile']}, {params['search']} search, "
            f"attackers {','.join(recorded.attackers) or 'none'}, {grid}{curves}{seeds} seed{'s' if seeds > 1 else ''}, "
            "its own config and grid")


def resume(args: SweepOptions, cli: SweepSpec, attackers: tuple[str, ...], params: dict[str, str],
           preset_file: str | None, grids: tuple[ComparisonGrid, ...]) -> tuple[SweepOptions, SweepSpec]:
    """(args, spec) of a resumed sweep: its recorded options (``params``: its parent run's), once no option of the
    command line contradicts them (``cli`` and ``attackers``: the command line's spec and farm; ``grids``: its preset's
    comparison grids); says so in one line."""
    recorded = Recorded.read(params, grids)
    check_given(args, recorded, cli, attackers, preset_file)
    spec = resumed_spec(args, recorded.params, preset_file)
    print(summary(recorded, spec), flush=True)
    return restored(args, recorded), spec

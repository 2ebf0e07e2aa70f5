"""``python -m platform.sweep``'s command line as one typed, frozen object: built once from argparse by the command
(``platform.sweep.parse_args``) and read by the plan, preflight checks and ``--resume``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SweepOptions:
    """Every option of the sweep command with its default (its ``--help`` says what each means), and which ones the
    command line gave."""

    preset: str | None = None
    preset_file: str | None = None
    profile: str | None = None
    overrides: tuple[str, ...] = ()  # the --set KEY=VALUE items, in order
    search: str = "grid"  # or "optuna"
    samples: int | None = None
    seeds: int = 1
    attackers: str | None = None  # comma-separated, or "none" (None: the preset's farm)
    tracking_uri: str | None = None
    experiment: str | None = None
    storage: str = "putlab_runs"
    gpus_per_trial: float | None = None
    max_concurrent: int | None = None
    max_failures: int = 2
    address: str | None = None
    resume: str | None = None  # None: a new sweep; "": the newest of the preset; else the sweep's name
    config_schema: str | None = None
    no_comparison_grids: bool = False
    no_reuse: bool = False  # run every trial, even those the store holds (platform.run.grid_reuse)
    learning_curve: bool | None = None  # None: on, but off in the smoke profile
    budget: str | None = None  # the longest the user will wait ("10m"): picks or checks the profile by its price here
    yes: bool = False
    verbose: bool = False
    given: frozenset[str] = frozenset()  # the fields the command line gives (a resumed sweep checks those)

    @classmethod
    def given_by(cls, parsed: dict[str, Any]) -> SweepOptions:
        """The options from a parse whose every default is None: what it sets is given, the rest takes the defaults
        above (so ``--seeds 1`` is given, and a missing ``--seeds`` is not)."""
        given = {key: value for key, value in parsed.items() if value is not None}
        if "overrides" in given:
            given["overrides"] = tuple(given["overrides"])
        return cls(**given, given=frozenset(given))

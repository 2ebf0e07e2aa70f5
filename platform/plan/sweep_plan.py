"""A sweep's plan: what the command line (or a resumed sweep's record) asks for, validated before anything runs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from platform.plan.spec import SweepSpec
from platform.results.comparison_grid import ComparisonGrid


@dataclass(frozen=True)
class SweepPlan:
    """The grid to run and its farm, where it is tracked and stored, and how it runs (Ray, resources, retries)."""

    spec: SweepSpec
    attackers: tuple[str, ...]  # the farm run on every checkpoint
    name: str  # the Tune run and the parent MLflow run
    tracking_uri: str
    experiment: str
    storage: str  # Tune storage: a folder every node sees, or a URI
    location: str  # the Tune run's folder in the storage (``storage/name``)
    preset_file: str | None
    search: str  # "grid" or "optuna"
    samples: int | None  # Optuna trials (None: the profile's)
    comparison_grids: tuple[ComparisonGrid, ...]  # the preset's (``Preset.comparison_grids``), run or not
    with_comparison_grids: bool  # whether they run beside the sweep's
    resumed: bool
    address: str | None = None
    gpus_per_trial: float | None = None  # None: a quarter GPU when the cluster has GPUs
    max_concurrent: int | None = None
    max_failures: int = 2
    verbose: bool = False
    learning_curves: bool = True  # the front points' learning curves after the grid (platform.run.front_curves)
    reuse: bool = True  # trials the store holds are copied, not run again (platform.run.grid_reuse)
    options: tuple[tuple[str, str | None], ...] = ()  # what a resume command repeats (--tracking-uri, ...)

    @property
    def planned(self) -> int:
        """Trials of the sweep's own grid (or Optuna samples)."""
        if self.search == "grid":
            return len(self.spec.grid_points())
        return self.samples or self.spec.preset.profiles[self.spec.profile].optuna_samples

    @property
    def again(self) -> str:
        """How a resume command names the preset: its file, else its name."""
        return f"--preset-file={self.preset_file}" if self.preset_file else self.spec.preset.name

    def parent_params(self, spec: SweepSpec, machine: str) -> dict[str, Any]:
        """What the parent run records of the sweep (``spec``: the plan's with each trial's threads; ``machine``: the
        cluster's kind): what a resume runs again, and what the store's views show."""
        params: dict[str, Any] = {
            "preset": spec.preset.name, "profile": spec.profile, "mechanism": spec.preset.mechanism_name,
            "dataset": spec.preset.dataset, "search": self.search, "storage": self.location,
            "grid": spec.grid_param, "config": spec.config, "planned_trials": self.planned, "attackers": self.attackers,
            "learning_curves": self.learning_curves, "machine": machine,
        }
        if self.preset_file:
            params["preset_file"] = self.preset_file
        for baseline in self.comparison_grids:
            params[baseline.param] = self.with_comparison_grids
        if self.comparison_grids:
            params["reuse"] = self.reuse
        return params

"""The learning curves a sweep draws on its front points after its grid (docs/usage.md#how-far-from-saturation).

Once every checkpoint of the sweep's own grid is attacked, the front of its points is known: each front point's
strongest attacker at its last checkpoint is refitted on nested parts of its records, and on twice as many where the
data set holds them (``platform.run.learning_curves``), as Ray tasks that run while the baseline grids train; the sweep
collects them before it publishes. ``--no-learning-curve`` turns them off.
"""
from __future__ import annotations

from collections.abc import Sequence

from platform.results.store import Run, Store
from platform.results.summary import read_summary
from platform.run.catch_up import checkpoints_of, trial_config
from platform.run.farm import FarmPlan
from platform.run.learning_curves import Pending, start_curves
from search_spaces import Preset

AVAILABLE = "attacker_records_max"  # the data counts' records outside the test split an attacker could release


def start_front_curves(store: Store, parent_id: str, preset: Preset, farm: FarmPlan, runs: Sequence[Run],
                       counts: dict[str, int]) -> Pending:
    """Submit the curves of the front points' strongest attackers (none already drawn) and return them under way;
    ``runs``: the sweep's trial runs (as the catch-up read them); ``counts``: a grid point's data counts, which say how
    many records a 200 % point may use."""
    summary = read_summary(store, parent_id, preset)
    front = set(summary.trials.loc[summary.front, "run_id"]) if summary.front.any() else set()
    pending = start_curves(store, [run for run in runs if run.info.run_id in front], farm, counts.get(AVAILABLE),
                           beside=True)
    if pending:
        jobs = [job for lane in pending.values() for job in lane]
        points = len({job.run_id for job in jobs})
        learners = len(jobs) - points
        also = f" (and the strongest learner of {learners} where a rule leads)" if learners else ""
        print(f"learning curves: refitting the strongest attacker of {points} front point(s){also} on parts of its "
              f"records, in {len(pending)} Ray task(s) beside the comparison grids (off: --no-learning-curve)", flush=True)
    return pending


def available_records(preset: Preset, config: dict) -> int | None:
    """Records outside the test split an attacker of a trial with ``config`` could release (None where the preset's
    data counts do not say)."""
    return preset.data_counts(config).get(AVAILABLE)


def stored_available(preset: Preset, runs: Sequence[Run]) -> int | None:
    """:func:`available_records` for the stored config of the first of ``runs`` with a checkpoint (None without one)."""
    stored = next((found[-1][1] for found in map(checkpoints_of, runs) if found), None)
    return None if stored is None else available_records(preset, trial_config(stored))

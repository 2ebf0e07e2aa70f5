"""Two stores' sweeps compared metric by metric: did a change of the code leave every result where it was?

Run the same sweeps (same presets, profiles and seeds) from the tree before a change into one store and from the tree
after it into another, on one machine, then

    PYTHONPATH=. .venv/bin/python benchmarks/same_results.py sqlite:///before.db sqlite:///after.db

For every experiment in both stores, its newest sweep in each is compared: every trial (matched by its run name, the
comparison grids' included) at every logged step of every metric, and the parent run's ``front/*`` and raw-data
reference metrics. Wall-clock readings (``time/…``, ``sweep/…`` durations, ``pretrain/cached``: whether a warm start
was read or computed) are left out. Prints each difference and exits 1 if there is any.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Iterator

from platform.results.store import Run, Store

CLOCK = re.compile(r"^(time/|sweep/(active_minutes|probe_s|startup_s)$|pretrain/cached$)")  # readings of the clock


def newest_sweeps(client: Store) -> dict[str, tuple[Run, dict[str, Run]]]:
    """Per experiment name: its newest parent run and that sweep's child runs by run name."""
    found = {}
    for experiment in client.experiments():
        runs = client.runs([experiment.experiment_id], max_results=5000)
        parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
        if not parents:
            continue
        parent = max(parents, key=lambda r: r.info.start_time)
        children = {r.info.run_name: r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id}
        found[experiment.name] = (parent, children)
    return found


def histories(client: Store, run: Run) -> dict[str, list[tuple[int, float]]]:
    """Every metric of the run but the clock's, with its values by step."""
    return {key: sorted((m.step, m.value) for m in client.history(run.info.run_id, key))
            for key in run.data.metrics if not CLOCK.match(key)}


def differences(a: dict[str, list[tuple[int, float]]], b: dict[str, list[tuple[int, float]]]) -> Iterator[str]:
    """Each metric logged on one side only, or with other steps or values."""
    for key in sorted(a.keys() | b.keys()):
        if key not in a or key not in b:
            yield f"{key}: only {'after' if key in b else 'before'}"
        elif len(a[key]) != len(b[key]) or any(sa != sb or not same(va, vb)
                                               for (sa, va), (sb, vb) in zip(a[key], b[key], strict=True)):
            yield f"{key}: {a[key][-3:]} before, {b[key][-3:]} after"


def same(a: float, b: float) -> bool:
    """Equal to the last bit (NaN equal to NaN)."""
    return a == b or (math.isnan(a) and math.isnan(b))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", help="tracking URI of the sweeps run before the change")
    parser.add_argument("after", help="tracking URI of the same sweeps run after it")
    args = parser.parse_args()
    before, after = Store(args.before), Store(args.after)
    sweeps_a, sweeps_b = newest_sweeps(before), newest_sweeps(after)
    found = 0
    for name in sorted(sweeps_a.keys() & sweeps_b.keys()):
        (parent_a, trials_a), (parent_b, trials_b) = sweeps_a[name], sweeps_b[name]
        shared = sorted(trials_a.keys() & trials_b.keys())
        pairs = [("the sweep", parent_a, parent_b)] + [(t, trials_a[t], trials_b[t]) for t in shared]
        lonely = sorted(trials_a.keys() ^ trials_b.keys())
        lines = [f"trial {t}: on one side only" for t in lonely]
        compared = 0
        for label, run_a, run_b in pairs:
            found_a, found_b = histories(before, run_a), histories(after, run_b)
            compared += sum(len(v) for v in found_a.values())
            lines += [f"{label}: {d}" for d in differences(found_a, found_b)]
        found += len(lines)
        verdict = "identical" if not lines else f"{len(lines)} differences"
        print(f"{name}: {len(pairs) - 1} trials and the sweep, {compared} logged values: {verdict}")
        for line in lines:
            print(f"  {line}")
    for name in sorted(sweeps_a.keys() ^ sweeps_b.keys()):
        print(f"{name}: in one store only")
        found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

"""Two sweeps of the same grid side by side, trial by trial: did a change weaken the attackers?

For every trial (and noise-baseline trial) the two sweeps share by name, prints the in-trial deep attacker's chosen
member's validation and test accuracy, the records it trained on, the strongest attacker (``attack/max/accuracy``)
and the data user's fresh utility, before and after, with the difference; then the raw-data reference points of both. A
speed-up that costs attacker strength shows as negative differences here.

    PYTHONPATH=. .venv/bin/python benchmarks/attacker_strength.py sqlite:///before.db sqlite:///after.db [SWEEP]
"""
from __future__ import annotations

import argparse

from platform.results.store import Store

COLUMNS = (("attack/deep/val_accuracy", "deep val"), ("attack/deep/accuracy", "deep test"),
           ("attack/max/accuracy", "max"), ("utility/fresh_accuracy", "fresh utility"))


def trials(uri: str, sweep: str) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Each trial's (and baseline trial's) last metrics by run name, and the parent run's raw-data reference points."""
    client = Store(uri)
    exp_id, parent_id = client.find_sweep(sweep)
    runs = [*client.child_runs(exp_id, parent_id), *client.baseline_runs(exp_id, parent_id)]
    baselines = {k: v for k, v in client.run(parent_id).data.metrics.items()
                 if k.startswith("baseline/") and k.endswith("accuracy")}
    return {run.info.run_name: run.data.metrics for run in runs}, baselines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before", help="tracking URI of the sweep before the change")
    p.add_argument("after", help="tracking URI of the sweep after it")
    p.add_argument("sweep", nargs="?", default="putlab-amnist", help="sweep name, run id or experiment (both stores)")
    args = p.parse_args()
    (old, old_base), (new, new_base) = trials(args.before, args.sweep), trials(args.after, args.sweep)
    print(f"{'trial':<30}" + "".join(f"{label:>26}" for _, label in COLUMNS) + f"{'records':>14}")
    deltas: dict[str, list[float]] = {key: [] for key, _ in COLUMNS}
    for name in sorted(set(old) & set(new)):
        cells = []
        for key, _ in COLUMNS:
            a, b = old[name].get(key), new[name].get(key)
            if a is None or b is None:
                cells.append(f"{'—':>26}")
                continue
            deltas[key].append(b - a)
            cells.append(f"{f'{a:.3f} → {b:.3f} ({b - a:+.3f})':>26}")
        records = " → ".join(f"{m[name]['attack/deep/train_records']:.0f}" if "attack/deep/train_records" in m[name]
                             else "—" for m in (old, new))
        print(f"{name:<30}" + "".join(cells) + f"{records:>14}")
    print(f"{'mean difference':<30}" + "".join(
        f"{(f'{sum(d) / len(d):+.3f} ({sum(x > 0 for x in d)}/{len(d)} up)' if d else '—'):>26}" for d in deltas.values()))
    for key in sorted(set(old_base) | set(new_base)):
        a, b = old_base.get(key, float("nan")), new_base.get(key, float("nan"))
        print(f"{key:<45} {a:.3f} → {b:.3f} ({b - a:+.3f})")


if __name__ == "__main__":
    main()

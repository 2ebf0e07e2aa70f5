"""Where a finished sweep spent its compute: training, in-trial attacks, and the attack farm, from its MLflow runs.

Sums, over every trial and step, the seconds the trial logged (``time/setup_s``, ``time/train_s``,
``time/eval_s``, of which ``time/attack_s`` is the in-trial deep attacker) and the farm logged per attacker
(``time/farm/<attacker>_s``), and prints each share of the total. These are worker seconds (each trial and
farm task holds one CPU), not wall time.

    PYTHONPATH=. .venv/bin/python benchmarks/attack_share.py --tracking-uri sqlite:///mlflow.db putlab-amnist
"""
from __future__ import annotations

import argparse
from collections import defaultdict

from mlflow.tracking import MlflowClient

from platform import tracking


def seconds_by_kind(client: MlflowClient, exp_id: str, parent_id: str) -> dict[str, float]:
    """Worker seconds per kind of work, summed over the sweep's trials and steps."""
    totals: dict[str, float] = defaultdict(float)
    for run in tracking.child_runs(client, exp_id, parent_id):
        for key in run.data.metrics:
            if key.startswith("time/") and key.endswith("_s"):
                totals[key] += sum(m.value for m in client.get_metric_history(run.info.run_id, key))
    return dict(totals)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tracking-uri", default="sqlite:///mlflow.db")
    p.add_argument("sweep", nargs="?", default="putlab-amnist", help="sweep run id, sweep name or experiment name")
    args = p.parse_args()
    client = MlflowClient(args.tracking_uri)
    exp_id, parent_id = tracking.find_sweep_parent(client, args.sweep)
    t = seconds_by_kind(client, exp_id, parent_id)
    farm = {k: v for k, v in t.items() if k.startswith("time/farm/")}
    in_trial = t.get("time/attack_s", 0.0)
    training = t.get("time/setup_s", 0.0) + t.get("time/train_s", 0.0) + t.get("time/eval_s", 0.0) - in_trial
    total = training + in_trial + sum(farm.values())
    parent = client.get_run(parent_id)
    wall = (parent.info.end_time or parent.info.start_time) - parent.info.start_time
    print(f"sweep {parent.info.run_name}: {total:.0f} worker-seconds, {wall / 1000:.0f} s wall")
    print(f"  training and evaluation   {training:8.0f} s  {training / total:6.1%}")
    print(f"  in-trial deep attacker    {in_trial:8.0f} s  {in_trial / total:6.1%}")
    for key, value in sorted(farm.items()):
        print(f"  farm {key[10:-2]:<21}{value:8.0f} s  {value / total:6.1%}")
    attacks = in_trial + sum(farm.values())
    print(f"  all attacks               {attacks:8.0f} s  {attacks / total:6.1%}")


if __name__ == "__main__":
    main()

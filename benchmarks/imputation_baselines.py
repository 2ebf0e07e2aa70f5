"""The imputation attacker of presets at a profile: what S the attacker guesses without the release, beside the raw-data
attackers (docs/attacks.md#the-imputation-baseline).

Runs the preset mechanism's raw-data reference points (what a sweep logs on its parent run as ``baseline/*``) on the
profile's first grid point and prints the imputation family, the baseline, the member that set it and the attackers
on raw data:

    PYTHONPATH=. .venv/bin/python benchmarks/imputation_baselines.py amnist cloak-mnist eco --profile quick
"""
from __future__ import annotations

import argparse
import time

from attacks.audits.imputation import simplest_best
from core.numbers import readable
from platform.plan.spec import resolve

PREFIX = "baseline/attack/imputation/"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("presets", nargs="+")
    p.add_argument("--profile", default="quick")
    args = p.parse_args()
    for name in args.presets:
        spec = resolve(name, args.profile, [])
        started = time.perf_counter()
        baselines = spec.preset.mechanism.raw_references(spec.grid_points()[0])
        print(f"{name} ({args.profile}): raw-data reference points in {time.perf_counter() - started:.0f} s")
        for metric in ("accuracy", "accuracy_within_hour"):
            members = {k.removeprefix(PREFIX).removesuffix(f"/{metric}"): v for k, v in baselines.items()
                       if k.startswith(PREFIX) and k.endswith(f"/{metric}") and k.count("/") == 4}
            if not members:
                continue
            low, high = baselines.get(f"{PREFIX}{metric}/ci_low"), baselines.get(f"{PREFIX}{metric}/ci_high")
            interval = f" [{readable(low)}, {readable(high)}]" if low is not None and high is not None else ""
            print(f"  imputation {metric}: {readable(baselines[PREFIX + metric])}{interval} from "
                  f"{simplest_best(members)}; family: " + ", ".join(f"{k} {readable(v)}" for k, v in members.items()))
        raw = {k: v for k, v in baselines.items() if k.startswith("baseline/attack/") and not k.startswith(PREFIX)
               and k.endswith(("/accuracy", "/accuracy_within_hour"))}
        print("  raw-data attackers: " + ", ".join(f"{k.removeprefix('baseline/attack/')} {readable(v)}"
                                                    for k, v in sorted(raw.items())))


if __name__ == "__main__":
    main()

"""``--seeds`` through the real CLI: bad counts are one line; ``--seeds 2`` doubles the trials and the front is of means."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO, SharedSweep, copy_sweep, run_sweep, store, sweep_env

AXES = ("utility/fresh_accuracy", "attack/max/accuracy")  # the amnist front's axes


@pytest.mark.parametrize("seeds", ["-3"])  # 0, 100000 and other counts: test_replicates, test_bad_inputs
def test_seeds_below_one_is_one_line_and_exit_2(workdir: Path, seeds: str) -> None:
    out = run_sweep(workdir, "amnist", "--profile", "smoke", "--seeds", seeds, timeout=120)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 2 and lines == [f"error: --seeds must be in [1, 1000] (got {seeds})"], out.stderr
    assert not (workdir / "runs").exists() and not (workdir / "mlflow.db").exists()


@pytest.mark.slow
def test_two_seeds_double_the_trials_and_the_front_is_of_means(smoke_sweep: SharedSweep, tmp_path: Path) -> None:
    # into a copy of the session's one-seed smoke sweep (what compare sets it beside); one quick attacker on every
    # checkpoint (the farm's whole set is tested elsewhere): the front needs a privacy axis; two of the smoke grid's
    # points (λ = 0, and α = 2 at λ = 10) over two seeds
    workdir = copy_sweep(smoke_sweep, tmp_path / "store")
    out = run_sweep(workdir, "amnist", "--profile", "smoke", "--set", "alpha=2", "--set", "lam=0,10", "--seeds", "2",
                    "--attackers", "thickness", timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "4 trials" in out.stdout and "per point over 2 seeds (mean ± sample std" in out.stdout
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-amnist")
    runs = client.search_runs([exp.experiment_id])
    name = re.search(r"^sweep (\S+): preset", out.stdout, flags=re.MULTILINE)
    assert name is not None, out.stdout[-3000:]
    (parent,) = [r for r in runs if r.data.tags.get("putlab.role") == "sweep" and r.info.run_name == name.group(1)]
    (one_seed,) = [r for r in runs if r.data.tags.get("putlab.role") == "sweep" and r is not parent]
    children = [r for r in runs if r.data.tags.get("putlab.role") == "trial"
                and r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]

    assert len(children) == 4 and all(c.info.status == "FINISHED" for c in children)
    for lam in ("0.0", "10.0"):
        assert sorted(c.data.params["seed"] for c in children if c.data.params["lam"] == lam) == ["0", "1"]
    # λ = 0 runs once per seed as α = 1 (every α trains the same game there)
    assert {c.info.run_name for c in children} == {f"alpha={alpha} lam={lam} adv_steps=1 seed={s}"
                                                   for alpha, lam in ((1, 0), (2, 10)) for s in (0, 1)}

    metrics = parent.data.metrics
    assert metrics["front/seeds"] == 2 and metrics["front/points"] == 2 and metrics["front/trials"] == 4
    per_seed = [metrics["front/hypervolume/seed_0"], metrics["front/hypervolume/seed_1"]]
    assert metrics["front/hypervolume"] == pytest.approx(sum(per_seed) / 2)
    assert metrics["front/hypervolume/std"] == pytest.approx(abs(per_seed[0] - per_seed[1]) / 2 ** 0.5)
    assert (metrics["front/hypervolume/min"], metrics["front/hypervolume/max"]) == pytest.approx(sorted(per_seed))
    assert {f"front/seed_std/{a}" for a in AXES} <= set(metrics)

    points = pd.read_csv(client.download_artifacts(parent.info.run_id, "front/points.csv", str(workdir)))
    front = pd.read_csv(client.download_artifacts(parent.info.run_id, "front/front.csv", str(workdir)))
    assert len(points) == 2 and list(points["n_seeds"]) == [2, 2] and 1 <= len(front) == metrics["front/size"] <= 2
    for _, row in front.iterrows():  # every front point is the mean of its two seeds' trials
        mine = [c for c in children if float(c.data.params["lam"]) == row["lam"]]
        for axis in AXES:
            values = [c.data.metrics[axis] for c in mine]
            assert row[axis] == pytest.approx(sum(values) / 2)
            assert row[f"{axis}/std"] == pytest.approx(abs(values[0] - values[1]) / 2 ** 0.5)
            assert (row[f"{axis}/band_low"], row[f"{axis}/band_high"]) == pytest.approx(
                (row[axis] - row[f"{axis}/std"], row[axis] + row[f"{axis}/std"]))

    # beside the one-seed sweep: the two-seed side's hypervolume is its seeds' mean ± std
    compared = subprocess.run([sys.executable, "-m", "platform.compare", parent.info.run_name, one_seed.info.run_name,
                               "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}"],
                              cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=120)
    assert compared.returncode == 0, compared.stderr
    assert "2 seeds), hypervolume (normalised)" in compared.stdout
    (comparison,) = client.search_runs([client.get_experiment_by_name("putlab-comparisons").experiment_id])
    assert comparison.data.metrics["compare/0/hypervolume_normalised/std"] == pytest.approx(
        metrics["front/hypervolume_normalised/std"])

"""The attack farm's error path through real Ray and MLflow: a checkpoint whose attack raises is tagged on its run and
reported (``python -m platform.attack`` says so in one line and exits 1), while the other checkpoints are attacked and
the sweep's summary is still published.

The sweep is laid out as Tune leaves one (per trial: ``params.json``, ``result.json`` and ``checkpoint_000000/``), with
two trials of amnist's smoke scale: one checkpoint written by a real (one-epoch) Releaser, one truncated on disk.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, sweep_env
from stores import RawStore

from platform.plan.spec import resolve
from platform.results import tracking
from platform.run.farm import failure_line
from trainables.releaser.mechanism import Releaser
from trainables.shared.tune_loop import epochs, write_checkpoint

SWEEP = "amnist-farm-errors"
FARM_ERROR = "putlab.farm_error"


def trial_dir(root: Path, name: str, config: dict) -> Path:
    """A Tune trial folder with one reported iteration and its (empty) checkpoint folder; returns the checkpoint's."""
    folder = root / name
    checkpoint = folder / "checkpoint_000000"
    checkpoint.mkdir(parents=True)
    (folder / "params.json").write_text(json.dumps(config))
    (folder / "result.json").write_text(json.dumps({"training_iteration": 1, "checkpoint_dir_name": checkpoint.name}) + "\n")
    return checkpoint


def make_sweep(workdir: Path) -> tuple[RawStore, str, dict[str, Path], dict[str, str]]:
    """The store and Tune folders of a finished two-trial sweep: (client, parent id, checkpoints, run ids)."""
    config = {**resolve("amnist", "smoke", ["n_train=128", "n_test=64"]).config, "alpha": 2.0, "adv_steps": 1}
    client = RawStore.open(f"sqlite:///{workdir / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    parent_id, _ = client.start_parent(exp_id, SWEEP, {"preset": "amnist", "profile": "smoke"})
    checkpoints, runs = {}, {}
    for name, lam in (("good", 0.0), ("corrupt", 10.0)):
        trial_config = {**config, "lam": lam}
        checkpoints[name] = trial_dir(workdir / "runs" / SWEEP, f"trial_{name}", trial_config)
        mechanism = Releaser.create(trial_config)
        list(epochs(mechanism))
        write_checkpoint(mechanism, checkpoints[name])
        run = client.create_run(exp_id, run_name=f"alpha=2 lam={lam:g} adv_steps=1",
                                tags={"mlflow.parentRunId": parent_id, tracking.TAG_PARENT: parent_id,
                                      tracking.TAG_TRIAL: name, tracking.TAG_ROLE: "trial",
                                      tracking.TAG_CHECKPOINT: str(checkpoints[name])})
        runs[name] = run.info.run_id
        client.log_params(runs[name], {"alpha": 2.0, "lam": lam, "adv_steps": 1})
        client.log_metrics(runs[name], {"utility/fresh_accuracy": 0.9 - lam / 100}, step=1)
        client.set_terminated(runs[name], "FINISHED")
    state = checkpoints["corrupt"] / "state.pt"
    state.write_bytes(state.read_bytes()[:100])  # truncated, as by a full disk
    client.set_terminated(parent_id, "FINISHED")
    return client, parent_id, checkpoints, runs


@pytest.mark.slow  # a real local Ray and a one-epoch checkpoint: about 35 s
def test_a_checkpoint_whose_attack_raises_is_tagged_reported_and_the_rest_goes_on(tmp_path: Path) -> None:
    client, parent_id, checkpoints, runs = make_sweep(tmp_path)
    out = subprocess.run([sys.executable, "-m", "platform.attack", SWEEP, "--attackers", "thickness",
                          "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"],
                         cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stdout[-3000:] + out.stderr[-3000:]
    assert out.stderr.strip().splitlines()[-1] == "error: 1 checkpoint attack(s) failed (tag putlab.farm_error on their runs)"
    assert f"attacked 2 checkpoint(s) of sweep run {parent_id}, 1 failed" in out.stdout

    # recorded: the tag names the failure itself (the loader's one line and the file), not Ray's wrapper
    cause = f"CheckpointError: cannot restore checkpoint {checkpoints['corrupt'] / 'state.pt'}: "
    tag = client.get_run(runs["corrupt"]).data.tags[FARM_ERROR]
    assert tag.startswith(cause) and "\n" not in tag and "RayTaskError" not in tag and "pid=" not in tag, tag
    assert f"attack farm failed on run {runs['corrupt']} step 1 (thickness): {tag}" in out.stdout.splitlines()
    assert "attack/thickness/accuracy" not in client.get_run(runs["corrupt"]).data.metrics

    # the other checkpoint was attacked and is untagged; the summary was published with it on the front
    good = client.get_run(runs["good"]).data
    assert FARM_ERROR not in good.tags and good.metrics["attack/max/accuracy"] == good.metrics["attack/thickness/accuracy"]
    parent = client.get_run(parent_id).data.metrics
    assert parent["front/trials"] == 2 and parent["front/size"] == 1  # the failed trial lacks the privacy axis
    assert client.get_run(runs["good"]).data.tags[tracking.TAG_FRONT] == "true"


def test_a_failure_line_is_the_exception_itself() -> None:
    assert failure_line(ValueError("bad value\nsecond line")) == "ValueError: bad value"
    assert failure_line(RuntimeError("x" * 1000)) == "RuntimeError: " + "x" * 486

"""Commands that find nothing to do say so in one line, exit non-zero and leave the store byte for byte as it was:
``python -m platform.attack`` on a sweep with no finished trial or whose checkpoints are gone, and a bare ``--resume``
whose newest sweep has finished.

The sweeps are laid out as a sweep leaves them (parent and trial runs in a real sqlite MLflow store; per trial a Tune
folder with ``result.json`` naming its checkpoint folders), without training: every refusal comes before anything is
loaded, run or stored.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
import ray
from stores import RawStore

from platform import sweep
from platform.attack import SHOWN_MISSING
from platform.attack import main as attack_cli
from platform.results import tracking
from platform.run import resume_seal
from platform.run.tuner import TUNER_STATE

ATTACK_ARGS = {"plain": [], "learning curve": ["--learning-curve"], "one attacker": ["--attackers", "thickness"]}


def make_sweep(workdir: Path, name: str, statuses: list[str], parent_status: str = "FINISHED") -> list[Path]:
    """A sweep ``name`` of amnist with a trial run per entry of ``statuses``, each with a Tune folder holding one
    checkpoint (empty: nothing reads it), and its Tune state; returns the checkpoint folders."""
    client = RawStore.open(f"sqlite:///{workdir / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    parent_id, _ = client.start_parent(exp_id, name, {"preset": "amnist", "profile": "smoke"})
    (workdir / "runs" / name).mkdir(parents=True)
    (workdir / "runs" / name / TUNER_STATE).write_bytes(b"never unpickled by a refusal")
    checkpoints = []
    for i, status in enumerate(statuses):
        checkpoint = workdir / "runs" / name / f"trial_{i}" / "checkpoint_000000"
        checkpoint.mkdir(parents=True)
        (checkpoint.parent / "params.json").write_text(json.dumps({"lam": float(i)}))
        (checkpoint.parent / "result.json").write_text(
            json.dumps({"training_iteration": 1, "checkpoint_dir_name": checkpoint.name}) + "\n")
        run = client.create_run(exp_id, run_name=f"lam={i}", tags={
            tracking.TAG_PARENT: parent_id, tracking.TAG_ROLE: "trial", tracking.TAG_TRIAL: f"t{i}",
            tracking.TAG_CHECKPOINT: str(checkpoint)})
        client.set_terminated(run.info.run_id, status)
        checkpoints.append(checkpoint)
    client.set_terminated(parent_id, parent_status)
    return checkpoints


def store_digest(workdir: Path) -> dict[str, str]:
    """Every file under ``workdir`` (the sqlite store, the Tune folders), hashed."""
    return {str(p.relative_to(workdir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(workdir.rglob("*")) if p.is_file()}


def refused(code: int, capsys: pytest.CaptureFixture[str], *expected: str) -> str:
    """The command exited 2 with one line on stderr holding each of ``expected``; returns that line."""
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    for text in expected:
        assert text in err, err
    return err


def test_attack_refuses_a_sweep_with_no_finished_trial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_sweep(tmp_path, "amnist-smoke-1", ["KILLED", "KILLED", "FAILED"], parent_status="KILLED")
    before, _ = store_digest(tmp_path), capsys.readouterr()
    for args in ATTACK_ARGS.values():
        code = attack_cli(["amnist-smoke-1", *args, "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"])
        refused(code, capsys, "sweep amnist-smoke-1 has no finished trial to attack (its trial runs: 1 FAILED, 2 KILLED)",
                "platform.sweep amnist --resume amnist-smoke-1")
        assert store_digest(tmp_path) == before and not ray.is_initialized(), args


def test_attack_refuses_a_sweep_whose_checkpoints_were_deleted_naming_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checkpoints = make_sweep(tmp_path, "amnist-smoke-1", ["FINISHED"] * (SHOWN_MISSING + 2))
    for checkpoint in checkpoints[1:]:
        shutil.rmtree(checkpoint)
    before, _ = store_digest(tmp_path), capsys.readouterr()
    for args in ATTACK_ARGS.values():
        code = attack_cli(["amnist-smoke-1", *args, "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"])
        line = refused(code, capsys,
                       f"sweep amnist-smoke-1: {SHOWN_MISSING + 1} recorded checkpoint(s) are no longer stored",
                       *map(str, checkpoints[1:1 + SHOWN_MISSING]), " and 1 more")
        assert str(checkpoints[0]) not in line and str(checkpoints[-1]) not in line  # one still stored; one counted
        assert store_digest(tmp_path) == before and not ray.is_initialized(), args

    # a trial folder gone with its results: the run's last checkpoint is what is named
    shutil.rmtree(checkpoints[0].parent)
    code = attack_cli(["amnist-smoke-1", "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"])
    refused(code, capsys, f"{SHOWN_MISSING + 2} recorded checkpoint(s)", str(checkpoints[0]))


def test_a_bare_resume_of_a_finished_newest_sweep_says_so_and_stores_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_sweep(tmp_path, "amnist-smoke-20260101-000000", ["KILLED"], parent_status="KILLED")
    make_sweep(tmp_path, "amnist-smoke-20260102-000000", ["FINISHED"])
    os.utime(tmp_path / "runs" / "amnist-smoke-20260101-000000" / TUNER_STATE, (1, 1))  # the finished one is newest
    stores = ["--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}", "--storage", str(tmp_path / "runs")]
    before, _ = store_digest(tmp_path), capsys.readouterr()
    refused(sweep.main(["amnist", "--resume", *stores]), capsys,
            "the newest sweep of this preset, amnist-smoke-20260102-000000, has finished",
            "start a new one: ", "platform.sweep amnist;",
            "or resume an unfinished one by name: --resume amnist-smoke-20260101-000000")
    assert store_digest(tmp_path) == before

    # control: when the newest sweep is unfinished, a bare --resume goes on to it (here, to check its seal)
    resume_seal.load_or_create_key()
    os.utime(tmp_path / "runs" / "amnist-smoke-20260101-000000" / TUNER_STATE)
    refused(sweep.main(["amnist", "--resume", *stores]), capsys,
            "refusing to resume amnist-smoke-20260101-000000: its Tune state has no seal")
    assert store_digest(tmp_path) == before

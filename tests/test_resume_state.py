"""``--resume`` loads only sealed state (platform.run.resume_seal) and keeps the sweep's own options
(platform.plan.resume_options); a second Ctrl+C stops a sweep waiting for its attack farm at once."""
from __future__ import annotations

import io
import json
import pickle
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pyarrow.fs as pafs
import pytest
from conftest import REPO, run_sweep, store, sweep_env

from platform import sweep
from platform.errors import UsageError
from platform.run import resume_seal
from platform.run.resume_seal import SEAL, StateSealer, verify

SECOND_SIGINT_BOUND_S = 30  # a second Ctrl+C ends the driver within this many seconds


class Payload:
    """A pickle that, when loaded, creates ``marker`` (harmless proof that loading it ran code)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return open, (str(self.marker), "w")


def sealed_folder(tmp_path: Path) -> tuple[Path, Path, StateSealer]:
    """A Tune folder with a sealed tuner.pkl and one experiment state saved in the driver's staging folder and
    uploaded, as Tune does; returns (folder, staging, sealer)."""
    folder, staging = tmp_path / "runs" / "gmm-smoke-1", tmp_path / "staging"
    folder.mkdir(parents=True)
    staging.mkdir()
    (folder / "tuner.pkl").write_bytes(pickle.dumps({"tuner": 1}))
    sealer = StateSealer()
    sealer.seal_tuner(str(folder))
    storage = SimpleNamespace(storage_filesystem=pafs.LocalFileSystem(), experiment_fs_path=str(folder),
                              experiment_driver_staging_path=str(staging))
    sealer.on_step_begin(0, [SimpleNamespace(storage=storage)])
    (staging / "experiment_state-1.json").write_text('{"trial_data": []}')
    assert sealer.get_state() is None  # Tune's hook right after a save: seals it, keeps no state of its own
    shutil.copy(staging / "experiment_state-1.json", folder)  # Tune's upload
    return folder, staging, sealer


def test_only_the_sealed_state_passes(tmp_path: Path) -> None:
    folder, staging, sealer = sealed_folder(tmp_path)
    verify(str(folder))
    (staging / "experiment_state-1.json").write_text('{"trial_data": [1]}')  # a later save, before its upload ends
    sealer.get_state()
    verify(str(folder))  # the storage still holds the previous version: sealed too
    shutil.copy(staging / "experiment_state-1.json", folder)
    verify(str(folder))

    (folder / "experiment_state-1.json").write_text('{"planted": 1}')
    with pytest.raises(UsageError, match=r"experiment_state-1\.json is not the state the sweep wrote"):
        verify(str(folder))
    shutil.copy(staging / "experiment_state-1.json", folder)
    (folder / "searcher-state-2.pkl").write_bytes(b"planted")
    with pytest.raises(UsageError, match=r"searcher-state-2\.pkl is not the state the sweep wrote"):
        verify(str(folder))
    (folder / "searcher-state-2.pkl").unlink()
    verify(str(folder))

    seal = json.loads((folder / SEAL).read_text())
    seal["files"]["tuner.pkl"].append(resume_seal.digest((folder / "tuner.pkl").read_bytes() + b"planted"))
    (folder / SEAL).write_text(json.dumps(seal))  # a digest added without the key
    with pytest.raises(UsageError, match="does not match the resume key"):
        verify(str(folder))
    (folder / SEAL).unlink()
    with pytest.raises(UsageError, match="has no seal"):
        verify(str(folder))


def test_the_key_lives_outside_the_storage_and_only_its_owner_reads_it(tmp_path: Path, resume_key: Path) -> None:
    folder, _, sealer = sealed_folder(tmp_path)
    assert oct(resume_key.stat().st_mode & 0o777) == "0o600"
    assert resume_key.read_bytes().strip() not in pickle.dumps(sealer)  # tuner.pkl holds a bare sealer
    assert pickle.loads(pickle.dumps(sealer))._files == {}
    resume_key.chmod(0o644)
    with pytest.raises(UsageError, match="readable or writable by others"):
        verify(str(folder))
    resume_key.chmod(0o600)
    key = resume_key.read_bytes()
    try:
        resume_key.write_text("another key, long enough to be one: 0123456789")
        with pytest.raises(UsageError, match="does not match the resume key"):
            verify(str(folder))
        resume_key.unlink()
        with pytest.raises(UsageError, match="no resume key at"):
            verify(str(folder))
    finally:
        resume_key.write_bytes(key)
        resume_key.chmod(0o600)
    verify(str(folder))
    assert resume_seal.key_path() == resume_key


@pytest.mark.slow  # three real sweeps (33 s); the seal and the option checks have unit tests in the default run
def test_a_planted_tuner_pkl_is_refused_unread_and_resume_keeps_the_recorded_options(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run_sweep(workdir, "gmm", "--profile", "smoke")
    assert out.returncode == 0, out.stderr[-3000:]
    (folder,) = (workdir / "runs").iterdir()
    client = store(workdir)
    parent = client.search_runs([client.get_experiment_by_name("putlab-gmm").experiment_id],
                                filter_string="tags.`putlab.role` = 'sweep'")[0]

    # a same-user, 0644 tuner.pkl whose loading would create the marker file
    marker = workdir / "payload-ran"
    original = (folder / "tuner.pkl").read_bytes()
    (folder / "tuner.pkl").write_bytes(pickle.dumps(Payload(marker)))
    (folder / "tuner.pkl").chmod(0o644)
    refused = run_sweep(workdir, "gmm", "--resume", folder.name)
    assert refused.returncode == 2, refused.stderr[-3000:]
    assert refused.stderr.strip() == f"error: refusing to resume {folder.name}: tuner.pkl is not the state the sweep " \
                                     f"wrote (it changed after it was sealed; resuming would unpickle it)"
    assert not marker.exists()
    assert client.get_run(parent.info.run_id).info.status == "FINISHED"  # nothing recorded
    (folder / "tuner.pkl").write_bytes(original)

    stores = ["--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--storage", str(workdir / "runs")]
    for contradicting, recorded in ((["--profile", "quick"], "profile smoke"), (["--set", "alpha=0.5"], "alpha = [0.1, 0.9]"),
                                    (["--seeds", "2"], "seed = 0"), (["--attackers", "deep"], "attackers none"),
                                    (["--learning-curve"], "learning curves off")):
        assert sweep.main(["gmm", "--resume", folder.name, *stores, *contradicting]) == 2
        error = capsys.readouterr().err
        assert error.startswith("error: ") and len(error.strip().splitlines()) == 1, error
        assert "contradicts the sweep's recorded" in error and recorded in error, error

    resumed = run_sweep(workdir, "gmm", "--resume", folder.name, "--set", "alpha=0.9,0.1")  # the same grid, given again
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    # gmm runs no comparison grid, so the line names none (amnist's says "noise, stroke-redraw, digit-prototype baselines on")
    assert ("resuming with the sweep's recorded options: profile smoke, grid search, attackers none, learning curves off, "
            "1 seed") in resumed.stdout
    assert client.get_run(parent.info.run_id).info.status == "FINISHED"
    assert not marker.exists()


@pytest.mark.slow
def test_resume_keeps_attackers_none_and_counts_the_finished_noise_trials(workdir: Path) -> None:
    # one point of the sweep's own (λ = 0), then the comparison grids
    cmd = [sys.executable, "-m", "platform.sweep", "amnist", "--profile", "smoke", "--set", "lam=0", "--attackers", "none",
           "--max-concurrent", "1", "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--storage", str(workdir / "runs")]
    proc = subprocess.Popen(cmd, cwd=REPO, env=sweep_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = io.StringIO()
    for line in proc.stdout:
        log.write(line)
        if line.startswith("[sigma=") and "finished in" in line:  # one noise trial done, the other not yet
            proc.send_signal(signal.SIGINT)
            break
    log.write(proc.stdout.read())
    assert proc.wait(timeout=120) == 130, log.getvalue()[-3000:]

    out = run_sweep(workdir, "amnist", "--resume", timeout=600, baseline=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "attackers none, noise, stroke-redraw, digit-prototype baselines on" in out.stdout
    assert "strongest attacker" not in out.stdout and "attack farm" not in out.stdout  # the farm stayed off
    assert "noise baseline: 2 noise trials finished" in out.stdout, out.stdout[-3000:]
    client = store(workdir)
    runs = client.search_runs([client.get_experiment_by_name("putlab-amnist").experiment_id])
    assert {r.info.status for r in runs} == {"FINISHED"}
    baseline = [r.data.tags.get("putlab.baseline") for r in runs if r.data.tags.get("putlab.role") == "baseline"]
    assert sorted(baseline) == ["digit-prototype", "noise", "noise", "stroke-redraw"]
    assert not [r for r in runs if "attack/max/accuracy" in r.data.metrics]


@pytest.mark.slow  # Ctrl+C twice and a resume (the one end-to-end test of a resume after Ctrl+C with the whole farm)
def test_a_second_ctrl_c_stops_the_wait_for_the_farm_at_once_and_the_sweep_resumes(workdir: Path) -> None:
    # the preset's farm trains reference models for a while: the first checkpoint's attacks are still pending when
    # the first Ctrl+C has stopped the trials
    args = ["amnist", "--profile", "smoke", "--set", "alpha=2", "--set", "lam=0,10", "--max-concurrent", "1",
            "--no-comparison-grids",
            "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--storage", str(workdir / "runs")]
    proc = subprocess.Popen([sys.executable, "-m", "platform.sweep", *args], cwd=REPO, env=sweep_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log, second = io.StringIO(), None
    for line in proc.stdout:
        log.write(line)
        if "finished in" in line and "SIGINT" not in log.getvalue():  # its checkpoint went to the farm
            proc.send_signal(signal.SIGINT)
        if line.startswith("attack farm: waiting for 1 checkpoint attack(s)"):
            second = time.monotonic()
            proc.send_signal(signal.SIGINT)
            break
    assert second is not None, log.getvalue()[-3000:]
    code = proc.wait(timeout=SECOND_SIGINT_BOUND_S)
    took = time.monotonic() - second
    log.write(proc.stdout.read())
    assert code == 130 and took < SECOND_SIGINT_BOUND_S, (took, log.getvalue()[-3000:])
    assert "continue with:" in log.getvalue()
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-amnist")
    (parent,) = client.search_runs([exp.experiment_id], filter_string="tags.`putlab.role` = 'sweep'")
    assert parent.info.status == "KILLED"
    # the raw-data reference points: kept if they were done by then (and not computed again), else run again
    kept = {k: v for k, v in parent.data.metrics.items() if k.startswith("baseline/")}

    # the other trial and the attacks the second Ctrl+C cut, with the options the sweep recorded
    out = run_sweep(workdir, "amnist", "--resume", timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    parent = client.get_run(parent.info.run_id)
    assert parent.info.status == "FINISHED"
    assert "baseline/utility/accuracy" in parent.data.metrics
    assert {k: parent.data.metrics[k] for k in kept} == kept
    runs = client.search_runs([exp.experiment_id], filter_string="tags.`putlab.role` = 'trial'")
    assert len(runs) == 2 and {r.info.status for r in runs} == {"FINISHED"}  # none lost, none duplicated
    assert sorted(r.data.params["lam"] for r in runs) == ["0.0", "10.0"]
    for run in runs:  # each epoch logged once, each checkpoint attacked once (the cut attacks made up)
        assert [m.step for m in client.get_metric_history(run.info.run_id, "epoch")] == [1]
        assert len(client.get_metric_history(run.info.run_id, "attack/max/accuracy")) == 1

"""Ctrl+C (or SIGTERM) on a real sweep stops it within seconds at any point, is recorded as an interruption (exit 130,
KILLED runs, the resume command), and resumes: the farm's cancelled attacks are caught up on."""
from __future__ import annotations

import hashlib
import io
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pyarrow.fs as pafs
import pytest
import ray
from conftest import REPO, run_sweep, store, sweep_env
from mlflow.entities import Run
from sklearn.model_selection import ParameterGrid
from stores import RawStore

from platform.errors import UsageError
from platform.results import drivers, tracking
from platform.results.baseline_hull import TAG_HULL
from platform.run.farm import DRAIN_POLL_S, FarmPlan, FarmScheduler
from platform.run.interrupts import SweepEnding, stop_requested
from platform.run.resume_seal import StateSealer, verify
from search_spaces import presets


@pytest.mark.slow  # SIGTERM (``kill PID``); Ctrl+C's stop and resume: the amnist tests below and test_resume_state
def test_a_sigterm_marks_the_sweep_killed_and_resume_finishes_it(workdir: Path) -> None:
    args = ["gmm", "--profile", "smoke", "--set", "report_every=10", "--set", "steps=400", "-v",
            "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--storage", str(workdir / "runs")]
    proc = subprocess.Popen([sys.executable, "-m", "platform.sweep", *args], cwd=REPO, env=sweep_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    seen = []
    for line in proc.stdout:  # wait until a trial has reported its first result
        seen.append(line)
        if " step " in line or time.time() > deadline:
            break
    assert " step " in seen[-1], "".join(seen)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 130, err[-3000:]

    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-gmm")
    runs = client.search_runs([exp.experiment_id])
    (parent,) = [r for r in runs if r.data.tags.get("putlab.role") == "sweep"]
    children = [r for r in runs if r.data.tags.get("putlab.role") == "trial"]
    assert parent.info.status == "KILLED"
    assert children and {c.info.status for c in children} <= {"KILLED", "FINISHED"}
    assert "KILLED" in {c.info.status for c in children}  # the interrupted trial is not passed off as finished
    hint = [line for line in err.splitlines() if "continue with:" in line]
    assert hint, err[-3000:]
    command = shlex.split(hint[-1].split("continue with:", 1)[1])
    assert Path(command[0]).name.startswith("python") and (REPO / command[0]).exists()  # pasteable: the venv's python
    assert command[1:6] == ["-m", "platform.sweep", "gmm", "--resume", parent.info.run_name]
    assert parent.data.tags[drivers.TAG_DRIVER].split()[1] == str(proc.pid)  # the run names its driver

    # a driver killed outright (SIGKILL) leaves its run RUNNING: the next command on this host ends it, saying so
    client.update_run(parent.info.run_id, "RUNNING")
    resumed = subprocess.run(command, cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert (f"sweep {parent.info.run_name} was left running by a driver that is gone (pid {proc.pid}): marked KILLED"
            in resumed.stdout), resumed.stdout[-3000:]
    runs = client.search_runs([exp.experiment_id])
    assert {r.info.status for r in runs} == {"FINISHED"}
    assert len([r for r in runs if r.data.tags.get("putlab.role") == "trial"]) == 2  # no duplicate, none lost
    # its minutes: the interrupted command's, then the resume's added to them
    interrupted, total = (m.value for m in client.get_metric_history(parent.info.run_id, tracking.ACTIVE_MINUTES))
    assert 0 < interrupted < total


STOP_BOUND_S = 5.0  # Ctrl+C stops a sweep within this many seconds, at any point (a second one at once)
# two of the farm's attackers, a learned one and a membership one: what a stop cancels and a resume catches up on (the
# whole set's attacks: test_farm)
FARM = ("--attackers", "thickness,yeom")


def start_sweep(workdir: Path, *args: str) -> subprocess.Popen:
    """An amnist smoke sweep on its own store, in a process group of its own as a terminal's foreground job (a
    Ctrl+C there signals the whole group: the driver and the Ray processes it started)."""
    cmd = [sys.executable, "-m", "platform.sweep", "amnist", "--profile", "smoke", *args,
           "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--storage", str(workdir / "runs")]
    return subprocess.Popen(cmd, cwd=REPO, env=sweep_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def interrupt_at(proc: subprocess.Popen, phase: str, signals: tuple[signal.Signals, ...] = (signal.SIGINT,),
                 deadline_s: float = 900) -> tuple[float, str]:
    """As soon as a line of the sweep's output matches ``phase``, send each of ``signals`` in turn, 0.3 s apart, as a
    user does (SIGINT to its process group, as a terminal's Ctrl+C, which Ray's own processes block; SIGTERM to the
    driver, as ``kill PID``), and read it to the end; returns (seconds from the first signal to its exit, output)."""
    assert proc.stdout is not None
    log, sent, start = io.StringIO(), None, time.monotonic()
    for line in proc.stdout:
        log.write(line)
        if re.search(phase, line):
            sent = time.monotonic()
            for i, sig in enumerate(signals):
                time.sleep(0.3 * (i > 0))
                (os.killpg if sig == signal.SIGINT else os.kill)(proc.pid, sig)
            break
        assert time.monotonic() - start < deadline_s, log.getvalue()[-3000:]
    assert sent is not None, f"never reached {phase!r}: {log.getvalue()[-3000:]}"
    log.write(proc.stdout.read())
    proc.wait(timeout=120)
    return time.monotonic() - sent, log.getvalue()


def sweep_runs(workdir: Path) -> tuple[Run, list[Run]]:
    """The amnist sweep's parent run and its children (trials and baseline trials)."""
    client = store(workdir)
    runs = client.search_runs([client.get_experiment_by_name("putlab-amnist").experiment_id])
    (parent,) = [r for r in runs if r.data.tags.get("putlab.role") == "sweep"]
    return parent, [r for r in runs if r.data.tags.get("putlab.role") in ("trial", "baseline")]


def store_digest(workdir: Path) -> dict[str, str]:
    """Every file of the store and the Tune storage (the sqlite file, run artifacts, Tune folders), hashed."""
    return {str(p.relative_to(workdir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(workdir.rglob("*")) if p.is_file()}


# A second Ctrl+C, and the resume after it: test_resume_state's test_a_second_ctrl_c_stops_the_wait_for_the_farm_...
@pytest.mark.slow  # a smoke sweep to its second trial: about 2 min on 2 busy cores
@pytest.mark.parametrize("signals", [(signal.SIGINT,), (signal.SIGTERM,)], ids=["SIGINT", "SIGTERM"])
def test_a_stop_during_the_game_ends_the_sweep_within_seconds_and_cancels_the_farm(
        workdir: Path, signals: tuple[signal.Signals, ...]) -> None:
    # the first trial's checkpoint is with the farm (its attackers train for longer than the next trial starts)
    proc = start_sweep(workdir, "--no-comparison-grids", *FARM)
    took, log = interrupt_at(proc, r"^trials 1/3 done, 1 running", signals)
    assert proc.returncode == 130 and took <= STOP_BOUND_S, (took, log[-3000:])
    assert "continue with:" in log and "Traceback" not in log, log[-3000:]
    assert "Tuner.restore" not in log and "Stop signal received" not in log  # Tune's own notices stay quiet
    parent, children = sweep_runs(workdir)
    assert parent.info.status == "KILLED"
    assert {c.info.status for c in children} <= {"FINISHED", "KILLED"} and "KILLED" in {c.info.status for c in children}
    assert re.search(r"attack farm: cancelled \d+ checkpoint attack", log), log[-3000:]


@pytest.mark.slow  # a smoke sweep stopped three times and resumed, then one more: about 6 min on 2 busy cores
def test_a_stop_at_each_later_phase_ends_the_sweep_within_seconds_and_resume_finishes_it(workdir: Path) -> None:
    """One point of the sweep's own (λ = 0) and its three comparison grids (noise, the stroke redraw, the digit
    prototype), stopped during the farm's wait, a grid and the report, then resumed: every grid's runs, figures,
    tables and report section are there at the end, as in a sweep never stopped; and the same sweep run again reuses
    every comparison trial of the resumed one (platform.run.grid_reuse, end to end)."""
    phases = {  # phase: the output line that says the sweep is in it
        "farm wait": r"^attack farm: waiting for \d+ checkpoint attack",  # the game is over, its attacks in flight
        "comparison grid": r"^trials 0/2 done, 1 running",  # the noise preset's two trials after the sweep's own
        "report": r"publishing its summary, figures and report",
    }
    printed = []
    for i, (phase, line) in enumerate(phases.items()):
        proc = start_sweep(workdir, *(["--resume"] if i else (*FARM, "--set", "lam=0")))
        took, log = interrupt_at(proc, line)
        printed.append(log)
        assert proc.returncode == 130 and took <= STOP_BOUND_S, (phase, took, log[-3000:])
        assert "continue with:" in log and "Traceback" not in log, (phase, log[-3000:])
        parent, _ = sweep_runs(workdir)
        assert parent.info.status == "KILLED", phase

    resumed = subprocess.run(shlex.split(log.split("continue with:", 1)[1].splitlines()[0]), cwd=REPO,
                             env=sweep_env(), capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    parent, children = sweep_runs(workdir)
    assert parent.info.status == "FINISHED"
    baselines = sum(len(ParameterGrid(presets()[name].profiles["smoke"].grid)) for name in presets()["amnist"].comparison_grids)
    assert baselines == 4  # noise's two, the stroke redraw's one and the digit prototype's one
    assert sorted(c.data.tags["putlab.role"] for c in children) == ["baseline"] * baselines + ["trial"]
    assert all(c.info.status == "FINISHED" and "attack/max/accuracy" in c.data.metrics for c in children)
    report = Path(next(x for x in resumed.stdout.splitlines() if x.startswith("report: ")).removeprefix("report: "))
    assert "status FINISHED" in report.read_text()
    assert_the_grids_ran_beside_the_front(workdir, "".join(printed) + resumed.stdout, report.read_text())

    # the newest sweep has finished: a bare --resume refuses, naming it, and stores nothing
    before = store_digest(workdir)
    again = subprocess.run([sys.executable, "-m", "platform.sweep", "amnist", "--resume",
                            "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--storage", str(workdir / "runs")],
                           cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and again.stderr.count("\n") == 1, again.stderr
    assert f"the newest sweep of this preset, {parent.info.run_name}, has finished" in again.stderr
    assert store_digest(workdir) == before

    printed.append(resumed.stdout)
    assert_a_second_sweep_reuses_every_comparison_trial(workdir, parent, "".join(printed))


GRIDS = {"noise": 2, "stroke-redraw": 1, "digit-prototype": 1}  # the smoke profiles' comparison trials


def assert_a_second_sweep_reuses_every_comparison_trial(workdir: Path, first: Run, printed: str) -> None:
    """The sweep ``first`` (its commands printed ``printed``) ran its own trial and every comparison trial; the same
    sweep again runs none of them (no Tune run at all) and copies each, with its metrics, figures, tables and report
    line (another seed or farm reuses nothing: tests/test_grid_reuse.py)."""
    for name, count in GRIDS.items():
        assert f"{name} comparison grid: 0 of {count} trial{'s' if count > 1 else ''} reused; {count} to run" in printed
    assert "amnist own grid: 0 of 1 trial reused; 1 to run" in printed
    client = store(workdir)
    exp_id = first.info.experiment_id
    sources = {r.info.run_id: r for r in client.baseline_runs(exp_id, first.info.run_id)}
    second = run_sweep(workdir, "amnist", "--profile", "smoke", *FARM, "--set", "lam=0", timeout=600, baseline=True)
    assert second.returncode == 0, second.stderr[-3000:]
    name_2 = re.search(r"^sweep (\S+): preset amnist", second.stdout, re.M).group(1)  # type: ignore[union-attr]
    parent_2 = client.find_parent(exp_id, name_2)
    assert parent_2 is not None
    copies = client.baseline_runs(exp_id, parent_2)
    for name, count in GRIDS.items():
        assert (f"{name} comparison grid: {count} of {count} trial{'s' if count > 1 else ''} reused from sweep "
                f"{first.info.run_name}; 0 to run") in second.stdout
        assert f"{name} baseline (utility/fresh_accuracy" in second.stdout  # still compared with the front
        assert not (workdir / "runs" / f"baseline-{name}-{name_2}").exists()  # no Tune run for it
        mine = [c for c in copies if c.data.tags[tracking.TAG_BASELINE] == name]
        assert len(mine) == count and all(c.data.tags[tracking.TAG_REUSED_FROM] in sources for c in mine)
        assert all(c.data.metrics == sources[c.data.tags[tracking.TAG_REUSED_FROM]].data.metrics for c in mine)
    assert len({c.data.tags[tracking.TAG_REUSED_FROM] for c in copies}) == len(sources) == sum(GRIDS.values())
    [trial] = client.child_runs(exp_id, first.info.run_id)
    [own] = client.child_runs(exp_id, parent_2)
    assert f"amnist own grid: 1 of 1 trial reused from sweep {first.info.run_name}; 0 to run" in second.stdout
    assert own.data.tags[tracking.TAG_REUSED_FROM] == trial.info.run_id and own.data.metrics == trial.data.metrics
    assert not (workdir / "runs" / name_2).exists()  # no Tune run of its own
    assert "trials 0/" not in second.stdout and "front:" in second.stdout
    report = Path(next(x for x in second.stdout.splitlines() if x.startswith("report: ")).removeprefix("report: "))
    html = report.read_text()
    assert f"2 of 2 noise trials reused from sweep {first.info.run_name}" in html
    assert f"reused from sweep {first.info.run_name}" in html
    first_report = Path([x for x in printed.splitlines() if x.startswith("report: ")][-1].removeprefix("report: "))
    assert html.count(";base64,") == first_report.read_text().count(";base64,")  # its figures, from the first sweep's runs


def assert_the_grids_ran_beside_the_front(workdir: Path, printed: str, html: str) -> None:
    """Each comparison grid ran (``printed``: the commands' output) and is logged, tabled, drawn and reported."""
    for name in ("noise", "stroke-redraw", "digit-prototype"):
        assert f"{name} comparison grid: " in printed and f"{name} baseline (utility/fresh_accuracy" in printed, name
    parent, children = sweep_runs(workdir)
    baseline = [r for r in children if r.data.tags["putlab.role"] == "baseline"]
    by_name = {n: [r for r in baseline if r.data.tags[tracking.TAG_BASELINE] == n]
               for n in ("noise", "stroke-redraw", "digit-prototype")}
    assert {n: len(r) for n, r in by_name.items()} == GRIDS
    for name, found in by_name.items():
        for run in found:
            assert run.data.params["mechanism"] == name
            assert {"utility/fresh_accuracy", "attack/max/accuracy", "utility/psnr", "utility/psnr_of_mse",
                    "attack/deep/accuracy", "attack/thickness/accuracy"} <= set(run.data.metrics), name
        assert parent.data.metrics[f"front/{name}_trials"] == len(found)
    assert "front/hypervolume_2d" in parent.data.metrics
    # the front against every per-record mix of the four comparison points: a verdict per front trial, everywhere
    assert ("the baselines' hull, every per-record mix of 5 learnless releases (noise sigma=0, noise sigma=1, "
            "stroke-redraw radius=1 blur=0.5 threshold=0.5, digit-prototype mix=0, a constant release (the mean image))"
            in printed)
    assert "front/hull_compared" in parent.data.metrics  # a smoke release may be too collapsed to compare
    assert all(r.data.tags[TAG_HULL].startswith(("inside", "beyond", "less useful than every baseline point"))
               for r in children if r.data.tags.get("putlab.pareto_front") == "true")
    assert "The baselines' hull" in html
    artifacts = {a.path for a in store(workdir).list_artifacts(parent.info.run_id, "front")}
    assert {"front/front.png", "front/front_2d.png", "front/noise_baseline.csv", "front/stroke-redraw_baseline.csv",
            "front/digit-prototype_baseline.csv"} <= artifacts
    assert "Baselines beside the front" in html and "stroke redraw (<code>stroke-redraw</code>)" in html
    assert "digit prototype (<code>digit-prototype</code>)" in html


def test_a_restored_run_with_nothing_left_to_run_seals_the_state_it_saves_at_its_end(tmp_path: Path) -> None:
    folder, staging = tmp_path / "runs" / "amnist-smoke-1", tmp_path / "staging"
    folder.mkdir(parents=True)
    staging.mkdir()
    (folder / "tuner.pkl").write_bytes(b"the tuner")
    StateSealer().seal_tuner(str(folder))
    verify(str(folder))
    storage = SimpleNamespace(storage_filesystem=pafs.LocalFileSystem(), experiment_fs_path=str(folder),
                              experiment_driver_staging_path=str(staging))
    restored = StateSealer()  # as Tuner.restore unpickles it
    # a resumed sweep stopped after all its trials had finished: Tune saves its state and ends before any step
    (staging / "experiment_state-2.json").write_text('{"trial_data": [["finished"]]}')
    assert restored.get_state() is None
    shutil.copy(staging / "experiment_state-2.json", folder)  # Tune's upload
    with pytest.raises(UsageError, match=r"experiment_state-2\.json is not the state the sweep wrote"):
        verify(str(folder))  # unsealed so far: the next --resume would refuse it
    restored.on_experiment_end([SimpleNamespace(storage=storage)])
    verify(str(folder))


def test_a_sweeps_minutes_sum_its_commands_and_leave_out_the_pause_between_them(workdir: Path) -> None:
    client = store(workdir)
    exp_id = client.ensure_experiment("putlab-gmm")
    parent_id, _ = client.start_parent(exp_id, "gmm-smoke-1", {"preset": "gmm"})
    first = SweepEnding()
    first.attach(client, exp_id, parent_id, [], 0.0)
    time.sleep(0.3)
    first.close("KILLED")  # interrupted after 0.3 s of work
    worked = tracking.active_minutes(client.get_run(parent_id))
    assert 0.3 / 60 <= worked < 1.0 / 60
    time.sleep(1.5)  # the pause before --resume
    again, reopened = client.start_parent(exp_id, "gmm-smoke-1", {"preset": "gmm"})
    assert (again, reopened) == (parent_id, True)
    second = SweepEnding()
    second.attach(client, exp_id, parent_id, [], tracking.active_minutes(client.get_run(parent_id)))
    time.sleep(0.3)
    second.close("FINISHED")
    run = client.get_run(parent_id)
    total = tracking.active_minutes(run)
    assert run.info.status == "FINISHED" and worked + 0.3 / 60 <= total < worked + 1.0 / 60
    span_minutes = (run.info.end_time - run.info.start_time) / 60_000
    assert total < span_minutes - 1.4 / 60  # the pause is in the span, not in the minutes
    legacy = client.start_parent(exp_id, "gmm-smoke-0", {"preset": "gmm"})[0]  # from before they were logged
    client.set_terminated(legacy, "KILLED", end_time=client.get_run(legacy).info.start_time + 90_000)
    assert tracking.active_minutes(client.get_run(legacy)) == 1.5  # its span, pauses and all


def test_a_sweep_killed_before_it_ended_is_resumed_with_its_minutes_counted_from_then_never_nan(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    client = store(workdir)
    exp_id = client.ensure_experiment("putlab-gmm")
    parent_id, _ = client.start_parent(exp_id, "gmm-smoke-9", {"preset": "gmm"})  # then SIGKILL: no ending
    assert math.isnan(tracking.active_minutes(client.get_run(parent_id)))
    for command in range(2):  # the resume, then one more: NaN must not carry on from the first
        again, reopened = client.start_parent(exp_id, "gmm-smoke-9", {"preset": "gmm"})
        assert (again, reopened) == (parent_id, True)
        ending = SweepEnding()
        ending.attach(client, exp_id, parent_id, [], tracking.active_minutes(client.get_run(parent_id)))
        time.sleep(0.2)
        ending.close("KILLED")
        minutes = tracking.active_minutes(client.get_run(parent_id))
        assert (command + 1) * 0.2 / 60 <= minutes < (command + 1) * 1.0 / 60
    assert capsys.readouterr().err.count("never recorded") == 1


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A Ray of this test module's own (one CPU, a short temp dir for its sockets), shut down after."""
    temp = Path(tempfile.mkdtemp(prefix="intr-ray-"))
    ray.init(address="local", num_cpus=1, include_dashboard=False, logging_level="ERROR", _temp_dir=str(temp))
    yield
    ray.shutdown()
    shutil.rmtree(temp, ignore_errors=True)


@ray.remote(num_cpus=0)
def a_long_attack() -> None:
    time.sleep(300)


def a_farm_with_one_attack_in_flight(tmp_path: Path) -> tuple[FarmScheduler, ray.ObjectRef]:
    scheduler = FarmScheduler(RawStore(f"sqlite:///{tmp_path / 'mlflow.db'}"),
                              FarmPlan(load=print, attackers=("thickness",), privacy_attackers=("thickness",),
                                       resources={"cpu": 0}))
    ref = a_long_attack.remote()
    scheduler.pending[ref] = ("run", 1, ("thickness",))
    return scheduler, ref


def assert_cancelled(ref: ray.ObjectRef) -> None:
    with pytest.raises((ray.exceptions.TaskCancelledError, ray.exceptions.WorkerCrashedError)):
        ray.get(ref, timeout=60)


@pytest.mark.slow  # a Ray of its own and two task workers: 33 s at a load of 20 on 2 cores (about 10 s idle)
@pytest.mark.usefixtures("local_ray")
# The test sets its premise, a terminal's Ctrl+C: a suite started in the background by a non-interactive shell (`cmd &`)
# inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler, so the second Ctrl+C went unhandled
# and the wait ran the stand-in attack's full 300 s. The farm's wait is also stopped, end to end, by
# test_a_stop_at_each_later_phase_... (its "farm wait" phase).
def test_a_stop_ends_the_farms_wait_at_once_and_cancels_its_attacks(tmp_path: Path) -> None:
    # while Tune runs, the first Ctrl+C asks Tune to stop (a stand-in for the SIGUSR1 handler tune.run installs)
    # and the farm's wait (here the one at the end of Tune's run) cancels its attacks and returns
    # the premise of a terminal: SIGINT delivered, and Ctrl+C raises KeyboardInterrupt
    blocked, handler = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []), signal.getsignal(signal.SIGINT)
    if blocked:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        stop_the_farms_wait(tmp_path)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if handler is None else handler)
        if blocked:
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])


def stop_the_farms_wait(tmp_path: Path) -> None:
    """The farm-wait test's body: a stop inside a sweep's block, then Ctrl+C outside it."""
    scheduler, ref = a_farm_with_one_attack_in_flight(tmp_path)
    tune_stops: list[int] = []
    with SweepEnding() as ending, ending.fitting():
        signal.signal(signal.SIGUSR1, lambda signum, frame: tune_stops.append(signum))
        threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
        start = time.monotonic()
        scheduler.drain()
        took = time.monotonic() - start
    assert tune_stops == [signal.SIGUSR1] and ending.signal == signal.SIGINT
    assert took < 1.0 + DRAIN_POLL_S + 1.0 and not scheduler.pending, took
    assert_cancelled(ref)
    assert not stop_requested()  # the sweep's context is over: a later wait in this process waits again

    # outside Tune (the catch-up after it), Ctrl+C interrupts the wait where it is, cancelling the attacks on the way
    scheduler, ref = a_farm_with_one_attack_in_flight(tmp_path)
    threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        scheduler.drain()
    assert time.monotonic() - start < 1.0 + DRAIN_POLL_S + 1.0 and not scheduler.pending
    assert_cancelled(ref)

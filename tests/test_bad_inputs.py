"""Table of hostile inputs: each is refused by the pre-flight check the CLI calls, with one line naming the problem.

Fast: the checks run directly (no sweep, no Ray); a few cases also run the real CLI to show exit code 2 and one line.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, run_sweep, sweep_env
from ray_nodes import free_ports
from stores import RawStore

from platform.attack import main as attack_cli
from platform.compare import main as compare_cli
from platform.errors import UsageError
from platform.plan.seed_axis import with_seeds
from platform.plan.spec import resolve
from platform.report import main as report_cli
from platform.reproduction import main as reproduction_cli
from platform.results import tracking
from platform.results.store import check_tracking_uri
from platform.run import preflight
from platform.select import main as select_cli
from platform.sweep import main as sweep_cli
from platform.sweep import parse_args
from serve.__main__ import check_options
from serve.__main__ import main as serve_cli
from serve.points import PRESET_TAG
from serve.validation import Limits, RequestError, parse_binary, parse_release, read_body

CONFIG = [  # (preset, override, message): every config value checked for type, finiteness and range
    ("amnist", "epochs=inf", "epochs: must be a whole number (got inf)"),
    ("amnist", "n_train=inf", "n_train: must be a whole number (got inf)"),
    ("amnist", "epochs=1e308", "epochs: must be in [1, 10000] (got 1e308)"),
    ("amnist", "epochs=nan", "epochs: must be a whole number (got nan)"),
    ("amnist", "width=0", "width: must be in [1, 1024] (got 0)"),
    ("amnist", "squared_error_weight=nan", "squared_error_weight: must be a number, not NaN (got nan)"),
    ("amnist", "squared_error_weight=inf", "squared_error_weight: must be finite (got inf)"),
    ("amnist", "lr=1e9", "lr: must be in (0, 10] (got 1e9)"),
    ("amnist", "batch_size=1e9", "batch_size: must be in [1, 65536] (got 1e9)"),
    ("amnist", "seed=-1", "seed: must be in [0, 2147483647] (got -1)"),
    ("amnist", "epochs=2.5", "epochs: must be a whole number (got 2.5)"),
    ("amnist", "width=wide", "width: must be a whole number (got 'wide')"),
    ("amnist", "download=1", "download: must be true or false (got 1)"),
    ("amnist", "data_root=/no/such/folder", "data_root: /no/such/folder does not exist"),
    ("amnist", "data_root=/etc/hostname", "data_root: /etc/hostname is not a directory"),
    ("amnist", "mechanism=releaser", "unknown override key 'mechanism'"),
    ("amnist-privatizer", "alpha=nan", "alpha: must be a number, not NaN (got nan)"),
    ("amnist-privatizer", "algorithm=true", "algorithm: must be a whole number (got true)"),
    ("gmm", "steps=1e12", "steps: must be in [1, 1000000] (got 1e12)"),
    ("gmm", "sigma=inf", "sigma: must be finite (got inf)"),
    ("adult-membership", "n=1e300", "n: must be in [2, 10000000] (got 1e300)"),
    ("adult-membership", "mc_runs=8", "mc_runs: must be >= 9 for the corrected KL estimate of p = 6 parameters"),
    ("cloak-mnist", "lam=nan", "lam: must be a number, not NaN (got nan)"),
    ("cloak-mnist", "T=nan", "T: must be a number, not NaN (got nan)"),
    ("eco", "releaser_hidden=0", "releaser_hidden: must be in [1, 4096] (got 0)"),
    # round four: the value as the user wrote it, not its float (issue 56)
    ("amnist", "epochs=99999999999999999999999", "epochs: must be in [1, 10000] (got 99999999999999999999999)"),
    ("amnist", "distortion_target=1e400", "distortion_target: must be finite (got 1e400)"),
    ("amnist", "lam=1,1e400", "lam: must be finite (got 1e400)"),
    ("amnist", "epochs=2.50", "epochs: must be a whole number (got 2.50)"),
    ("amnist", "latent=8,-8", "latent: takes one value, not a list (got '8,-8')"),
]


@pytest.mark.parametrize("preset, override, message", CONFIG, ids=[f"{p}:{o}" for p, o, _ in CONFIG])
def test_config_values(preset: str, override: str, message: str) -> None:
    with pytest.raises(UsageError) as refused:
        resolve(preset, "smoke", [override])
    assert message in str(refused.value) and "\n" not in str(refused.value)


OPTIONS = [
    (["--gpus-per-trial", "nan"], "--gpus-per-trial must be a finite number >= 0"),
    (["--gpus-per-trial", "inf"], "--gpus-per-trial must be a finite number >= 0"),
    (["--gpus-per-trial", "-1"], "--gpus-per-trial must be a finite number >= 0"),
    (["--gpus-per-trial", "1.5"], "above 1 must be a whole number"),
    (["--samples", "0"], "--samples must be in [1, 100000]"),
    (["--max-concurrent", "0"], "--max-concurrent must be >= 1"),
    (["--max-failures", "-1"], "--max-failures must be in [0, 100]"),
]


@pytest.mark.parametrize("argv, message", OPTIONS, ids=[" ".join(a) for a, _ in OPTIONS])
def test_sweep_options(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=None) as refused:
        preflight.check_sweep_options(parse_args(["amnist", *argv]))
    assert message in str(refused.value)


def test_resources_against_the_cluster() -> None:
    with pytest.raises(UsageError, match="--gpus-per-trial is 4 but the Ray cluster has 0 GPU"):
        preflight.check_resources({"cpu": 1, "gpu": 4}, {"CPU": 2.0})
    with pytest.raises(UsageError, match=r"cpus per trial .* is 8 but the Ray cluster has 2 CPU"):
        preflight.check_resources({"cpu": 8, "gpu": 0}, {"CPU": 2.0})
    preflight.check_resources({"cpu": 1, "gpu": 0.25}, {"CPU": 2.0, "GPU": 1.0})


def tracking_cases(tmp: Path) -> list[tuple[str, str]]:
    folder = tmp / "a-folder"
    folder.mkdir()
    readonly_db = tmp / "ro.db"
    readonly_db.write_bytes(b"")
    readonly_db.chmod(0o444)
    readonly_dir = tmp / "ro"
    readonly_dir.mkdir()
    readonly_dir.chmod(0o555)
    return [(f"sqlite:///{folder}", "is a folder, not an sqlite file"),
            (f"sqlite:///{readonly_db}", "is read-only"),
            (f"sqlite:///{readonly_dir}/mlflow.db", "is not writable"),
            ("foo://bar", "unsupported MLflow tracking URI 'foo://bar'"),
            ("mlflow.db", "unsupported MLflow tracking URI"),
            ("sqlite://", "needs a file")]


def test_tracking_uris(tmp_path: Path) -> None:
    for uri, message in tracking_cases(tmp_path):
        with pytest.raises(UsageError) as refused:
            check_tracking_uri(uri)
        assert message in str(refused.value), uri


def test_storage_and_resume_trust(tmp_path: Path) -> None:
    readonly = tmp_path / "ro"
    readonly.mkdir()
    readonly.chmod(0o555)
    with pytest.raises(UsageError, match="is not writable"):
        preflight.check_storage(str(readonly / "runs"))
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(UsageError, match="is not a folder"):
        preflight.check_storage(str(afile / "runs"))
    shared = tmp_path / "shared"
    (shared / "sweep").mkdir(parents=True)
    (shared / "sweep" / "tuner.pkl").write_bytes(b"")
    for path in (shared, shared / "sweep", shared / "sweep" / "tuner.pkl"):
        path.chmod(0o700)
    preflight.check_resume_source(shared, shared / "sweep", shared / "sweep" / "tuner.pkl")
    shared.chmod(0o777)
    with pytest.raises(UsageError, match="writable by group or others"):
        preflight.check_resume_source(shared, shared / "sweep", shared / "sweep" / "tuner.pkl")
    shared.chmod(0o700)
    if os.geteuid() == 0:  # only root can hand a file to another user
        os.chown(shared / "sweep" / "tuner.pkl", 65534, 65534)
        with pytest.raises(UsageError, match="owned by uid 65534, not by you"):
            preflight.check_resume_source(shared, shared / "sweep", shared / "sweep" / "tuner.pkl")


SERVE = [
    ({"port": -1}, "--port must be in [1, 65535]"),
    ({"port": 70000}, "--port must be in [1, 65535]"),
    ({"num_cpus": 0}, "--num-cpus must be >= 1"),
    ({"max_batch": 0}, "--max-batch must be in [1,"),
    ({"max_body_bytes": -5}, "--max-body-bytes must be in [1,"),
    ({"read_timeout_s": 0.0}, "--read-timeout-s must be in (0, 3600]"),
    ({"read_timeout_s": float("nan")}, "--read-timeout-s must be in (0, 3600]"),
    ({"models": " "}, "--models is empty"),
]


@pytest.mark.parametrize("change, message", SERVE, ids=[str(c) for c, _ in SERVE])
def test_serve_options(change: dict, message: str) -> None:
    args = argparse.Namespace(**{"host": "127.0.0.1", "port": 18000, "num_cpus": None, "max_batch": 8,
                                 "max_body_bytes": 1000, "read_timeout_s": 30.0, "models": None, **change})
    with pytest.raises(ValueError, match=None) as refused:
        check_options(args)
    assert message in str(refused.value)


def test_serve_port_in_use() -> None:
    import socket
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        args = argparse.Namespace(host="127.0.0.1", port=taken.getsockname()[1], num_cpus=None, max_batch=8,
                                  max_body_bytes=1000, read_timeout_s=30.0, models=None)
        with pytest.raises(ValueError, match=r"cannot listen on 127\.0\.0\.1"):
            check_options(args)


REQUESTS = [
    (b"[" * 100_000 + b"]" * 100_000, 422, "nested deeper"),
    (b'{"inputs": [[[[0.5]]]], "seed": ' + b"9" * 5000 + b"}", 422, "integer of 5000 digits"),
    (b'{"inputs": [[[[' + b"1" * 30 + b"]]]]}", 422, "integer of 30 digits"),
    (b"{", 400, "not valid JSON"),
    (b'{"inputs": [[[[0.5]]]], "seed": 1e400}', 422, "seed must be a whole number"),
    (b'{"inputs": [[[[NaN]]]]}', 422, "NaN or infinite"),
    (b'{"inputs": [[[[0.5]]]], "a\\nb": 1}', 422, "unknown request field(s): 'a\\nb'"),  # found by the fuzzer
    (b'{"inputs": [[[[0.5]]]], "seed": true}', 422, "seed must be a whole number in [0, 2^63) (got True)"),
    (b'{"inputs": [[[[true]]]], "seed": 1}', 422, "inputs must be numbers, not booleans"),
]


@pytest.mark.parametrize("body, status, message", REQUESTS, ids=[b[:30].decode() for b, _, _ in REQUESTS])
def test_release_requests(body: bytes, status: int, message: str) -> None:
    with pytest.raises(RequestError) as refused:
        parse_release(body, (1, 1, 1), (0.0, 1.0), Limits())
    assert refused.value.status == status and message in refused.value.message and "\n" not in refused.value.message


def test_binary_seed_with_5000_digits() -> None:
    with pytest.raises(RequestError, match="seed must be a whole number"):
        parse_binary(b"\0\0\0\0", "9" * 5000, (1,), None, Limits())


CLI = [  # the real commands: exit 2, one line on stderr, nothing stored
    (["amnist", "--profile", "smoke", "--set", "epochs=inf"], "epochs: must be a whole number (got inf)"),
    (["amnist", "--profile", "smoke", "--gpus-per-trial", "nan"], "--gpus-per-trial must be a finite number"),
    (["amnist", "--profile", "smoke", "--tracking-uri", "foo://bar"], "unsupported MLflow tracking URI"),
]


@pytest.mark.parametrize("args, message", CLI, ids=[" ".join(a) for a, _ in CLI])
def test_sweep_cli_refuses_in_one_line(workdir: Path, args: list[str], message: str) -> None:
    out = run_sweep(workdir, *args, timeout=120)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 2 and len(lines) == 1 and message in lines[0], out.stderr
    assert not (workdir / "runs").exists() and not (workdir / "mlflow.db").exists()


def test_serve_cli_refuses_a_bad_port_before_ray() -> None:
    out = subprocess.run([sys.executable, "-m", "serve", "--port", "70000"], cwd=REPO, env=sweep_env(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.strip() == "error: --port must be in [1, 65535] (got 70000)"


def test_select_refuses_a_slash_in_the_model_name_before_touching_the_store(workdir: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "platform.select", "any-sweep", "--trial", "t", "--name", "a/b",
                          "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}"],
                         cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.strip().startswith("error: --name 'a/b' is not a usable model name")
    assert not (workdir / "mlflow.db").exists() and not (workdir / "mlruns").exists()


# Every command, the same kind of bad input: exit 2, exactly one line on stderr naming the problem, no traceback
# (an exception would reach the test), nothing created and no store changed. The commands run in-process (their
# main), so the whole table takes seconds; two real subprocesses at the end show the same on a real stderr.

def refused(code: int, capsys: pytest.CaptureFixture[str], message: str) -> None:
    """Exit code 2 and one line on stderr, ``error: ...`` holding ``message``."""
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines


def digest(path: Path) -> str:
    """The bytes of a file, hashed (a store that was read and not written keeps its digest)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def a_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An sqlite store holding a sweep with no finished trial and one registered operating point (putlab-amnist/1)."""
    folder = tmp_path_factory.mktemp("store")
    client = RawStore(f"sqlite:///{folder / 'mlflow.db'}")
    exp = client.create_experiment("putlab-amnist", artifact_location=(folder / "mlruns").as_uri())
    parent = client.create_run(exp, run_name="empty-sweep", tags={tracking.TAG_SWEEP: "empty-sweep",
                                                                   tracking.TAG_ROLE: "sweep"})
    client.log_params(parent.info.run_id, {"preset": "amnist", "profile": "smoke", "planned_trials": 3})
    client.create_registered_model("putlab-amnist")
    client.create_model_version("putlab-amnist", source=(folder / "point").as_uri(), run_id=parent.info.run_id,
                                tags={PRESET_TAG: "amnist"})
    return folder / "mlflow.db"


def serve_main(argv: list[str]) -> int:
    """``python -m serve`` in-process on a free port (every refusal below comes before Ray starts)."""
    (port,) = free_ports(1)
    return serve_cli([*argv, "--port", str(port)])


READ_ONLY = {  # every command that only reads a sweep's store (or writes into an existing one): its main and argv
    "report": (report_cli, ["empty-sweep"]),
    "reproduction": (reproduction_cli, []),
    "select": (select_cli, ["empty-sweep", "--trial", "t"]),
    "compare": (compare_cli, ["empty-sweep", "empty-sweep"]),
    "attack": (attack_cli, ["empty-sweep"]),
    "serve": (serve_main, []),
}


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands_never_create_a_store(tmp_path: Path, capsys, command: str) -> None:
    main, argv = READ_ONLY[command]
    refused(main([*argv, "--tracking-uri", f"sqlite:///{tmp_path / 'none.db'}"]), capsys,
            f"no MLflow tracking store at {tmp_path / 'none.db'}")
    (tmp_path / "empty.db").write_bytes(b"")
    refused(main([*argv, "--tracking-uri", f"sqlite:///{tmp_path / 'empty.db'}"]), capsys, "not an MLflow tracking store")
    refused(main([*argv, "--tracking-uri", f"sqlite:///{tmp_path}"]), capsys, "is a folder, not an sqlite file")
    refused(main([*argv, "--tracking-uri", ""]), capsys,
            "unsupported MLflow tracking URI ''" if command == "serve" else "--tracking-uri is empty")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"] and (tmp_path / "empty.db").stat().st_size == 0


def out_cases(tmp: Path) -> list[tuple[Path, str]]:
    """--out paths no file can be written at, and what the refusal says."""
    readonly_file = tmp / "ro.html"
    readonly_file.write_text("kept")
    readonly_file.chmod(0o444)
    readonly_dir = tmp / "ro"
    readonly_dir.mkdir()
    readonly_dir.chmod(0o555)
    return [(tmp / "nowhere" / "out.html", f"folder {tmp / 'nowhere'} does not exist"),
            (tmp, "is a folder: give a file path"),
            (readonly_file, "is read-only"),
            (readonly_dir / "out.html", "is not writable"),
            (readonly_file / "out.html", "is not a folder")]


@pytest.mark.parametrize("command", ["report", "reproduction"])
def test_every_out_option_refuses_an_unwritable_path(tmp_path: Path, a_store: Path, capsys, command: str) -> None:
    main, argv = READ_ONLY[command]
    before = digest(a_store)
    for path, message in out_cases(tmp_path):
        listing = sorted(tmp_path.rglob("*"))
        refused(main([*argv, "--tracking-uri", f"sqlite:///{a_store}", "--out", str(path)]), capsys, message)
        assert sorted(tmp_path.rglob("*")) == listing, path  # nothing written, no folder made
    assert (tmp_path / "ro.html").read_text() == "kept" and digest(a_store) == before


def _study_json(change: dict) -> bytes:
    return json.dumps(json.loads((SNAPSHOT / "study.json").read_text()) | change).encode()


def _stripped(keep: int) -> bytes:
    """trials.csv with only its first ``keep`` columns (its ids and status: every grid axis and metric stripped)."""
    return "".join(",".join(line.split(",")[:keep]) + "\n" for line in (SNAPSHOT / "trials.csv").read_text().splitlines()
                   ).encode()


SNAPSHOT = REPO / "docs" / "reproduction" / "eco-si"
SNAPSHOT_REFUSALS = [  # (file, what it holds now, the one line after its path): last round's tracebacks and silent exit 0
    ("study.json", b"{not json", "is not JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
    ("study.json", b"[1, 2]", "does not match its schema: the top level: Input should be a valid dictionary or instance "
                              "of StudyFile"),
    ("study.json", _study_json({"note": "x"}), "does not match its schema: note: Extra inputs are not permitted (got 'x')"),
    ("study.json", _study_json({"planned": "many"}), "does not match its schema: planned: Input should be a valid integer, "
                                                     "unable to parse string as an integer (got 'many')"),
    ("study.json", _study_json({"label_keys": 3}), "does not match its schema: label_keys: Input should be a valid tuple "
                                                   "(got 3)"),
    ("study.json", _study_json({"parent_metrics": {"front/hypervolume": "high"}}),
     "does not match its schema: parent_metrics.front/hypervolume: Input should be a valid number, unable to parse string "
     "as a number (got 'high')"),
    ("trials.csv", b"", "is empty (no header row)"),
    ("trials.csv", bytes(range(256)) * 4, "is binary (it holds NUL bytes), not text"),
    ("trials.csv", b"trial_id,run_id\n\xff\xfe\xfd\n", "is not UTF-8 text (undecodable byte at offset 16): a binary file?"),
    ("trials.csv", _stripped(4), "lacks 58 of its 62 required columns: alpha, lam, adv_steps, releaser_si, seed, "
                                 "train/loss_releaser, train/loss_adversary, train/ne_energy, train/privacy_term, "
                                 "utility/ne_energy and 48 more"),
]


@pytest.mark.parametrize("name, content, message", SNAPSHOT_REFUSALS,
                         ids=[f"{n}:{c[:12]!r}" for n, c, _ in SNAPSHOT_REFUSALS])
def test_reproduction_refuses_a_broken_snapshot_in_one_line(tmp_path: Path, a_store: Path, capsys, name: str,
                                                            content: bytes, message: str) -> None:
    """The report falls back on the snapshot (the store has no sweep of the study): the broken file is named, nothing
    is written (no report, no figure, no snapshot), the store is untouched."""
    folder = tmp_path / "docs" / "reproduction" / "eco-si"
    shutil.copytree(SNAPSHOT, folder)
    (folder / name).write_bytes(content)
    before, listing = digest(a_store), {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    refused(reproduction_cli(["--tracking-uri", f"sqlite:///{a_store}", "--out", str(tmp_path / "docs" / "r.md")]),
            capsys, f"error: {folder / name} {message}")
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == listing and digest(a_store) == before


def test_select_a_trial_of_a_sweep_without_finished_trials(a_store: Path, capsys) -> None:
    before = digest(a_store)
    refused(select_cli(["empty-sweep", "--trial", "t", "--tracking-uri", f"sqlite:///{a_store}"]), capsys,
            "no finished trial 't': the sweep has no finished trial yet")
    refused(select_cli(["empty-sweep", "--max-attack", "0.6", "--tracking-uri", f"sqlite:///{a_store}"]), capsys,
            "the sweep has no finished trial reporting")
    assert digest(a_store) == before


def test_compare_refuses_one_sweep_given_twice(a_store: Path, capsys) -> None:
    before = digest(a_store)
    parent_id = RawStore(f"sqlite:///{a_store}").search_runs(
        [RawStore(f"sqlite:///{a_store}").get_experiment_by_name("putlab-amnist").experiment_id])[0].info.run_id
    for pair in (["empty-sweep", parent_id], ["empty-sweep", "empty-sweep"], ["putlab-amnist", "empty-sweep"]):
        refused(compare_cli([*pair, "--tracking-uri", f"sqlite:///{a_store}"]), capsys, "are the same sweep")
    assert digest(a_store) == before


@pytest.mark.parametrize("models, unknown", [("nosuch/1", "nosuch/1"), ("putlab-amnist/999", "putlab-amnist/999"),
                                             ("putlab-amnist/1,nosuch", "nosuch"), ("putlab-amnist/x", "putlab-amnist/x")])
def test_serve_refuses_unknown_models_at_start(a_store: Path, capsys, models: str, unknown: str) -> None:
    before = digest(a_store)
    refused(serve_main(["--tracking-uri", f"sqlite:///{a_store}", "--models", models]), capsys,
            f"--models names no registered operating point: {unknown} (registered: putlab-amnist/1)")
    assert digest(a_store) == before


SWEEP_REFUSALS = [  # (argv after the preset, message): counts that multiply trials, empty text options, a folder
    (["--seeds", "100000"], "--seeds must be in [1, 1000] (got 100000)"),
    (["--seeds", "0"], "--seeds must be in [1, 1000] (got 0)"),
    (["--seeds", "1000"], "more than 1000: add --yes to run them all, or narrow --seeds or the --set lists"),
    (["--seeds", "1000", "--set", "lam=" + ",".join(str(i) for i in range(101))], "more than 100000: narrow"),
    (["--set", "lam=" + ",".join(str(i) for i in range(400)), "--set", "alpha=" + ",".join(str(i + 1) for i in range(300))],
     "the grid has 120000 points, more than 100000"),
    (["--search", "optuna", "--samples", "5000"], "the sweep plans 5000 trials, more than 1000: add --yes"),
    (["--experiment", ""], "--experiment is empty"),
    (["--experiment", " "], "--experiment is empty"),
    (["--profile", ""], "--profile is empty"),
    (["--storage", ""], "--storage is empty"),
    (["--attackers", ""], "--attackers is empty"),
    (["--address", ""], "--address is empty"),
]


@pytest.mark.parametrize("argv, message", SWEEP_REFUSALS, ids=[" ".join(a)[:40] for a, _ in SWEEP_REFUSALS])
def test_sweep_refuses_before_anything_is_stored(tmp_path: Path, capsys, argv: list[str], message: str) -> None:
    store_args = ["--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"]
    store_args += [] if "--storage" in argv else ["--storage", str(tmp_path / "runs")]
    refused(sweep_cli(["amnist", "--profile", "smoke", *argv, *store_args]), capsys, message)
    assert list(tmp_path.iterdir()) == []


def test_sweep_refuses_an_empty_tracking_uri_and_a_preset_folder(tmp_path: Path, capsys) -> None:
    storage = ["--storage", str(tmp_path / "runs")]
    refused(sweep_cli(["amnist", "--tracking-uri", "", *storage]), capsys, "--tracking-uri is empty")
    refused(sweep_cli(["--preset-file", str(tmp_path), "--tracking-uri", f"sqlite:///{tmp_path / 'm.db'}", *storage]),
            capsys, f"preset file {tmp_path} is a folder")
    assert list(tmp_path.iterdir()) == []


def test_a_large_sweep_runs_with_yes() -> None:
    spec = with_seeds(resolve("amnist", "smoke", []), 1000, "grid")
    planned = len(spec.grid_points())
    assert preflight.CONFIRM_TRIALS < planned <= preflight.MAX_TRIALS
    preflight.check_sweep_size(spec, "grid", None, confirmed=True)  # --yes: accepted
    with pytest.raises(UsageError, match=f"the sweep plans {planned} trials"):
        preflight.check_sweep_size(spec, "grid", None, confirmed=False)


def test_a_body_that_never_arrives_is_refused_within_the_read_timeout() -> None:
    async def stalls():
        yield b"{"
        await asyncio.sleep(3600)

    started = time.monotonic()
    with pytest.raises(RequestError) as refused_:
        asyncio.run(read_body(stalls(), 1000, timeout_s=0.2))
    assert refused_.value.status == 408 and "not received within 0.2 s (1 bytes arrived)" in refused_.value.message
    assert time.monotonic() - started < 5


def test_real_commands_refuse_in_one_line_without_creating_anything(tmp_path: Path) -> None:
    """On a real stderr (MLflow's and Ray's own output included): serve on a folder answers at once (not after
    minutes of MLflow retries), select and report on a missing store create none."""
    started = time.monotonic()
    served = subprocess.run([sys.executable, "-m", "serve", "--tracking-uri", f"sqlite:///{tmp_path}"], cwd=REPO,
                            env=sweep_env(), capture_output=True, text=True, timeout=120)
    assert served.returncode == 2 and time.monotonic() - started < 60
    assert served.stderr.strip() == f"error: MLflow tracking store {tmp_path} is a folder, not an sqlite file"
    chosen = subprocess.run([sys.executable, "-m", "platform.select", "s", "--trial", "t", "--tracking-uri",
                             f"sqlite:///{tmp_path / 'mlflow.db'}"], cwd=REPO, env=sweep_env(), capture_output=True,
                            text=True, timeout=120)
    assert chosen.returncode == 2 and chosen.stderr.strip() == f"error: no MLflow tracking store at {tmp_path / 'mlflow.db'} " \
                                                               "(a sweep creates one; check --tracking-uri)"
    reported = subprocess.run([sys.executable, "-m", "platform.report", "s", "--out", str(tmp_path / "r.html"),
                               "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"], cwd=REPO, env=sweep_env(),
                              capture_output=True, text=True, timeout=120)
    assert reported.returncode == 2 and reported.stderr == chosen.stderr and reported.stdout == ""
    assert list(tmp_path.iterdir()) == []


# Round four (issue 56): an installed attacker plug-in that clashes, fails to import or is not an attacker; a report
# write that fails; snapshots that are not what the report wrote; a comparison of one sweep.

CLASH = "from dataclasses import replace\nfrom attacks.attackers.knn import SPECS as KNN\n" \
        "SPECS = (replace(KNN[0], summary='another knn'),)\n"
PLUGIN = "entry point {} = putlab_hostile:SPECS of package putlab-hostile"
PLUGINS = {  # (entry-point name, module text, the one line a command needing the registry prints)
    "clash": ("knn", CLASH, f"error: attacker name 'knn' of {PLUGIN.format('knn')} clashes with the one of module "
                            "attacks.attackers.knn"),
    "broken": ("evil", "raise ImportError('no module named evil_dependency')\n",
               f"error: {PLUGIN.format('evil')} does not load: ImportError: no module named evil_dependency"),
    "string": ("evil", "SPECS = 'knn'\n", f"error: {PLUGIN.format('evil')} is a str, not a attacks.spec.AttackerSpec"),
}


def hostile_site(tmp: Path, point: str, module: str) -> Path:
    """A folder holding the installed distribution ``putlab-hostile``: its module, and the entry point ``point`` in
    ``putlab.attackers`` naming its ``SPECS``."""
    site = tmp / "site"
    info = site / "putlab_hostile-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "putlab_hostile.py").write_text(module)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: putlab-hostile\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[putlab.attackers]\n{point} = putlab_hostile:SPECS\n")
    return site


PLUGIN_COMMANDS = [  # (plug-in, command, exit code, the expected line: None for the plug-in's own)
    ("clash", ["platform.sweep", "--help"], 0, "usage: python -m platform.sweep"),
    ("broken", ["platform.sweep", "--help"], 0, "usage: python -m platform.sweep"),
    ("clash", ["platform.sweep", "amnist", "--profile", "smoke"], 2, None),
    ("broken", ["platform.sweep", "amnist", "--profile", "smoke"], 2, None),
    ("string", ["platform.sweep", "amnist", "--profile", "smoke", "--attackers", "knn"], 2, None),
    ("broken", ["platform.attack", "s"], 2, "error: no MLflow tracking store at"),
    ("string", ["platform.select", "s", "--trial", "t"], 2, "error: no MLflow tracking store at"),
]


@pytest.mark.parametrize("plugin, argv, code, line", PLUGIN_COMMANDS,
                         ids=[f"{p}:{' '.join(a[:2])}" for p, a, _, _ in PLUGIN_COMMANDS])
def test_a_broken_attacker_plugin_is_one_line_and_help_works(tmp_path: Path, plugin: str, argv: list[str], code: int,
                                                             line: str | None) -> None:
    point, module, message = PLUGINS[plugin]
    env = dict(sweep_env(), PYTHONPATH=f"{hostile_site(tmp_path, point, module)}{os.pathsep}{REPO}")
    store = ["--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"]
    store += ["--storage", str(tmp_path / "runs")] if argv[0] == "platform.sweep" and code else []
    out = subprocess.run([sys.executable, "-m", *argv, *(store if code else [])], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=120)
    shown = [x for x in (out.stderr if code else out.stdout).splitlines() if x.strip()]
    assert out.returncode == code and shown[0].startswith(line or message), out.stderr[-2000:]
    assert code == 0 or len(shown) == 1, shown
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no store, no storage


def test_report_write_that_fails_is_one_line_and_leaves_nothing(tmp_path: Path, a_store: Path, capsys) -> None:
    before = digest(a_store)
    refused(report_cli(["empty-sweep", "--tracking-uri", f"sqlite:///{a_store}", "--out", "/dev/full"]), capsys,
            "error: could not write the report /dev/full: No space left on device")
    assert digest(a_store) == before


def test_report_write_that_fails_midway_leaves_no_partial_file(tmp_path: Path, a_store: Path, capsys,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    before, out, write_text = digest(a_store), tmp_path / "r.html", Path.write_text

    def half_then_full(path: Path, text: str, encoding: str | None = None) -> int:
        """The report's first 100 characters, then a full disk; every other file as usual."""
        if path != out:
            return write_text(path, text, encoding=encoding)
        write_text(path, text[:100], encoding=encoding)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", half_then_full)
    refused(report_cli(["empty-sweep", "--tracking-uri", f"sqlite:///{a_store}", "--out", str(out)]), capsys,
            f"error: could not write the report {out}: No space left on device")
    assert list(tmp_path.iterdir()) == [] and digest(a_store) == before


def _non_finite(cell: str) -> bytes:
    """eco-si's trials.csv with every attack/deep/accuracy cell ``cell``."""
    rows = list(csv.reader(io.StringIO((SNAPSHOT / "trials.csv").read_text())))
    column = rows[0].index("attack/deep/accuracy")
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows([rows[0], *([*r[:column], cell, *r[column + 1:]] for r in rows[1:])])
    return text.getvalue().encode()


@pytest.mark.parametrize("cell", ["inf", "nan", "-inf"])
def test_reproduction_refuses_a_snapshot_with_non_finite_numbers(tmp_path: Path, capsys, cell: str) -> None:
    folder = tmp_path / "docs" / "reproduction" / "eco-si"
    shutil.copytree(SNAPSHOT, folder)
    (folder / "trials.csv").write_bytes(_non_finite(cell))
    listing = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    refused(reproduction_cli(["--snapshots", "--out", str(tmp_path / "docs" / "r.md")]), capsys,
            f"error: {folder / 'trials.csv'} line 2, column attack/deep/accuracy: must be finite (got {cell})")
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == listing


def emptied(folder: Path) -> None:
    """The study's snapshot folder left empty."""
    shutil.rmtree(folder)
    folder.mkdir()


def replaced_by_a_file(folder: Path) -> None:
    """The study's snapshot folder replaced by a file."""
    shutil.rmtree(folder)
    folder.write_text("not a folder")


@pytest.mark.parametrize("snapshots", [True, False], ids=["--snapshots", "store"])
@pytest.mark.parametrize("damage, message", [(emptied, "holds no study.json: not a snapshot the report wrote"),
                                             (replaced_by_a_file, "is a file, not a study's snapshot folder")])
def test_reproduction_refuses_a_study_folder_that_lost_its_snapshot(tmp_path: Path, a_store: Path, capsys,
                                                                   snapshots: bool, damage, message: str) -> None:
    out = tmp_path / "docs" / "reproduction"
    shutil.copytree(SNAPSHOT, out / "eco-si")
    shutil.copytree(SNAPSHOT.parent / "eco", out / "eco")
    damage(out / "eco")
    before, listing = digest(a_store), sorted(tmp_path.rglob("*"))
    store = [] if snapshots else ["--tracking-uri", f"sqlite:///{a_store}"]
    refused(reproduction_cli([*(["--snapshots"] if snapshots else []), *store, "--out", str(out.parent / "r.md")]),
            capsys, f"error: {out / 'eco'} {message}")
    assert sorted(tmp_path.rglob("*")) == listing and digest(a_store) == before


@pytest.mark.parametrize("make", [False, True], ids=["no folder", "empty folder"])
def test_reproduction_snapshots_refuses_when_there_are_none(tmp_path: Path, capsys, make: bool) -> None:
    (tmp_path / "docs" / ("reproduction" if make else "")).mkdir(parents=True, exist_ok=True)
    listing = sorted(tmp_path.rglob("*"))
    refused(reproduction_cli(["--snapshots", "--out", str(tmp_path / "docs" / "r.md")]), capsys,
            f"error: --snapshots: no study snapshot in {tmp_path / 'docs' / 'reproduction'} to read")
    assert sorted(tmp_path.rglob("*")) == listing


def test_compare_refuses_one_sweep(a_store: Path, capsys) -> None:
    before = digest(a_store)
    refused(compare_cli(["empty-sweep", "--tracking-uri", f"sqlite:///{a_store}"]), capsys,
            "error: give at least two sweeps to compare (got one: 'empty-sweep')")
    assert digest(a_store) == before

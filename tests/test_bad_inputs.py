"""Table of hostile inputs: each is refused by the pre-flight check the CLI calls, with one line naming the problem.

Fast: the checks run directly (no sweep, no Ray); a few cases also run the real CLI to show exit code 2 and one line.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_sweep, sweep_env

from platform import preflight
from platform.errors import UsageError
from platform.sweep import parse_args
from platform.sweep_config import resolve
from serve.__main__ import check_options
from serve.validation import Limits, RequestError, parse_binary, parse_release

CONFIG = [  # (preset, override, message): every config value checked for type, finiteness and range
    ("amnist", "epochs=inf", "epochs: must be a whole number (got inf)"),
    ("amnist", "n_train=inf", "n_train: must be a whole number (got inf)"),
    ("amnist", "epochs=1e308", "epochs: must be in [1, 10000] (got 1e+308)"),
    ("amnist", "epochs=nan", "epochs: must be a whole number (got nan)"),
    ("amnist", "width=0", "width: must be in [1, 1024] (got 0)"),
    ("amnist", "squared_error_weight=nan", "squared_error_weight: must be a number, not NaN (got nan)"),
    ("amnist", "squared_error_weight=inf", "squared_error_weight: must be finite (got inf)"),
    ("amnist", "lr=1e9", "lr: must be in (0, 10] (got 1000000000.0)"),
    ("amnist", "batch_size=1e9", "batch_size: must be in [1, 65536] (got 1000000000)"),
    ("amnist", "seed=-1", "seed: must be in [0, 2147483647] (got -1)"),
    ("amnist", "epochs=2.5", "epochs: must be a whole number (got 2.5)"),
    ("amnist", "width=wide", "width: must be a whole number (got 'wide')"),
    ("amnist", "download=1", "download: must be true or false (got 1)"),
    ("amnist", "data_root=/no/such/folder", "data_root: /no/such/folder does not exist"),
    ("amnist", "data_root=/etc/hostname", "data_root: /etc/hostname is not a directory"),
    ("amnist", "mechanism=releaser", "unknown override key 'mechanism'"),
    ("amnist-privatizer", "alpha=nan", "alpha: must be a number, not NaN (got nan)"),
    ("amnist-privatizer", "algorithm=true", "algorithm: must be a whole number (got True)"),
    ("gmm", "steps=1e12", "steps: must be in [1, 1000000] (got 1000000000000)"),
    ("gmm", "sigma=inf", "sigma: must be finite (got inf)"),
    ("adult-membership", "n=1e300", "n: must be in [2, 10000000] (got 1e+300)"),
    ("adult-membership", "mc_runs=8", "mc_runs: must be >= 9 for the corrected KL estimate of p = 6 parameters"),
    ("cloak-mnist", "lam=nan", "lam: must be a number, not NaN (got nan)"),
    ("cloak-mnist", "T=nan", "T: must be a number, not NaN (got nan)"),
    ("eco", "releaser_hidden=0", "releaser_hidden: must be in [1, 4096] (got 0)"),
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
            preflight.check_tracking_uri(uri)
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
]


@pytest.mark.parametrize("change, message", SERVE, ids=[str(c) for c, _ in SERVE])
def test_serve_options(change: dict, message: str) -> None:
    args = argparse.Namespace(**{"host": "127.0.0.1", "port": 18000, "num_cpus": None, "max_batch": 8,
                                 "max_body_bytes": 1000, **change})
    with pytest.raises(ValueError, match=None) as refused:
        check_options(args)
    assert message in str(refused.value)


def test_serve_port_in_use() -> None:
    import socket
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        args = argparse.Namespace(host="127.0.0.1", port=taken.getsockname()[1], num_cpus=None, max_batch=8,
                                  max_body_bytes=1000)
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

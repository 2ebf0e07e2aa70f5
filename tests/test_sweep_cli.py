"""Bad input fails before any trial: one line naming the problem, a non-zero exit, nothing stored lost."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_sweep, store

from platform.sweep import main

BAD = [
    (["nope"], "unknown preset 'nope'"),
    (["amnist", "--set", "alpha=0"], "alpha: must be > 0 (got 0)"),
    (["amnist", "--set", "alpha=2,-1"], "alpha: must be > 0 (got -1)"),
    (["amnist", "--set", "lam=-1"], "lam: must be in [0, 1000000000] (got -1)"),
    (["amnist", "--set", "adv_steps=0"], "adv_steps: must be in [1, 1000] (got 0)"),
    (["amnist", "--set", "warp=9"], "unknown override key 'warp'"),
    (["amnist", "--set", "epochs"], "--set expects key=value"),
    (["amnist", "--profile", "huge"], "unknown profile 'huge'"),
    (["amnist", "--set", "alpha=abc"], "alpha: must be a number (got 'abc')"),
]


@pytest.mark.parametrize("args,message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_and_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                          message: str) -> None:
    """In-process through the CLI's own entry point (the real process exit is tested in test_bad_inputs)."""
    try:
        code = main([*args, "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--storage", str(workdir / "runs")])
    except SystemExit as exited:  # argparse's own refusals
        code = exited.code
    stderr = capsys.readouterr().err
    assert code == 2, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines == [lines[0]] and lines[0].startswith("error: ") and message in lines[0], stderr
    assert not (workdir / "runs").exists()  # nothing scheduled


def test_every_bad_value_is_one_line(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Several bad values: all of them reported at once, one line each, exit 2, nothing scheduled."""
    code = main(["amnist", "--set", "alpha=-1", "--set", "epochs=2.5", "--set", "download=yes",
                 "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--storage", str(workdir / "runs")])
    lines = capsys.readouterr().err.splitlines()
    assert code == 2 and lines == ["error: 3 invalid values in preset 'amnist':", "  epochs: must be a whole number (got 2.5)",
                                   "  download: must be true or false (got 'yes')", "  alpha: must be > 0 (got -1)"], lines
    assert not (workdir / "runs").exists()


def test_config_schema_lists_fields_with_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["amnist", "--config-schema"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[2:]}
    assert "kill_worker_after_epoch" not in rows and "mechanism" not in rows
    assert rows["epochs"].split()[1:4] == ["int", "3", "[1,"] and "Training epochs" in rows["epochs"]
    assert "> 0" in rows["alpha"] and rows["pretrain_epochs"].split()[2] == "2"  # the preset's own value


def test_unreachable_tracking_store(workdir: Path) -> None:
    out = run_sweep(workdir, "amnist", "--profile", "smoke", "--tracking-uri", "http://127.0.0.1:9", timeout=120)
    assert out.returncode == 2
    assert "error: MLflow tracking store http://127.0.0.1:9 is unreachable" in out.stderr.strip().splitlines()[-1]


def test_corrupt_data_source_is_reported(workdir: Path) -> None:
    raw = workdir / "data" / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        (raw / name).write_bytes(b"not an idx file")
    out = run_sweep(workdir, "amnist", "--profile", "smoke", "--set", f"data_root={workdir / 'data'}", timeout=120)
    assert out.returncode == 2
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("error: data for preset 'amnist' unavailable") and "idx" in last, out.stderr


def test_bad_input_keeps_existing_store(workdir: Path) -> None:
    client = store(workdir)
    exp = client.create_experiment("putlab-amnist")
    run = client.create_run(exp)
    client.log_metric(run.info.run_id, "utility/accuracy", 0.9)
    assert run_sweep(workdir, "amnist", "--set", "lam=-3", timeout=120).returncode == 2
    assert store(workdir).get_run(run.info.run_id).data.metrics == {"utility/accuracy": 0.9}


def test_help_lists_the_options(workdir: Path) -> None:
    out = run_sweep(workdir, "--help", timeout=120)
    assert out.returncode == 0
    for option in ("--profile", "--set", "--search", "--tracking-uri", "--experiment", "--storage",
                   "--gpus-per-trial", "--max-concurrent", "--resume"):
        assert option in out.stdout

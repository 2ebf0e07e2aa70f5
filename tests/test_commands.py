"""Commands putlab prints for pasting name this environment's executables and run as printed from the repo root."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from conftest import REPO, assert_runs_as_printed

from core.commands import command, executable, python_module


def test_executables_are_this_environment_s_relative_to_the_repository() -> None:
    python = executable("python")
    assert not Path(python).is_absolute() or not Path(os.path.abspath(sys.executable)).is_relative_to(REPO)
    assert os.path.samefile(REPO / python, sys.executable)
    assert (REPO / executable("mlflow")).parent == (REPO / python).parent


def test_an_interpreter_outside_the_repository_is_named_absolutely(monkeypatch) -> None:
    monkeypatch.setattr(sys, "executable", "/usr/bin/python3")
    assert executable("python") == "/usr/bin/python3" and executable("mlflow") == "/usr/bin/mlflow"
    assert python_module("serve", "--port", "8001") == "/usr/bin/python3 -m serve --port 8001"


def test_arguments_are_shell_quoted() -> None:
    assert command("mlflow", "ui", "--backend-store-uri", "sqlite:////tmp/a b/mlflow.db").endswith(
        "mlflow ui --backend-store-uri 'sqlite:////tmp/a b/mlflow.db'")


def test_printed_mlflow_ui_and_module_commands_run_in_a_bare_shell(tmp_path: Path) -> None:
    assert_runs_as_printed(command("mlflow", "ui", "--backend-store-uri", f"sqlite:///{tmp_path / 'mlflow.db'}",
                                   "--workers", "1"), "--help", expect="--backend-store-uri")
    assert_runs_as_printed(python_module("platform.sweep", "amnist", "--resume", "amnist-quick-x"), "--help",
                           expect="usage: python -m platform.sweep")

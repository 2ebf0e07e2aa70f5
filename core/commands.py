"""Commands putlab prints for the user to paste: they name this environment's executables, so they run as printed.

A bare ``mlflow`` or ``python`` resolves to whatever is first on the user's PATH (often not the environment putlab
runs in). Executables are taken from the directory of ``sys.executable``: relative to the repository root when they
lie inside it (``.venv/bin/python``), absolute otherwise. Printed commands are meant for the repository root.
"""
from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def executable(name: str) -> str:
    """The path to paste for executable ``name`` of the running environment (``python`` is the interpreter itself)."""
    interpreter = Path(os.path.abspath(sys.executable))  # abspath, not resolve: keep the venv's own bin/ (symlinks)
    path = interpreter if name == "python" else interpreter.parent / name
    root = Path(os.path.abspath(REPO_ROOT))
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def command(name: str, *args: str) -> str:
    """A shell-quoted command line running ``name`` (an executable, or ``python -m module``) with ``args``."""
    return shlex.join([executable(name), *args])


def python_module(module: str, *args: str) -> str:
    """``<this python> -m module args`` as a pasteable line."""
    return command("python", "-m", module, *args)

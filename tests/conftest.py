"""Shared helpers: run the real CLI in a subprocess and read back the real MLflow store."""
from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from mlflow.tracking import MlflowClient

REPO = Path(__file__).resolve().parents[1]


def benchmark_script(name: str) -> ModuleType:
    """The script ``benchmarks/<name>.py`` imported as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def sweep_env() -> dict[str, str]:
    """The environment a user has in the repo root (the repo on PYTHONPATH, unbuffered output)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", RAY_DEDUP_LOGS="0")
    return env


def user_env() -> dict[str, str]:
    """The environment of the README's command in the repo root: no PYTHONPATH, so Ray's workers find the repository
    only after the standard ``platform`` module (what they are shipped must not need the driver's package)."""
    return {key: value for key, value in sweep_env().items() if key != "PYTHONPATH"}


def run_sweep(workdir: Path, *args: str, timeout: float = 300, env: dict[str, str] | None = None,
              cwd: Path = REPO, baseline: bool = False) -> subprocess.CompletedProcess:
    """``python -m platform.sweep ARGS`` with an isolated store and storage under ``workdir``; without the image
    presets' comparison grid unless ``baseline`` (tests/test_noise_baseline.py runs it)."""
    defaults = {"--tracking-uri": f"sqlite:///{workdir / 'mlflow.db'}", "--storage": str(workdir / "runs")}
    extra = [item for key, value in defaults.items() if key not in args for item in (key, value)]
    extra += [] if baseline else ["--no-comparison-grids"]
    cmd = [sys.executable, "-m", "platform.sweep", *args, *extra]
    return subprocess.run(cmd, cwd=cwd, env=env or sweep_env(), capture_output=True, text=True, timeout=timeout)


def assert_runs_as_printed(line: str, *extra: str, expect: str) -> None:
    """A command a putlab tool printed runs from the repository root in a bare shell (no venv on PATH, no
    PYTHONPATH): its executable exists, and with ``extra`` arguments (e.g. --help) it exits 0 printing ``expect``."""
    argv = shlex.split(line)
    assert (REPO / argv[0]).is_file() and os.access(REPO / argv[0], os.X_OK), f"{argv[0]} does not resolve from {REPO}"
    bare = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}
    out = subprocess.run([*argv, *extra], cwd=REPO, env=bare, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0 and expect in out.stdout, (line, out.stdout[-2000:], out.stderr[-2000:])


def store(workdir: Path) -> MlflowClient:
    """A client on the sweep's sqlite store."""
    return MlflowClient(f"sqlite:///{workdir / 'mlflow.db'}")


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture(autouse=True, scope="session")
def resume_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Sweeps run by the tests seal their resume state with a key of their own, never the user's
    (platform.run.resume_seal): its path is in the environment every test and every sweep subprocess sees."""
    path = tmp_path_factory.mktemp("resume-key") / "resume.key"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PUTLAB_RESUME_KEY", str(path))
        yield path


# Modules whose module-scoped fixture is costly (test_serve's: a sweep and a service, about 5 minutes on 2 busy cores):
# one test process runs each of them whole, so the fixture is set up once, not once in each process.
ONE_PROCESS_MODULES = ("test_serve.py", "test_game_curves.py", "test_audit.py", "test_bad_inputs.py")


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """Under ``--dist loadscope``: every test is its own unit of work, handed to whichever process is free, except the
    modules of :data:`ONE_PROCESS_MODULES`, each one unit. (pytest-xdist's ``xdist_group`` mark names tests by
    rewriting an attribute pytest 9 no longer reads, so it no longer groups them: pytest-xdist issue #1386.)"""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class TestsApartButCostlyModules(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if Path(module).name in ONE_PROCESS_MODULES else nodeid

    return TestsApartButCostlyModules(config, log)


def threads_per_process() -> int:
    """Torch threads for a test process: the machine's cores shared among the test processes (pytest-xdist's workers),
    so that no core runs two busy threads (two threads on two busy cores made some tests 50 times slower)."""
    return max(1, (os.cpu_count() or 1) // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


@pytest.fixture(autouse=True, scope="session")
def shared_cores() -> Iterator[None]:
    """Each test process, and every sweep it starts (its driver and Ray workers inherit OMP_NUM_THREADS), uses its
    share of the cores (``threads_per_process``)."""
    import torch

    threads = threads_per_process()
    torch.set_num_threads(threads)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OMP_NUM_THREADS", str(threads))
        yield


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """One torch thread for a module's tests, as a trial runs (``threads = 1``): on 2 busy cores two threads made
    DP-SGD and the membership points several times slower."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)

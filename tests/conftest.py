"""Shared helpers: run the real CLI in a subprocess and read back the real MLflow store."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from filelock import FileLock
from stores import RawStore

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


def store(workdir: Path) -> RawStore:
    """The sweep's sqlite store (with MLflow's own client calls, for inspecting it)."""
    return RawStore(f"sqlite:///{workdir / 'mlflow.db'}")


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    return tmp_path


# The sweeps tests share, each run once per test session (whichever test process asks first runs it, the other waits
# for it: a lock beside it), read only by the tests that share it (a writable copy for those that write: copy_sweep).
# The smoke sweep, for every test that only reads a sweep's results (its store, storage, report and what it printed):
SMOKE_SWEEP = ("amnist", "--profile", "smoke", "--attackers", "thickness")
# The farm's sweep: one point of the game over two checkpoints, every attacker that trains no reference model
# (RMIA's and LiRA's: test_mia_control) and 50 member canaries; read by the tests of what the farm logs per checkpoint
# (test_farm, test_fresh_adversary, test_canaries).
FARM_SWEEP = ("amnist", "--profile", "smoke", "--set", "lam=0", "--set", "epochs=2", "--set", "canaries=50",
              "--attackers", "deep_raw,thickness,yeom,fresh_adversary")
# The noise preset's smoke sweep (σ = 0 and 1, the whole farm) with its front's learning curves, run as the README runs
# (no PYTHONPATH: the curves' Ray tasks must load in a worker as a user starts it); read by test_front_saturation and
# test_audit.
NOISE_SWEEP = ("noise", "--profile", "smoke", "--learning-curve")
TRANSIENT = ("-journal", "-wal", "-shm")  # sqlite's own files while a reader has the store open


@dataclass(frozen=True)
class SharedSweep:
    """A session's shared sweep (e.g. :data:`SMOKE_SWEEP`): its folder (``mlflow.db``, ``runs/``, ``mlruns/``,
    ``reports/``) and what the command printed. Read it only: a test that writes to it fails the session
    (:func:`tree_changes`)."""

    folder: Path
    stdout: str
    stderr: str


def tree_digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative path) with the SHA-256 of its bytes, sqlite's transient files left out."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file() and not path.name.endswith(TRANSIENT)}


def tree_changes(folder: Path, digest: dict[str, str]) -> list[str]:
    """The files under ``folder`` added, removed or changed since ``digest`` (:func:`tree_digest`) was taken."""
    now = tree_digest(folder)
    return sorted(path for path in digest.keys() | now.keys() if digest.get(path) != now.get(path))


def shared_sweep(tmp_path_factory: pytest.TempPathFactory, name: str, args: tuple[str, ...],
                 env: dict[str, str] | None = None) -> Iterator[SharedSweep]:
    """The session's sweep ``name`` (``python -m platform.sweep ARGS`` in ``env``), run once for every test process;
    after the session, unchanged or an error."""
    shared = session_folder(tmp_path_factory)
    folder, record = shared / name, shared / f"{name}.json"
    with FileLock(str(shared / f"{name}.lock")):
        if not record.exists():
            folder.mkdir(exist_ok=True)
            out = run_sweep(folder, *args, timeout=900, env=env)
            assert out.returncode == 0, out.stderr[-3000:]
            record.write_text(json.dumps({"stdout": out.stdout, "stderr": out.stderr, "digest": tree_digest(folder)}))
    saved = json.loads(record.read_text())
    yield SharedSweep(folder, saved["stdout"], saved["stderr"])
    changed = tree_changes(folder, saved["digest"])
    assert not changed, f"a test wrote to the shared sweep {name} ({folder}): {changed[:10]}"


@pytest.fixture(scope="session")
def smoke_sweep(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedSweep]:
    """The session's one smoke sweep (:data:`SMOKE_SWEEP`)."""
    yield from shared_sweep(tmp_path_factory, "smoke-sweep", SMOKE_SWEEP)


@pytest.fixture(scope="session")
def farm_sweep(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedSweep]:
    """The session's farm sweep (:data:`FARM_SWEEP`)."""
    yield from shared_sweep(tmp_path_factory, "farm-sweep", FARM_SWEEP)


@pytest.fixture(scope="session")
def noise_sweep(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedSweep]:
    """The session's noise sweep (:data:`NOISE_SWEEP`), in the README's environment."""
    yield from shared_sweep(tmp_path_factory, "noise-sweep", NOISE_SWEEP, env=user_env())


def copy_sweep(sweep: SharedSweep, destination: Path) -> Path:
    """A copy of the shared sweep at ``destination`` that a test may write to: its files, and every absolute path its
    store holds (artifact locations, checkpoint tags, the storage param) pointed at the copy; returns ``destination``."""
    shutil.copytree(sweep.folder, destination, dirs_exist_ok=True)
    old, new = str(sweep.folder), str(destination)
    with sqlite3.connect(destination / "mlflow.db") as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for column in [row[1] for row in db.execute(f'PRAGMA table_info("{table}")')]:
                db.execute(f'UPDATE "{table}" SET "{column}" = replace("{column}", ?, ?) '
                           f'WHERE typeof("{column}") = \'text\' AND instr("{column}", ?) > 0', (old, new, old))
    return destination


def session_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every test process of the session shares (pytest-xdist's processes each have their own below it)."""
    shared = tmp_path_factory.getbasetemp()
    return shared.parent if os.environ.get("PYTEST_XDIST_WORKER") else shared


@pytest.fixture(autouse=True, scope="session")
def cost_ledger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The sweeps the tests run keep their costs in a ledger of the session's (platform.results.cost_ledger), never in
    the user's; one file for every test process, so the shared smoke sweep prices a test's sweep like it."""
    path = session_folder(tmp_path_factory) / "sweep_costs.jsonl"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PUTLAB_COST_LEDGER", str(path))
        yield path


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


SHARED_SWEEPS = ("smoke_sweep", "farm_sweep", "noise_sweep")  # the session's sweeps: a minute or two each


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that reads one of the session's shared sweeps is slow (the README's test command runs none of them);
    the slow tests first (each a minute or more), the rest after them: the two test processes take the long ones
    while much work is left and end on short ones, so neither waits long on the other at the end (``-m "slow or not
    slow"``, as .ci/run runs them)."""
    for item in items:
        if set(SHARED_SWEEPS) & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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


@pytest.fixture(autouse=True)
def no_ray_left_running(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that starts Ray in the test process shuts it down (a module's ``local_ray`` fixture excepted): a Ray left
    running made later tests train their reference models as Ray tasks, whose workers cannot import a test module, and
    printed those workers' errors into later tests' stderr."""
    yield
    import ray

    if ray.is_initialized() and "local_ray" not in request.fixturenames:
        ray.shutdown()
        pytest.fail(f"{request.node.nodeid} left Ray running in the test process")


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """One torch thread for a module's tests, as a trial runs (``threads = 1``): on 2 busy cores two threads made
    DP-SGD and the membership points several times slower."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)

"""``python -m platform.report SWEEP`` as a user runs it (a subprocess) on a real store of two finished sweeps: by sweep
name, by parent run id and by experiment name (its newest sweep) it writes the HTML and logs it on that sweep's parent;
an unknown sweep is one line and exit code 2. (A missing store is refused without creating one:
tests/test_bad_inputs.py, in-process and as a subprocess.)
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, sweep_env
from stores import RawStore
from test_report import make_sweep

from platform.report import main as report_cli

FIRST, NEWEST = "amnist-report-first", "amnist-report-newest"


def report(uri: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "platform.report", *args, "--tracking-uri", uri], cwd=REPO, env=sweep_env(),
                          capture_output=True, text=True, timeout=300)


def logged_report(client: RawStore, parent_id: str, tmp: Path) -> str | None:
    """The parent's ``report/report.html``, if it has one."""
    if not any(a.path == "report/report.html" for a in client.list_artifacts(parent_id, "report")):
        return None
    return Path(client.download_artifacts(parent_id, "report/report.html", str(tmp))).read_text()


def title(html: str) -> str:
    return html.split("<title>", 1)[1].split("</title>", 1)[0]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[RawStore, Path, dict[str, str]]:
    """Two sweeps of one experiment, the newest made last, with no report logged: (client, store file, parents)."""
    path = tmp_path_factory.mktemp("store") / "mlflow.db"
    client = RawStore.open(f"sqlite:///{path}")
    parents = {name: make_sweep(client, name) for name in (FIRST, NEWEST)}
    assert all(logged_report(client, p, path.parent / "none") is None for p in parents.values())
    return client, path, parents


@pytest.mark.slow  # three report commands as subprocesses: about 25 s
def test_report_by_name_id_and_experiment_writes_and_logs_that_sweeps_report(store, tmp_path: Path) -> None:
    client, path, parents = store
    uri = f"sqlite:///{path}"

    newest = report(uri, "putlab-amnist", "--out", str(tmp_path / "newest.html"))  # the experiment: its newest sweep
    assert newest.returncode == 0, newest.stderr[-3000:]
    assert newest.stdout.strip().splitlines()[-1] == f"report: {tmp_path / 'newest.html'}"
    html = (tmp_path / "newest.html").read_text()
    assert title(html) == f"putlab sweep {NEWEST}" and "2 of 3 trials on the front" in html
    assert logged_report(client, parents[NEWEST], tmp_path / "a") == html
    assert logged_report(client, parents[FIRST], tmp_path / "b") is None  # the other sweep is left alone

    by_name = report(uri, FIRST, "--out", str(tmp_path / "first.html"))
    assert by_name.returncode == 0, by_name.stderr[-3000:]
    html = (tmp_path / "first.html").read_text()
    assert title(html) == f"putlab sweep {FIRST}" and logged_report(client, parents[FIRST], tmp_path / "c") == html

    by_id = report(uri, parents[FIRST])  # no --out: reports/<sweep>.html beside the store
    beside = path.parent / "reports" / f"{FIRST}.html"
    assert by_id.returncode == 0 and by_id.stdout.strip().splitlines()[-1] == f"report: {beside}", by_id.stderr[-3000:]
    assert title(beside.read_text()) == f"putlab sweep {FIRST}"
    assert logged_report(client, parents[FIRST], tmp_path / "d") == beside.read_text()


def test_report_of_an_unknown_sweep_is_one_line_and_writes_nothing(store, tmp_path: Path, capsys) -> None:
    client, path, parents = store
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    out = report(f"sqlite:///{path}", "no-such-sweep", "--out", str(tmp_path / "never.html"))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == "error: 'no-such-sweep' is neither a sweep run id, a sweep name nor an experiment name"
    trial = client.child_runs(client.get_run(parents[FIRST]).info.experiment_id, parents[FIRST])[0].info.run_id
    assert report_cli([trial, "--tracking-uri", f"sqlite:///{path}"]) == 2  # a run id, but a trial's (in-process)
    assert capsys.readouterr().err.splitlines() == [f"error: run {trial} is not a sweep's parent run"]
    assert list(tmp_path.iterdir()) == [] and hashlib.sha256(path.read_bytes()).hexdigest() == before  # nothing written

"""The sweep and comparison HTML reports: built from a real MLflow store's runs and artifacts, self-contained, and
rendered by a real headless Chromium into a non-blank picture."""
from __future__ import annotations

import base64
import importlib.util
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import REPO
from stores import RawStore

from attacks.audits.exposure import ExposedRecords, exposed_csv, gallery_png
from attacks.plots.roc_plot import roc_png
from platform.compare import run as compare
from platform.figures.html_report import report_dir
from platform.plan.spec import preset_of
from platform.publish import publish, render_stored_sweep, write_sweep_report
from platform.results import tracking
from platform.results.summary import SweepSummary, read_summary
from platform.results.sweep_record import read_sweep_record
from search_spaces import Preset, presets
from trainables.shared.figures import digit_thickness, save_release_grid

CHROMIUM = Path("/usr/bin/chromium")
# (alpha, lam, utility, strongest attacker, its 95% interval): the first two are the front
TRIALS = [(2.0, 0.0001, 0.91, 0.80, (0.77, 0.83)), (2.0, 3.0, 0.85, 0.62, (0.59, 0.65)), (10.0, 1.0, 0.80, 0.81, None)]


def summarised(client: RawStore, parent_id: str) -> tuple[Preset, SweepSummary]:
    """The preset and summary the sweep command hands its report."""
    preset = preset_of(client.get_run(parent_id).data.params)
    return preset, read_summary(client, parent_id, preset)


def _screenshot_module():
    spec = importlib.util.spec_from_file_location("report_screenshot", REPO / "scripts" / "report_screenshot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_sweep(client: RawStore, name: str) -> str:
    """A finished amnist sweep in the store: parent, three trial runs with metrics, pictures, ROC curves, summary."""
    exp_id = client.ensure_experiment("putlab-amnist")
    parent_id, _ = client.start_parent(exp_id, name, {"preset": "amnist", "profile": "quick", "search": "grid",
                                                               "planned_trials": 3, "config": {"epochs": 4}})
    client.log_metrics(parent_id, {"baseline/attack/deep/accuracy": 0.9231, "data/amnist_test": 4681.0})
    images = torch.rand(4, 1, 28, 28)
    for alpha, lam, utility, attack, interval in TRIALS:
        run = client.create_run(exp_id, run_name=f"alpha={alpha:g} lam={lam:g} adv_steps=1",
                                tags={"mlflow.parentRunId": parent_id, tracking.TAG_PARENT: parent_id,
                                      tracking.TAG_TRIAL: f"t{lam}", tracking.TAG_ROLE: "trial",
                                      "putlab.strongest_attacker": "thickness"})
        run_id = run.info.run_id
        client.log_params(run_id, {"alpha": alpha, "lam": lam, "adv_steps": 1})
        metrics = {"utility/fresh_accuracy": utility, "attack/max/accuracy": attack, "attack/thickness/accuracy": attack,
                   "attack/deep/accuracy": attack - 0.05, "attack/yeom/advantage": 0.012, "attack/yeom/auc": 0.61,
                   "attack/yeom/tpr_at_1pct_fpr": 0.031, "attack/yeom/tpr_at_0pct_fpr": 0.0042,
                   "attack/yeom/tpr_at_0.01pct_fpr_measurable": 0.0}
        if interval:
            metrics |= {"attack/max/accuracy/ci_low": interval[0], "attack/max/accuracy/ci_high": interval[1]}
        client.log_metrics(run_id, metrics, step=4)
        with tempfile.TemporaryDirectory() as tmp:
            for epoch in (2, 4):
                save_release_grid(images, images.flip(-1), Path(tmp) / f"epoch{epoch:03d}_released.png", f"epoch {epoch}",
                                  digit_thickness(torch.tensor([7, 1, 0, 3]), torch.tensor([1, 0, 0, 1])))
            (Path(tmp) / "epoch004_roc_yeom_utility.png").write_bytes(
                roc_png(np.array([0, 0.5, 1.0]), np.array([0, 0.6, 1.0]), 0.55, "yeom utility"))
            client.log_artifacts(run_id, tmp, "figures")
        with tempfile.TemporaryDirectory() as tmp:
            for epoch in (2, 4):
                exposed = ExposedRecords("yeom", "utility", (epoch - 2, 3), (-1e-7, -2e-7), (0.0, 0.0125), (7, 1), 80)
                (Path(tmp) / f"epoch{epoch:03d}_exposed_records.csv").write_text(exposed_csv([exposed]))
                (Path(tmp) / f"epoch{epoch:03d}_exposed_yeom_utility.png").write_bytes(gallery_png(exposed, images))
            client.log_artifacts(run_id, tmp, "attacks")
        client.set_terminated(run_id, "FINISHED")
    preset = presets()["amnist"]
    publish(client, parent_id, preset)
    client.set_terminated(parent_id, "FINISHED")
    return parent_id


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[RawStore, str, str]:
    """One store with two sweeps; the tests read the first (the comparison both)."""
    uri = f"sqlite:///{tmp_path_factory.mktemp('report') / 'mlflow.db'}"
    client = RawStore.open(uri)
    parent_id = make_sweep(client, "amnist-quick-report")
    make_sweep(client, "amnist-quick-other")
    return client, uri, parent_id


def test_sweep_report_holds_front_intervals_tables_pictures_and_config(sweep) -> None:
    client, _, parent_id = sweep
    html = render_stored_sweep(client, parent_id, *summarised(client, parent_id))
    assert "http://" not in html and "https://" not in html and "<script" not in html  # self-contained
    images = re.findall(r'src="data:image/webp;base64,([^"]+)"', html)
    assert len(images) >= 2 + 3 * 2  # front + trends, per trial its released grid and its ROC curve
    assert all(base64.b64decode(i)[8:12] == b"WEBP" for i in images)  # each compacted (html_report.compact)
    assert "released (checkpoint 4)" in html and "released (checkpoint 2)" not in html  # the last checkpoint only
    assert "0.8 <span class=\"ci\">[0.77, 0.83]</span>" in html  # a front member's strongest attacker and its interval
    assert "lam=0.0001" in html and "2 of 3 trials on the front" in html
    assert html.index("alpha=2 lam=3") < html.index("alpha=10 lam=1")  # front members first
    for text in ("thickness", "yeom advantage", "attack/deep/accuracy", "0.923", "4681", "config.epochs", "quick"):
        assert text in html, text


def test_sweep_report_shows_low_fpr_columns_and_the_most_exposed_records(sweep) -> None:
    client, _, parent_id = sweep
    html = render_stored_sweep(client, parent_id, *summarised(client, parent_id))
    header = html[html.index("<th>yeom advantage</th>"):html.index("<th>wall time</th>")]
    # Membership columns per attacker in a fixed order, 0.01 % FPR among them (logged as not measurable).
    assert re.findall(r"<th>yeom (\S+)</th>", header) == [
        "advantage", "auc", "tpr_at_1pct_fpr", "tpr_at_0.01pct_fpr", "tpr_at_0pct_fpr"]
    assert html.count('<span class="ci">not measurable</span>') == 3 and "0.0042" in html
    # Per trial the last checkpoint's gallery and its records table (index and FPR), not the earlier checkpoint's.
    assert html.count("<figcaption>exposed yeom utility (checkpoint 4)</figcaption>") == 3
    assert "(checkpoint 2)" not in html
    assert html.count("#2 (0), #3 (1.2%)") == 3 and "#0 (0)" not in html


def test_each_trial_shows_its_own_files_though_their_names_are_the_same(tmp_path: Path) -> None:
    # every trial logs attacks/epoch004_exposed_records.csv: read into one folder, the last would stand for all
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    parent_id = make_sweep(client, "amnist-quick-own-files")
    preset, summary = summarised(client, parent_id)
    for record_id, run_id in enumerate(summary.trials["run_id"], start=40):
        exposed = ExposedRecords("yeom", "utility", (record_id,), (-1e-7,), (0.0,), (7,), 80)
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "epoch004_exposed_records.csv").write_text(exposed_csv([exposed]))
            client.log_artifacts(run_id, tmp, "attacks")
    names = dict(zip(summary.trials["run_id"], summary.trials["name"], strict=True))
    record = read_sweep_record(client, parent_id, names, tmp_path / "files")
    shown = {run_id: trial.exposed_csv.read_text() for run_id, trial in record.trials.items() if trial.exposed_csv}
    assert len(shown) == len(TRIALS) and len(set(shown.values())) == len(TRIALS)
    html = render_stored_sweep(client, parent_id, preset, summary)
    assert all(f"#{record_id} (0)" in html for record_id in range(40, 40 + len(TRIALS)))


def test_report_is_written_beside_the_store_and_logged_on_the_parent(sweep, tmp_path: Path) -> None:
    client, uri, parent_id = sweep
    path = write_sweep_report(client, parent_id, *summarised(client, parent_id), uri)
    store_dir = Path(uri.removeprefix("sqlite:///")).parent
    assert path == report_dir(uri) / "amnist-quick-report.html" == store_dir / "reports" / "amnist-quick-report.html"
    logged = client.download_artifacts(parent_id, "report/report.html", str(tmp_path))
    assert Path(logged).read_text() == path.read_text()


def test_comparison_report_has_every_sweep(sweep, capsys) -> None:
    _, uri, _ = sweep
    assert compare(["amnist-quick-report", "amnist-quick-other", "--tracking-uri", uri]) == 0
    printed = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("report: "))
    path = Path(printed.removeprefix("report: "))
    html = path.read_text()
    assert path.parent == report_dir(uri) and html.count("front members") == 2
    assert "amnist-quick-other" in html and "[0.59, 0.65]" in html


@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)")
def test_report_renders_in_headless_chromium(sweep, tmp_path: Path) -> None:
    client, uri, parent_id = sweep
    shot = _screenshot_module()
    report = write_sweep_report(client, parent_id, *summarised(client, parent_id), uri)
    png = shot.screenshot(report, tmp_path / "report.png", height=1400)
    assert png.stat().st_size > 20_000 and not shot.blank(png)
    blank = tmp_path / "blank.html"
    blank.write_text("<html><body></body></html>")
    assert shot.blank(shot.screenshot(blank, tmp_path / "blank.png", height=400))  # the check can fail


def test_a_multi_seed_reports_front_is_the_stored_front_of_points(tmp_path: Path) -> None:
    """Two seeds per point: the report marks a trial on the front when its point's mean is (as the parent's front.csv
    and the trials' front tags say), not when the trial alone would be. Per trial, all four are on the front here."""
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    parent_id, _ = client.start_parent(exp_id, "amnist-seeds", {"preset": "amnist", "profile": "quick"})
    # λ = 0: (0.9, 0.9) and (0.7, 0.7), mean (0.8, 0.8); λ = 1: (0.8, 0.75) twice, which dominates that mean
    for lam, seed, utility, attack in ((0.0, 0, 0.9, 0.9), (0.0, 1, 0.7, 0.7), (1.0, 0, 0.8, 0.75), (1.0, 1, 0.8, 0.75)):
        run = client.create_run(exp_id, run_name=f"alpha=1 lam={lam:g} adv_steps=1 seed={seed}",
                                tags={"mlflow.parentRunId": parent_id, tracking.TAG_PARENT: parent_id,
                                      tracking.TAG_TRIAL: f"t{lam}-{seed}", tracking.TAG_ROLE: "trial"})
        client.log_params(run.info.run_id, {"alpha": 1.0, "lam": lam, "adv_steps": 1, "seed": seed})
        client.log_metrics(run.info.run_id, {"utility/fresh_accuracy": utility, "attack/max/accuracy": attack})
        client.set_terminated(run.info.run_id, "FINISHED")
    summary = publish(client, parent_id, presets()["amnist"])

    front = pd.read_csv(client.download_artifacts(parent_id, "front/front.csv", str(tmp_path)))
    assert list(front["lam"]) == [1.0] and client.get_run(parent_id).data.metrics["front/size"] == 1
    html = render_stored_sweep(client, parent_id, *summarised(client, parent_id))
    starred = set(re.findall(r'<tr class="front"><td class="text">★ ([^<]+)</td>', html))
    tagged = {r.info.run_name for r in client.child_runs(exp_id, parent_id)
              if r.data.tags.get(tracking.TAG_FRONT) == "true"}
    assert starred == tagged == {"alpha=1 lam=1 adv_steps=1 seed=0", "alpha=1 lam=1 adv_steps=1 seed=1"}
    assert "2 of 4 trials on the front" in html and int(summary.front.sum()) == 2


def test_dp_trials_show_the_claimed_epsilon_beside_the_audits_lower_bound(sweep, tmp_path: Path) -> None:
    """A DP trial's row holds its accountant's ε and the one-run audit's lower bound; a sweep without DP has neither."""
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    parent_id, _ = client.start_parent(exp_id, "amnist-dp", {"preset": "amnist", "profile": "quick"})
    for lam, claimed, lower in ((0.0, 1.0, 0.09), (1.0, 1.0, 3.49)):  # the second: a broken claim the audit catches
        run = client.create_run(exp_id, run_name=f"alpha=1 lam={lam:g} adv_steps=1",
                                tags={"mlflow.parentRunId": parent_id, tracking.TAG_PARENT: parent_id,
                                      tracking.TAG_TRIAL: f"t{lam}", tracking.TAG_ROLE: "trial"})
        client.log_params(run.info.run_id, {"alpha": 1.0, "lam": lam, "adv_steps": 1})
        client.log_metrics(run.info.run_id, {"utility/fresh_accuracy": 0.9 - lam / 10, "attack/max/accuracy": 0.7,
                                                       "leakage/dp/epsilon": claimed, "leakage/dp/epsilon_lower": lower})
        client.set_terminated(run.info.run_id, "FINISHED")
    publish(client, parent_id, presets()["amnist"])
    html = render_stored_sweep(client, parent_id, *summarised(client, parent_id))
    header = html[html.index("<th>ε claimed (accountant)</th>"):html.index("<th>wall time</th>")]
    assert "<th>ε lower bound (audit)</th>" in header
    for lam, cells in (("0", r"<td>1</td>\s*<td>0.09</td>"), ("1", r"<td>1</td>\s*<td>3.49</td>")):
        row = html[html.index(f"lam={lam} adv_steps=1</td>"):]
        assert re.search(cells, row[:row.index("</tr>")]), lam
    client_plain, _, plain_id = sweep
    assert "ε claimed" not in render_stored_sweep(client_plain, plain_id, *summarised(client_plain, plain_id))


def test_registered_points_show_their_audit_verdict(sweep) -> None:
    """A version registered from a trial of the sweep shows its latest audit; one not yet audited says so."""
    client, _, parent_id = sweep
    trials = {r.info.run_name: r.info.run_id for r in client.child_runs(
        client.get_run(parent_id).info.experiment_id, parent_id)}
    client.create_registered_model("putlab-amnist")
    audited = client.create_model_version("putlab-amnist", "runs:/x/point", run_id=trials["alpha=2 lam=3 adv_steps=1"])
    client.create_model_version("putlab-amnist", "runs:/x/point", run_id=trials["alpha=2 lam=0.0001 adv_steps=1"])
    for key, value in {"audit": "failed", "audit/date": "2026-11-26", "audit/attack_accuracy": "1 [0.985, 1]",
                       "audit/recorded": "0.62 [0.59, 0.65]"}.items():
        client.set_model_version_tag("putlab-amnist", audited.version, key, value)
    html = render_stored_sweep(client, parent_id, *summarised(client, parent_id))
    section = html[html.index("Registered operating points and their audits"):]
    rows = re.findall(r"<tr><td class=\"text\">(putlab-amnist/\d)</td><td class=\"text\">([^<]+)</td>\s*"
                      r"<td class=\"text\">([^<]+)</td>", section)
    assert rows == [("putlab-amnist/1", "alpha=2 lam=3 adv_steps=1", "⚠ failed"),
                    ("putlab-amnist/2", "alpha=2 lam=0.0001 adv_steps=1", "not audited")]
    assert "1 [0.985, 1]" in section and "0.62 [0.59, 0.65]" in section


def test_a_resumed_sweeps_header_gives_its_minutes_of_work_beside_its_span(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    parent_id = make_sweep(client, "amnist-quick-resumed")
    html = render_stored_sweep(client, parent_id, *summarised(client, parent_id))
    assert "worked" not in html.split("trials finished")[0]  # never paused: its span is its working time
    start = client.get_run(parent_id).info.start_time
    client.set_terminated(parent_id, "FINISHED", end_time=start + 86_400_000)  # a day from start to end
    client.log_metric(parent_id, tracking.ACTIVE_MINUTES, 10.5)  # of which it worked 10.5 minutes
    html = render_stored_sweep(client, parent_id, *summarised(client, parent_id))
    assert "worked 10:30 (span 24:00:00, pauses included)" in html

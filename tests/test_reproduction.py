"""The reproduction report: measures on hand-made trial tables, verdicts, the rendered Markdown, and (slow) the whole
command over a real sweep."""
from __future__ import annotations

import math
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from platform.papers.catalogue import CLAIMS, PAPERS, STUDIES
from platform.papers.claim import Claim
from platform.papers.measures import (
    BestUnder,
    Difference,
    Drop,
    Measured,
    ParentMetric,
    PointMetric,
    StudyRuns,
    Trend,
)
from platform.papers.report import evaluate, render, verdict
from platform.reproduction import copy_figures
from platform.results import tracking

REPO = Path(__file__).resolve().parents[1]


def runs(trials: pd.DataFrame, parent: dict[str, float] | None = None) -> StudyRuns:
    return StudyRuns("sweep-x", "quick", parent or {}, trials, ("alpha", "lam", "seed"))


TRIALS = pd.DataFrame({
    "alpha": [1.0, 1.0, 1.0, 1.0, math.inf, math.inf],
    "lam": [0.0, 0.0, 3.0, 3.0, 3.0, 3.0],
    "seed": [0, 1, 0, 1, 0, 1],
    "utility/accuracy": [0.96, 0.94, 0.80, 0.70, 0.50, 0.60],
    "attack/max/accuracy": [0.90, 0.88, 0.62, 0.58, 0.52, 0.56],
})


def test_point_metric_is_the_mean_over_seeds_with_the_min_max_band():
    measured = PointMetric("utility/accuracy", {"alpha": 1.0, "lam": 3.0})(runs(TRIALS))
    assert measured.value == pytest.approx(0.75)
    assert (measured.low, measured.high) == (0.70, 0.80)
    assert "2 seeds" in measured.band
    assert PointMetric("utility/accuracy", {"alpha": math.inf})(runs(TRIALS)).value == pytest.approx(0.55)


def test_one_seed_takes_the_logged_interval():
    one = pd.DataFrame({"alpha": [1.0], "lam": [0.0], "seed": [0], "m": [0.7], "m/ci_low": [0.65], "m/ci_high": [0.74]})
    measured = PointMetric("m")(runs(one))
    assert (measured.value, measured.low, measured.high) == (0.7, 0.65, 0.74)
    assert str(measured) == "0.7 [0.65, 0.74]"


def test_best_under_a_budget_picks_the_point_by_its_means():
    # point means: (1, 0) utility 0.95 attack 0.89; (1, 3) 0.75 / 0.60; (inf, 3) 0.55 / 0.54
    best = BestUnder("utility/accuracy", "attack/max/accuracy", 0.6)(runs(TRIALS))
    assert best.value == pytest.approx(0.75) and "alpha = 1, lam = 3" in best.band
    lowest = BestUnder("attack/max/accuracy", "attack/max/accuracy", math.inf, higher_is_better=False)(runs(TRIALS))
    assert lowest.value == pytest.approx(0.54)
    assert math.isnan(BestUnder("utility/accuracy", "attack/max/accuracy", 0.5)(runs(TRIALS)).value)
    at_one = BestUnder("attack/max/accuracy", "attack/max/accuracy", math.inf, False, {"alpha": 1.0})(runs(TRIALS))
    assert at_one.value == pytest.approx(0.60)


def test_trend_reads_the_direction_along_an_axis():
    table = pd.DataFrame({"n": [10, 30, 100, 10, 30, 100], "seed": [0, 0, 0, 1, 1, 1],
                          "rho": [3.0, 0.3, 0.03, 2.0, 0.4, 0.02]})
    measured = Trend("rho", "n", -1)(StudyRuns("s", "p", {}, table, ("n", "seed")))
    assert measured.value == pytest.approx(-1.0) and measured.text.startswith("falls")
    claim = Claim("membership", "Fig. 1", "", "falls with n", "adult-n", Trend("rho", "n", -1))
    assert verdict(claim, measured) == "agrees"
    assert verdict(Claim("membership", "", "", "", "adult-n", Trend("rho", "n", 1)), measured) == "differs"


def test_verdict_against_the_papers_number_uses_tolerance_or_band():
    claim = Claim("alpha-mi", "", "", "91.5 %", "amnist", ParentMetric("x"), target=0.915, tolerance=0.01)
    assert verdict(claim, Measured(0.91)) == "agrees"
    assert verdict(claim, Measured(0.85, 0.80, 0.90)) == "differs"
    assert verdict(claim, Measured(0.85, 0.80, 0.91)) == "agrees"  # the band reaches the paper's number
    assert verdict(claim, Measured(math.nan, text="not run")) == "—"
    nowhere = BestUnder("utility/accuracy", "attack/max/accuracy", 0.5)(runs(TRIALS))  # every attacker reads > 0.5
    assert math.isnan(nowhere.value) and verdict(claim, nowhere) == "differs"  # the paper's point is not reached


def test_every_claim_names_a_known_paper_and_study():
    studies = {s.key for s in STUDIES}
    assert all(c.paper in {p.key for p in PAPERS} and c.study in studies for c in CLAIMS)
    assert len(studies) == len(STUDIES)


def test_render_lists_every_claim_and_says_which_studies_did_not_run(tmp_path):
    found = {"amnist": runs(TRIALS, {"baseline/utility/accuracy": 0.96})}
    rows = evaluate(CLAIMS, found)
    text = render(rows, found, {}, tmp_path / "reproduction.md")
    assert text.count("\n| ") >= len(CLAIMS) + len(STUDIES)
    assert "not run" in text and "`python -m platform.sweep amnist" in text
    row = next(r for r in rows if r.claim.measure == ParentMetric("baseline/utility/accuracy"))
    assert row.measured.value == 0.96 and row.verdict == "differs"


def test_the_studies_table_marks_a_sweep_on_synthetic_data(tmp_path):
    synthetic = StudyRuns("eco-1", "quick", {"data/synthetic": 1.0}, TRIALS, ("alpha", "lam", "seed"), dataset="eco")
    real = StudyRuns("eco-2", "quick", {"data/synthetic": 0.0}, TRIALS, ("alpha", "lam", "seed"), dataset="eco")
    assert synthetic.data == "eco (synthetic stand-in)" and real.data == "eco"
    text = render(evaluate(CLAIMS, {"eco": synthetic}), {"eco": synthetic}, {}, tmp_path / "reproduction.md")
    assert "| eco-1 | quick | 2 | 6 of 0 | eco (synthetic stand-in) |" in text


@pytest.mark.slow
def test_the_command_writes_the_report_from_a_real_sweep(tmp_path):
    """A real (smoke) GMM sweep into the study's experiment, then the report: its row is measured, its figures copied."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    sweep = [sys.executable, "-m", "platform.sweep", "gmm", "--profile", "smoke", "--experiment", "repro-gmm",
             "--tracking-uri", uri, "--storage", str(tmp_path / "runs")]
    subprocess.run(sweep, cwd=REPO, env=env, check=True, capture_output=True, timeout=600)
    out = tmp_path / "docs" / "reproduction.md"
    out.parent.mkdir()  # the command writes into an existing folder (a missing one is refused, as for every --out)
    done = subprocess.run([sys.executable, "-m", "platform.reproduction", "--tracking-uri", uri, "--out", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "gmm-smoke-" in text and "(tmp)" not in text
    assert (tmp_path / "docs" / "reproduction" / "gmm" / "front.png").exists()
    assert "](reproduction/gmm/front.png)" in text
    bad = subprocess.run([sys.executable, "-m", "platform.reproduction", "--tracking-uri", uri, "--only", "nope"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip() == "error: unknown study nope; known: " + ", ".join(
        s.key for s in STUDIES)


def test_difference_drop_and_more_than_claims():
    table = TRIALS.assign(**{"noise/attack": [0.95, 0.9, 0.7, 0.6, 0.5, 0.6]})
    diff = Difference("attack/max/accuracy", "noise/attack", -1)(runs(table))
    assert diff.value == pytest.approx((-0.05 - 0.02 - 0.08 - 0.02 + 0.02 - 0.04) / 6)
    cloak_ahead = Claim("cloak", "", "", "", "cloak", Difference("attack/max/accuracy", "noise/attack", -1))
    assert (diff.low, diff.high) == pytest.approx((-0.08, 0.02))
    assert verdict(cloak_ahead, diff) == "mixed"  # behind noise at the (inf, 3, seed 0) trial
    assert verdict(cloak_ahead, Measured(-0.03, -0.08, -0.01)) == "agrees"
    assert verdict(cloak_ahead, Measured(0.03, 0.01, 0.08)) == "differs"
    # lowest attacker mean where utility ≤ 0.8: the (inf, 3) point at 0.54 (band 0.52–0.56); raw 0.9
    drop = Drop("attack/max/accuracy", "raw", "utility/accuracy", 0.8)(runs(TRIALS, {"raw": 0.9}))
    assert (drop.value, drop.low, drop.high) == pytest.approx((0.36, 0.34, 0.38))
    more = Claim("alpha-mi", "", "", "> 26 points", "eco", ParentMetric("raw"), 0.37, direction="above")
    assert verdict(more, drop) == "agrees"  # the band reaches 0.38
    assert verdict(more, Measured(0.30, 0.28, 0.33)) == "differs"
    chosen = BestUnder("utility/accuracy", "attack/max/accuracy", 0.6, report="attack/max/accuracy")(runs(TRIALS))
    assert chosen.value == pytest.approx(0.60)  # the attacker's reading at the best-utility point (1, 3)


def test_two_points_are_no_trend():
    # two nearly equal points once read as a perfect "falls" (Spearman −1); a trend needs three
    table = pd.DataFrame({"alpha": [0.0, 0.5], "seed": [0, 0], "attack": [0.9392, 0.9388]})
    measured = Trend("attack", "alpha", -1)(StudyRuns("s", "p", {}, table, ("alpha", "seed")))
    assert math.isnan(measured.value) and "too few points" in measured.text
    assert verdict(Claim("privatizer", "", "", "", "privatizer", Trend("attack", "alpha", -1)), measured) == "—"


def test_report_copies_the_front_figures_and_each_front_trials_last_release(tmp_path: Path) -> None:
    client = tracking.connect(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = tracking.experiment_id(client, "repro-amnist")
    parent = client.create_run(exp_id, run_name="sweep", tags={tracking.TAG_ROLE: "sweep"}).info.run_id
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "front.png").write_bytes(b"front")
        client.log_artifacts(parent, tmp, "front")
    for name, on_front in (("alpha=1 lam=30", "true"), ("alpha=1 lam=0", "false")):
        trial = client.create_run(exp_id, run_name=name, tags={tracking.TAG_PARENT: parent, tracking.TAG_FRONT: on_front})
        with tempfile.TemporaryDirectory() as tmp:
            for epoch in (2, 4):
                (Path(tmp) / f"epoch{epoch:03d}_released.png").write_bytes(f"{name} {epoch}".encode())
            client.log_artifacts(trial.info.run_id, tmp, "figures")
    study = next(s for s in STUDIES if s.key == "amnist")
    copied = copy_figures(client, parent, study, tmp_path / "out")
    assert [p.name for p in copied] == ["front.png", "released_alpha=1_lam=30.png"]  # front trials only
    assert copied[1].read_bytes() == b"alpha=1 lam=30 4"  # the last checkpoint's release

"""The reproduction report: measures on hand-made trial tables, verdicts, the rendered Markdown, and (slow) the whole
command over a real sweep."""
from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from stores import RawStore

from platform.papers import snapshot
from platform.papers.catalogue import CLAIMS, PAPERS, STUDIES
from platform.papers.claim import EXACT, LEVEL, OWN, SANITY, Claim, Study
from platform.papers.collapse import Release
from platform.papers.markdown import render, studies_table, tally
from platform.papers.measures import AgainstBaseline, BestUnder, Difference, Drop, ParentMetric, PointMetric, Trend
from platform.papers.membership import WithinBound
from platform.papers.parts import join
from platform.papers.privatizer import BoundMargin, OverTrials
from platform.papers.statistics import Measured, equivalence_p, paired
from platform.papers.study_runs import Part, StudyRuns
from platform.papers.verdicts import Row, evaluate, verdict
from platform.reproduction import (
    copy_figures,
    draw_joined,
    figures_parent,
    finished_trials,
    joins,
    plan_drift,
    plan_drifts,
    published,
    rejoined,
)
from platform.results import tracking
from search_spaces import presets

REPO = Path(__file__).resolve().parents[1]


def runs(trials: pd.DataFrame, parent: dict[str, float] | None = None) -> StudyRuns:
    return StudyRuns("sweep-x", "quick", parent or {}, trials, ("alpha", "lam", "seed"), dataset="amnist")


def t_band(values: list[float]) -> tuple[float, float]:
    """The Student t 95 % interval of the mean, by hand: mean ± t(0.975, n − 1) · s / √n."""
    x = np.asarray(values)
    half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
    return x.mean() - half, x.mean() + half


TRIALS = pd.DataFrame({
    "alpha": [1.0, 1.0, 1.0, 1.0, math.inf, math.inf],
    "lam": [0.0, 0.0, 3.0, 3.0, 3.0, 3.0],
    "seed": [0, 1, 0, 1, 0, 1],
    "utility/accuracy": [0.96, 0.94, 0.80, 0.70, 0.50, 0.60],
    "attack/max/accuracy": [0.90, 0.88, 0.62, 0.58, 0.52, 0.56],
})


def test_point_metric_is_the_mean_over_seeds_with_its_t_interval():
    measured = PointMetric("utility/accuracy", {"alpha": 1.0, "lam": 3.0})(runs(TRIALS))
    assert measured.value == pytest.approx(0.75)
    # 0.75 ± 12.706 · 0.0707 / √2: two seeds say almost nothing, and an accuracy's interval stops at 1
    assert t_band([0.80, 0.70]) == pytest.approx((0.1147, 1.3853), abs=1e-4)
    assert (measured.low, measured.high) == pytest.approx((t_band([0.80, 0.70])[0], 1.0))
    assert "2 seeds" in measured.band and "cut to [0, 1]" in measured.band
    assert measured.seeds == 2 and measured.groups == ((0.80, 0.70),)
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



def test_best_under_a_budget_at_a_setting_no_trial_ran_is_not_measured_and_gets_no_verdict():
    claim = Claim("alpha-mi", "Fig. 3", "α = 5", "x", "amnist", BestUnder("utility/accuracy", "attack/max/accuracy",
                                                                           0.6, where={"alpha": 5.0}), target=0.9)
    measured = claim.measure(runs(TRIALS))  # a study stopped before any α = 5 trial: nothing reached, nothing missed
    assert measured.text == "not measured" and not measured.unreached
    assert verdict(claim, measured, runs(TRIALS)) == "—"
    three = runs(pd.concat([TRIALS, TRIALS[TRIALS["seed"] == 0].assign(seed=2)], ignore_index=True))
    reached_nowhere = BestUnder("utility/accuracy", "attack/max/accuracy", 0.5)(three)  # ran, and no point reaches it
    assert reached_nowhere.unreached and verdict(claim, reached_nowhere, three) == "not reached"

def test_trend_reads_the_direction_along_an_axis():
    table = pd.DataFrame({"n": [10, 30, 100, 10, 30, 100], "seed": [0, 0, 0, 1, 1, 1],
                          "rho": [3.0, 0.3, 0.03, 2.0, 0.4, 0.02]})
    measured = Trend("rho", "n", -1)(StudyRuns("s", "p", {}, table, ("n", "seed")))
    rho, p = stats.spearmanr(table["n"], table["rho"])  # every trial, not the per-point means
    assert measured.value == pytest.approx(rho) and measured.p_value == pytest.approx(p)
    assert measured.text.startswith("falls") and "Spearman" in measured.statistic


def seeded(values: np.ndarray, axis: list[float]) -> StudyRuns:
    """A study of len(axis) points × len(values) // len(axis) seeds with the given per-trial values."""
    seeds = len(values) // len(axis)
    table = pd.DataFrame({"n": axis * seeds, "seed": np.repeat(np.arange(seeds), len(axis)), "rho": values})
    return StudyRuns("s", "p", {}, table, ("n", "seed"), dataset="adult")


FALLS = Claim("membership", "Fig. 2", "", "falls with n", "adult-n", Trend("rho", "n", -1))


def test_a_random_trend_over_three_seeds_does_not_agree_and_a_real_one_does():
    rng = np.random.default_rng(0)
    axis = [10.0, 30.0, 100.0, 300.0, 1000.0]
    noise = seeded(rng.normal(size=15), axis)
    noisy = [verdict(FALLS, FALLS.measure(seeded(rng.normal(size=15), axis)), noise) for _ in range(40)]
    assert noisy.count("agrees") <= 4  # a test at α = 0.05 (sign-only agrees about half the time)
    assert noisy.count("inconclusive") >= 30
    real = seeded(np.array([3.0, 1.0, 0.3, 0.1, 0.03] * 3) * rng.uniform(0.8, 1.2, 15), axis)
    assert verdict(FALLS, FALLS.measure(real), real) == "agrees"
    rising = Claim("membership", "", "", "rises", "adult-n", Trend("rho", "n", 1))
    assert verdict(rising, rising.measure(real), real) == "differs"  # significant, the other way


def test_a_reading_every_trial_gives_alike_measures_nothing():
    flat = seeded(np.full(15, 0.5), [10.0, 30.0, 100.0, 300.0, 1000.0])  # e.g. an attacker at exactly 0.5 everywhere
    measured = FALLS.measure(flat)
    assert math.isnan(measured.value) and measured.text == "every trial reads 0.5: no measurement"
    assert verdict(FALLS, measured, flat) == "—"
    level = seeded(np.array([0.5, 0.52, 0.49] * 5), [10.0, 30.0, 100.0, 300.0, 1000.0])  # scattered: a measurement
    assert verdict(FALLS, FALLS.measure(level), level) == "inconclusive"


def test_a_direction_needs_three_seeds():
    one = seeded(np.array([3.0, 1.0, 0.3, 0.1, 0.03]), [10.0, 30.0, 100.0, 300.0, 1000.0])
    measured = FALLS.measure(one)
    assert measured.p_value < 0.05  # a perfect monotone trend over 5 points
    assert verdict(FALLS, measured, one) == "too few seeds"


def test_a_stand_in_row_never_agrees():
    axis = [10.0, 30.0, 100.0, 300.0, 1000.0]
    table = seeded(np.array([3.0, 1.0, 0.3, 0.1, 0.03] * 3), axis).trials
    synthetic = StudyRuns("s", "p", {"data/synthetic": 1.0}, table, ("n", "seed"), dataset="eco")
    assert verdict(FALLS, FALLS.measure(synthetic), synthetic) == "stand-in"
    value = Claim("alpha-mi", "", "", "57.8 %", "eco-si", ParentMetric("x"), target=0.578)
    assert verdict(value, Measured(0.578, 0.57, 0.59), synthetic) == "stand-in"


def test_own_rows_carry_no_verdict_and_sanity_rows_say_so():
    own = Claim("privatizer", "", "", "—", "gmm", ParentMetric("x"), target=0.5, kind=OWN)
    assert verdict(own, Measured(0.5, 0.4, 0.6), runs(TRIALS)) == "putlab's own"
    identity = Claim("privatizer", "", "", "gap 0", "gmm", ParentMetric("x"), target=0.0, kind=SANITY)
    assert verdict(identity, Measured(0.01, -0.02, 0.03), runs(TRIALS)) == "sanity check: holds"
    assert verdict(identity, Measured(0.1, 0.08, 0.12), runs(TRIALS)) == "sanity check: FAILS"
    assert verdict(identity, Measured(-1.1e-16), runs(TRIALS)) == "sanity check: holds"  # an identity up to rounding
    assert verdict(identity, Measured(0.1), runs(TRIALS)) == "sanity check: FAILS"
    bound = Claim("privatizer", "", "", "≥ 0", "gmm", ParentMetric("x"), target=0.0, direction="above", kind=SANITY)
    assert verdict(bound, Measured(-1.5e-5, -2.8e-4, 5.9e-5), runs(TRIALS)) == "sanity check: holds"  # 0 within noise
    assert verdict(bound, Measured(-0.01, -0.02, -0.005), runs(TRIALS)) == "sanity check: FAILS"  # wholly below


def test_a_value_agrees_only_inside_the_band_or_interval():
    claim = Claim("alpha-mi", "", "", "91.5 %", "amnist", ParentMetric("x"), target=0.915)
    assert verdict(claim, Measured(0.91), runs(TRIALS)) == "no band"  # one seed, no interval: no verdict
    assert verdict(claim, Measured(0.91, 0.90, 0.914), runs(TRIALS)) == "differs"  # close is not inside
    assert verdict(claim, Measured(0.85, 0.80, 0.915), runs(TRIALS)) == "agrees"
    assert verdict(claim, Measured(math.nan, text="not run"), None) == "not run"
    assert verdict(claim, Measured(math.nan, text="not measured"), runs(TRIALS)) == "—"
    three = runs(pd.concat([TRIALS, TRIALS.assign(seed=2)], ignore_index=True))
    nowhere = BestUnder("utility/accuracy", "attack/max/accuracy", 0.5)(three)  # every attacker reads > 0.5
    assert math.isnan(nowhere.value) and verdict(claim, nowhere, three) == "not reached"  # never "differs"
    assert verdict(claim, BestUnder("utility/accuracy", "attack/max/accuracy", 0.5)(runs(TRIALS)),
                   runs(TRIALS)) == "too few seeds"  # two seeds settle nothing, not even an unreached point
    above = Claim("alpha-mi", "", "", "> 90 %", "eco", ParentMetric("x"), target=0.9, direction="above")
    assert verdict(above, Measured(0.95, 0.92, 0.97), runs(TRIALS)) == "agrees"
    assert verdict(above, Measured(0.91, 0.88, 0.93), runs(TRIALS)) == "inconclusive"  # the band straddles it
    assert verdict(above, Measured(0.85, 0.82, 0.88), runs(TRIALS)) == "differs"


def test_every_claim_names_a_known_paper_and_study():
    studies = {s.key for s in STUDIES}
    assert all(c.paper in {p.key for p in PAPERS} and (c.study in studies or (c.needs and not c.study)) for c in CLAIMS)
    assert len(studies) == len(STUDIES)


def test_render_lists_every_claim_and_says_which_studies_did_not_run(tmp_path):
    parent = {"baseline/utility/accuracy": 0.96, "baseline/utility/accuracy/ci_low": 0.95,
              "baseline/utility/accuracy/ci_high": 0.97}
    found = {"amnist-scale": runs(TRIALS, parent)}
    rows = evaluate(CLAIMS, found)
    text = render(rows, found, {}, tmp_path / "reproduction.md")
    assert text.count("\n| ") >= len(CLAIMS) + len(STUDIES)
    assert "not run" in text and "`python -m platform.sweep amnist" in text
    row = next(r for r in rows if r.claim.measure == ParentMetric("baseline/utility/accuracy"))
    assert row.measured.value == 0.96 and row.verdict == "differs"  # 97.25 % lies outside [0.95, 0.97]
    assert f"**{len(CLAIMS)} rows**" in text


def test_every_row_shows_its_data_scale_and_caveat_whatever_the_verdict(tmp_path):
    claim = Claim("alpha-mi", "Fig. 9", "n = 5", "50 %", "amnist", ParentMetric("x"), 0.5, caveat="a smaller net",
                  substitute="AMNIST subset")
    study = StudyRuns("amnist-1", "quick", {"x": 0.5, "x/ci_low": 0.45, "x/ci_high": 0.55}, TRIALS,
                      ("alpha", "lam", "seed"), dataset="amnist", config={"n_train": "2000", "epochs": "4"})
    rows = evaluate([claim], {"amnist": study})
    assert rows[0].verdict == "substitute: no verdict"  # inside the interval, on another quantity than the paper's
    assert evaluate([replace(claim, substitute="")], {"amnist": study})[0].verdict == "agrees"
    text = render(rows, {"amnist": study}, {}, tmp_path / "reproduction.md")
    line = next(x for x in text.splitlines() if x.startswith("| 1 | Fig. 9"))
    assert "substitute: AMNIST subset" in line and "2,000 records, 4 epochs, 6 trials (3 points × 2 seeds)" in line
    assert "1. `x` (sweep) (amnist). a smaller net" in text  # the caveat of an agreeing row is printed too


def test_the_studies_table_marks_a_sweep_on_synthetic_data(tmp_path):
    synthetic = StudyRuns("eco-1", "quick", {"data/synthetic": 1.0}, TRIALS, ("alpha", "lam", "seed"), dataset="eco",
                          started="2026-11-26 02:00", minutes=12.4, machine="1 node, 2 CPUs, no GPU")
    real = StudyRuns("eco-2", "quick", {"data/synthetic": 0.0}, TRIALS, ("alpha", "lam", "seed"), dataset="eco")
    assert synthetic.data == "eco (synthetic stand-in)" and real.data == "eco"
    text = render(evaluate(CLAIMS, {"eco": synthetic}), {"eco": synthetic}, {}, tmp_path / "reproduction.md")
    assert ("| eco | eco-1 | 2026-11-26 02:00 | 1 node, 2 CPUs, no GPU | 12 | 6 trials (3 points × 2 seeds) | "
            "eco (synthetic stand-in) | none |") in text


def test_a_snapshot_gives_back_the_study(tmp_path):
    noise = pd.DataFrame({"sigma": [0.1, 1.0], "seed": [0, 0], "u": [0.9, 0.5]})
    study = StudyRuns("amnist-1", "quick", {"x": 0.5}, TRIALS, ("alpha", "lam", "seed"), "FINISHED", 6, "amnist",
                      {"n_train": "2000"}, "2026-11-26 02:00", 12.5, "1 node, 2 CPUs, no GPU", noise)
    snapshot.save(study, tmp_path / "amnist")
    back = snapshot.load(tmp_path / "amnist")
    assert back is not None and back.trials.equals(TRIALS) and back.baseline.equals(noise)  # ∞ survives the CSV
    same = {"trials": TRIALS, "baseline": noise}
    assert dataclasses.replace(back, **same) == dataclasses.replace(study, **same)
    assert snapshot.load(tmp_path / "none") is None


@pytest.mark.slow
def test_the_command_writes_the_report_from_real_sweeps_and_joins_a_study_run_in_parts(tmp_path):
    """A real (smoke) GMM sweep into the study's experiment, then the report: its row is measured, its figures copied.
    A second sweep at another seed: the report joins the two (both parts named with their seeds, both seeds' trials
    read, the front drawn again), and without the store its snapshot gives the same studies line."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    out = tmp_path / "docs" / "reproduction.md"
    out.parent.mkdir()  # the command writes into an existing folder (a missing one is refused, as for every --out)
    report = [sys.executable, "-m", "platform.reproduction", "--out", str(out)]

    def sweep(seed: int) -> None:
        subprocess.run([sys.executable, "-m", "platform.sweep", "gmm", "--profile", "smoke", "--set", f"seed={seed}",
                        "--experiment", "repro-gmm", "--tracking-uri", uri, "--storage", str(tmp_path / "runs")],
                       cwd=REPO, env=env, check=True, capture_output=True, timeout=600)

    sweep(0)
    done = subprocess.run([*report, "--tracking-uri", uri], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "gmm-smoke-" in text and "(tmp)" not in text
    client = RawStore.open(uri)
    first = client.search_runs([client.get_experiment_by_name("repro-gmm").experiment_id],
                               filter_string=f"tags.`{tracking.TAG_ROLE}` = 'sweep'")[0].info.run_id
    copied = out.parent / "reproduction" / "gmm" / "front.png"
    assert copied.read_bytes() == Path(client.download_artifacts(first, "front/front.png", str(tmp_path))).read_bytes()
    assert "](reproduction/gmm/front.png)" in text
    bad = subprocess.run([*report, "--tracking-uri", uri, "--only", "nope"], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip() == "error: unknown study nope; known: " + ", ".join(
        s.key for s in STUDIES)

    sweep(1)
    done = subprocess.run([*report, "--tracking-uri", uri], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    line = next(x for x in out.read_text().splitlines() if x.startswith("| gmm |"))
    assert line.count("gmm-smoke-") == 2 and "(seed 0) + gmm-smoke-" in line and line.count("(seed 1)") == 1
    newest = client.search_runs([client.get_experiment_by_name("repro-gmm").experiment_id],
                                filter_string=f"tags.`{tracking.TAG_ROLE}` = 'sweep'",
                                order_by=["attributes.start_time DESC"])[0].info.run_id
    (tmp_path / "part").mkdir()
    part_front = Path(client.download_artifacts(newest, "front/front.png", str(tmp_path / "part")))
    assert copied.read_bytes() != part_front.read_bytes()  # drawn again over both seeds
    kept = snapshot.load(out.parent / "reproduction" / "gmm")
    assert kept is not None and sorted(kept.trials["seed"].unique()) == [0, 1] and len(kept.parts) == 2
    (tmp_path / "mlflow.db").unlink()
    again = subprocess.run([*report, "--snapshots"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert line in out.read_text().splitlines()


def test_a_sweep_stopped_before_its_front_has_its_front_and_trends_drawn_from_its_trials(tmp_path):
    """What a stopped sweep left (a trial's released images, a stale trends figure) is kept or drawn again: the front
    and the trends come from the trials, over their seeds."""
    trials = TRIALS.rename(columns={"utility/accuracy": "utility/fresh_accuracy"}).assign(
        status="FINISHED", name=[f"trial {i}" for i in range(len(TRIALS))])  # as a sweep's table reads
    released, stale = tmp_path / "released_x.png", tmp_path / "trends.png"
    released.write_bytes(b"the trial's figure")
    stale.write_bytes(b"a part's trends")
    drawn = draw_joined(runs(trials), presets()["amnist"], tmp_path, [released, stale])
    assert drawn == sorted([released, stale, *(tmp_path / f"front{part}.png" for part in ("", "_by_alpha"))])
    assert released.read_bytes() == b"the trial's figure"
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in drawn if p != released)


def test_a_trial_the_farm_did_not_read_has_not_finished():
    table = pd.DataFrame({"status": ["FINISHED", "FINISHED", "KILLED"], "lam": [0.0, 30.0, 100.0],
                          "attack/max/accuracy": [0.9, math.nan, 0.7]})
    assert finished_trials(table)["lam"].tolist() == [0.0]  # lam=30's attacks were cancelled; lam=100 was stopped
    no_farm = table.drop(columns="attack/max/accuracy")  # a sweep without a farm: its finished trials all count
    assert finished_trials(no_farm)["lam"].tolist() == [0.0, 30.0]


def test_difference_drop_and_more_than_claims():
    table = TRIALS.assign(**{"noise/attack": [0.95, 0.9, 0.7, 0.6, 0.5, 0.6]})
    diff = Difference("attack/max/accuracy", "noise/attack", -1)(runs(table))
    differences = table["attack/max/accuracy"] - table["noise/attack"]
    assert diff.value == pytest.approx(differences.mean())
    assert (diff.low, diff.high) == pytest.approx(t_band(list(differences)))
    assert diff.p_value == pytest.approx(stats.wilcoxon(differences).pvalue)
    ahead = Claim("cloak", "", "", "", "cloak", Difference("attack/max/accuracy", "noise/attack", -1))
    three = runs(pd.concat([table] * 2).assign(seed=[0, 1, 0, 1, 0, 1, 2, 2, 2, 2, 2, 2]))
    assert three.seeds == 3
    assert verdict(ahead, Measured(-0.03, -0.08, 0.01, p_value=0.01), three) == "agrees"
    assert verdict(ahead, Measured(0.03, -0.01, 0.08, p_value=0.01), three) == "differs"
    assert verdict(ahead, Measured(-0.03, -0.08, 0.02, p_value=0.2), three) == "inconclusive"
    # lowest attacker mean where utility ≤ 0.8: the (inf, 3) point, seeds 0.52, 0.56, 0.54; raw 0.9
    third = TRIALS[TRIALS["seed"] == 0].assign(seed=2, **{"attack/max/accuracy": [0.89, 0.6, 0.54]})
    tight = pd.concat([TRIALS, third], ignore_index=True)
    drop = Drop("attack/max/accuracy", "raw", "utility/accuracy", 0.8)(runs(tight, {"raw": 0.9}))
    low, high = t_band([0.52, 0.56, 0.54])  # 0.54 ± 4.303 · 0.02 / √3
    assert (drop.value, drop.low, drop.high) == pytest.approx((0.36, 0.9 - high, 0.9 - low))
    more = Claim("alpha-mi", "", "", "> 26 points", "eco", ParentMetric("raw"), 0.26, direction="above")
    assert verdict(more, drop, runs(tight)) == "agrees"  # the whole interval, from 0.31, clears 0.26
    assert verdict(replace(more, target=0.33), drop, runs(tight)) == "inconclusive"  # it straddles 0.33
    chosen = BestUnder("utility/accuracy", "attack/max/accuracy", 0.6, report="attack/max/accuracy")(runs(TRIALS))
    assert chosen.value == pytest.approx(0.60)  # the attacker's reading at the best-utility point (1, 3)


def test_two_points_are_no_trend():
    # two nearly equal points once read as a perfect "falls" (Spearman −1); a trend needs three
    table = pd.DataFrame({"alpha": [0.0, 0.5], "seed": [0, 0], "attack": [0.9392, 0.9388]})
    measured = Trend("attack", "alpha", -1)(StudyRuns("s", "p", {}, table, ("alpha", "seed")))
    assert math.isnan(measured.value) and "too few points" in measured.text
    two = StudyRuns("s", "p", {}, table, ("alpha", "seed"))
    assert verdict(Claim("privatizer", "", "", "", "privatizer", Trend("attack", "alpha", -1)), measured, two) == "—"


def test_report_copies_the_front_figures_and_each_front_trials_last_release(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("repro-amnist")
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
    for seed in ("1", "0"):  # the noise grid beside it, two seeds: one seed's releases are copied
        noise = client.create_run(exp_id, run_name=f"noise sigma=0.3 seed={seed}",
                                  tags={tracking.TAG_PARENT: parent, tracking.TAG_ROLE: "baseline"}).info.run_id
        client.log_param(noise, "seed", seed)
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "epoch004_released.png").write_bytes(f"noise {seed}".encode())
            client.log_artifacts(noise, tmp, "figures")
    study = next(s for s in STUDIES if s.key == "amnist")
    copied = copy_figures(client, parent, study, tmp_path / "out")
    assert [p.name for p in copied] == ["baseline_noise_sigma=0.3_seed=0.png", "front.png",
                                        "released_alpha=1_lam=30.png"]  # front trials only, seed 0's noise
    assert copied[2].read_bytes() == b"alpha=1 lam=30 4"  # the last checkpoint's release
    assert copied[0].read_bytes() == b"noise 0"


def test_a_part_that_ran_some_points_adds_its_images_to_the_snapshot_s_and_a_whole_sweep_replaces_them(
        tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("repro-amnist")
    parent = client.create_run(exp_id, run_name="part-2", tags={tracking.TAG_ROLE: "sweep"}).info.run_id
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "front.png").write_bytes(b"new front")
        client.log_artifacts(parent, tmp, "front")
    trial = client.create_run(exp_id, run_name="alpha=1 lam=30", tags={tracking.TAG_PARENT: parent,
                                                                      tracking.TAG_FRONT: "true"}).info.run_id
    with tempfile.TemporaryDirectory() as tmp:  # the part ran one point and no comparison grid
        (Path(tmp) / "epoch004_released.png").write_bytes(b"lam=30, part 2")
        client.log_artifacts(trial, tmp, "figures")
    study = next(s for s in STUDIES if s.key == "amnist")
    old = {"front.png": b"old front", "released_alpha=1_lam=0.png": b"lam=0, part 0",
           "released_alpha=1_lam=30.png": b"lam=30, part 0", "baseline_noise_sigma=0.3.png": b"noise, part 0"}

    def folder() -> Path:
        target = tmp_path / "out" / study.key
        target.mkdir(parents=True, exist_ok=True)
        for name, data in old.items():
            (target / name).write_bytes(data)
        return target

    target = folder()
    kept = copy_figures(client, parent, study, tmp_path / "out", keep=True)
    assert [p.name for p in kept] == sorted(old)  # the snapshot's other point and its noise grid stay
    assert {p.name: p.read_bytes() for p in kept} == old | {"front.png": b"new front",
                                                           "released_alpha=1_lam=30.png": b"lam=30, part 2"}
    target = folder()
    replaced = copy_figures(client, parent, study, tmp_path / "out")
    assert [p.name for p in replaced] == ["front.png", "released_alpha=1_lam=30.png"]
    assert sorted(p.name for p in target.iterdir()) == ["front.png", "released_alpha=1_lam=30.png"]

    parts = tuple(Part(f"part-{seed}", "", 1.0, "", "FINISHED", 1, (seed,), 1) for seed in range(5))
    snapshot_of_two = StudyRuns("part-0 + part-1", "quick", {}, pd.DataFrame(), parts=parts[:2])
    assert joins(StudyRuns("joined", "quick", {}, pd.DataFrame(), parts=parts[:3]), snapshot_of_two)
    rerun = StudyRuns("part-3 + part-4", "quick", {}, pd.DataFrame(), parts=parts[3:])  # every trial a newer part's
    assert not joins(rerun, snapshot_of_two)
    assert not joins(StudyRuns("part-2", "quick", {}, pd.DataFrame()), None)


def test_the_figures_come_from_the_newest_joined_part_that_published_its_front(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("repro-amnist")
    ids = {}
    for name, has_front in (("other-plan", True), ("stopped", False), ("second", True), ("first", True)):  # newest first
        ids[name] = client.create_run(exp_id, run_name=name, tags={tracking.TAG_ROLE: "sweep"}).info.run_id
        if has_front:
            with tempfile.TemporaryDirectory() as tmp:
                (Path(tmp) / "front.png").write_bytes(name.encode())
                client.log_artifacts(ids[name], tmp, "front")
    found = [(run_id, StudyRuns(name, "quick", {}, pd.DataFrame())) for name, run_id in ids.items()]
    parts = tuple(Part(name, "", 1.0, "", "FINISHED", 1, (seed,), 1)
                  for seed, name in enumerate(("first", "second", "stopped")))
    joined = StudyRuns("first + second + stopped", "quick", {}, pd.DataFrame(), parts=parts)
    assert figures_parent(client, found, joined) == (ids["second"], True)  # not the stopped part, nor a sweep not joined
    assert figures_parent(client, found[1:2], found[1][1]) == (ids["stopped"], False)  # one sweep without a front: its own
    # a stopped part alone in the store published nothing: the report keeps the snapshot's images then
    assert published(client, ids["second"]) and not published(client, ids["stopped"])


def test_against_the_baseline_each_trial_meets_its_own_seeds_curve():
    base = pd.DataFrame({"sigma": [0.1, 1.0, 0.1, 1.0], "seed": [0, 0, 1, 1], "status": ["FINISHED"] * 4,
                         "u": [0.9, 0.5, 0.95, 0.55], "a": [0.9, 0.6, 0.85, 0.55]})
    mine = pd.DataFrame({"lam": [1.0, 1.0, 0.0], "seed": [0, 1, 0], "u": [0.7, 0.75, 0.99], "a": [0.65, 0.6, 0.95]})
    study = StudyRuns("s", "p", {}, mine, ("lam", "seed"), baseline=base)
    measured = AgainstBaseline("u", "a")(study)
    # seed 0: noise reads 0.6 + 0.3 · (0.7 − 0.5) / 0.4 = 0.75 at utility 0.7; seed 1: 0.55 + 0.3 · 0.5 = 0.70 at 0.75;
    # the λ = 0 trial is more useful than any noise point and is left out
    assert (measured.value, measured.low, measured.high) == pytest.approx((-0.10, -0.10, -0.10))
    assert "over 2 trials" in measured.statistic
    pooled = StudyRuns("s", "p", {}, mine.drop(columns="seed"), ("lam",), baseline=base.drop(columns="seed"))
    assert AgainstBaseline("u", "a")(pooled).value != pytest.approx(-0.10)  # one curve over both seeds differs
    assert math.isnan(AgainstBaseline("u", "a")(runs(TRIALS)).value)  # no baseline ran


# --- verdicts a degenerate seed cannot pass -------------------------------------------------------------------------

AMNIST_LIKE = ("alpha", "lam", "seed")


def amnist_study(table: pd.DataFrame, **parent: float) -> StudyRuns:
    return StudyRuns("amnist-x", "scale", dict(parent), table, AMNIST_LIKE, dataset="amnist")


def test_a_value_agrees_inside_the_t_interval_not_inside_the_min_max_band():
    # eight seeds of one point, one of them far off: its minimum reaches 0.60, the mean's interval does not
    values = [0.90, 0.91, 0.92, 0.90, 0.91, 0.92, 0.90, 0.60]
    table = pd.DataFrame({"alpha": 1.0, "lam": 10.0, "seed": range(8), "attack/max/accuracy": values})
    measured = PointMetric("attack/max/accuracy")(amnist_study(table))
    low, high = t_band(values)  # 0.8575 ± 2.365 · 0.1073 / √8 = [0.768, 0.947]
    assert (measured.low, measured.high) == pytest.approx((low, high))
    assert min(values) < 0.65 < low  # inside the min–max band, outside the interval
    claim = Claim("alpha-mi", "", "", "65 %", "amnist", PointMetric("attack/max/accuracy"), 0.65)
    assert verdict(claim, measured, amnist_study(table)) == "differs"
    assert verdict(replace(claim, target=0.80), measured, amnist_study(table)) == "agrees"


def test_the_collapse_rule_reads_chance_from_the_data_classes():
    trials = pd.DataFrame({
        "utility/fresh_accuracy": [0.10, 0.92, 0.92, 0.105, 0.50],
        "attack/deep/accuracy": [0.50, 0.50, 0.88, 0.60, 0.70],
        "attack/thickness/accuracy": [0.50, 0.5004, 0.50, 0.60, 0.70],
        "attack/max/accuracy": [0.50, 0.50, 0.88, 0.60, 0.70],
    })
    # the digit has 10 classes (chance 0.1), thickness 2 (chance 0.5): a constant release, every attacker at chance,
    # one attacker only at chance (a raw-trained one on noise), a utility near chance (near-collapsed: below 0.19),
    # half the digits
    collapsed = Release("amnist", "utility/fresh_accuracy").collapsed(trials)
    assert collapsed.tolist() == [True, True, False, True, False]
    # Cloak's data user reads 'digit > 5' (2 classes): 0.5 is its chance (the floor 0.55), where the digits say 0.1
    assert Release("mnist32", "utility/fresh_accuracy", utility_classes=2).collapsed(trials).tolist() == [
        True, True, False, True, True]


def collapsed_study() -> tuple[StudyRuns, Study]:
    """Four seeds of one point; seed 1's release collapsed (the digit at 0.1, every attacker at 0.5)."""
    table = pd.DataFrame({"alpha": 1.0, "lam": 300.0, "seed": [0, 1, 2, 3],
                          "utility/fresh_accuracy": [0.90, 0.10, 0.91, 0.89],
                          "attack/deep/accuracy": [0.88, 0.50, 0.86, 0.87],
                          "attack/max/accuracy": [0.88, 0.50, 0.86, 0.87]})
    return amnist_study(table), Study("amnist", "amnist", release=Release("amnist", "utility/fresh_accuracy"))


def test_a_collapsed_seed_cannot_carry_a_value_into_agrees():
    study_runs, study = collapsed_study()
    claim = Claim("alpha-mi", "Fig. 3", "", "about 60 %", "amnist", PointMetric("attack/max/accuracy"), 0.6)
    with_it = claim.measure(study_runs)
    assert with_it.low == pytest.approx(t_band([0.88, 0.50, 0.86, 0.87])[0])  # 0.7775 ± 0.291: reaches 0.6
    assert verdict(claim, with_it, study_runs) == "agrees"
    row = evaluate([claim], {"amnist": study_runs}, [study])[0]
    assert row.verdict == "inconclusive (collapsed seed)"  # without seed 1: [0.845, 0.895], 0.6 outside
    assert row.collapsed == ("seed 1 at alpha = 1, lam = 300",)
    table = "\n".join(studies_table({"amnist": study_runs}, [study]))
    assert "| seed 1 at alpha = 1, lam = 300 |" in table


def test_a_collapsed_seed_the_verdict_does_not_need_is_named_but_changes_nothing():
    study_runs, study = collapsed_study()
    claim = Claim("alpha-mi", "Fig. 3", "", "about 87 %", "amnist", PointMetric("attack/max/accuracy"), 0.87)
    row = evaluate([claim], {"amnist": study_runs}, [study])[0]
    assert row.verdict == "agrees" and row.collapsed  # inside with and without seed 1
    other = Claim("alpha-mi", "", "", "", "amnist", PointMetric("attack/max/accuracy", {"lam": 10.0}), 0.87)
    assert evaluate([other], {"amnist": study_runs}, [study])[0].collapsed == ()  # a slice without it


def test_a_missing_stand_in_flag_gives_no_verdict():
    claim = Claim("alpha-mi", "", "", "57.8 %", "eco-si", ParentMetric("x"), target=0.578)
    inside = Measured(0.578, 0.57, 0.59)
    for flagless in ("eco", "", "not-a-data-set"):  # a data set with a stand-in, none named, one not registered
        unknown = StudyRuns("s", "p", {"x": 0.578}, TRIALS, AMNIST_LIKE, dataset=flagless)
        assert unknown.provenance == "unknown"
        assert verdict(claim, inside, unknown) == "no verdict: data unknown"
        assert Row(claim, inside, "", unknown).data == "unknown"
    real_files = StudyRuns("s", "p", {"data/synthetic": 0.0}, TRIALS, AMNIST_LIKE, dataset="eco")
    assert verdict(claim, inside, real_files) == "agrees"
    no_stand_in = StudyRuns("s", "p", {}, TRIALS, AMNIST_LIKE, dataset="amnist")  # its loader reads only the files
    assert no_stand_in.provenance == "real" and verdict(claim, inside, no_stand_in) == "agrees"


def test_a_study_that_did_not_run_shows_the_data_its_command_would_read():
    eco_row = next(r for r in evaluate(CLAIMS, {}) if r.claim.study == "eco")
    assert eco_row.verdict == "not run" and eco_row.data == "synthetic stand-in"
    assert next(r for r in evaluate(CLAIMS, {}) if r.claim.study == "amnist").data == "real"


def test_a_non_significant_difference_does_not_read_level():
    spread = pd.Series([-0.10, 0.08, 0.05, -0.06, 0.02, -0.03])  # mean −0.0067, no difference found, none excluded
    measured = paired(spread, pd.DataFrame({"seed": [0, 1, 2] * 2}))
    assert measured.p_value == pytest.approx(stats.wilcoxon(spread).pvalue) and measured.p_value > 0.05
    n, mean, sem = len(spread), spread.mean(), spread.std(ddof=1) / math.sqrt(len(spread))
    by_hand = max(stats.t.sf((mean + 0.02) / sem, n - 1), stats.t.cdf((mean - 0.02) / sem, n - 1))
    assert equivalence_p(spread, 0.0) == pytest.approx(by_hand) and by_hand > 0.05
    assert measured.text.endswith("neither shown different nor level")
    level = Claim("alpha-mi", "", "", "level with noise", "amnist", Difference("a", "b", -1), 0.0, direction=LEVEL)
    three = runs(pd.concat([TRIALS, TRIALS.assign(seed=2)], ignore_index=True))
    assert verdict(level, measured, three) == "inconclusive"
    tight = pd.Series([0.004, -0.003, 0.006, 0.0, -0.002, 0.003])
    shown = paired(tight, pd.DataFrame({"seed": [0, 1, 2] * 2}))
    assert shown.text.endswith("level within ±0.02") and verdict(level, shown, three) == "agrees"
    off = paired(tight + 0.1, pd.DataFrame({"seed": [0, 1, 2] * 2}))
    assert verdict(level, off, three) == "differs"  # the whole interval beyond 0.02


def test_a_level_claim_is_tested_as_a_level_not_a_trend():
    cloak = next(c for c in CLAIMS if c.study == "cloak" and "retrained on sifted" in c.setting)
    assert cloak.direction == LEVEL and cloak.target == 0.5
    lam = [1.0, 10.0, 100.0]
    table = pd.DataFrame({"lam": lam * 3, "T": 1.0, "M": 1.5, "seed": np.repeat([0, 1, 2], 3),
                          "leakage/suppression_ratio": [0.75, 0.3, 0.1] * 3,
                          "attack/deep/accuracy": [0.89, 0.91, 0.92, 0.90, 0.91, 0.92, 0.89, 0.90, 0.92]})
    study = StudyRuns("c", "quick", {}, table, ("lam", "T", "M", "seed"), dataset="mnist32")
    assert Trend("attack/deep/accuracy", "lam", 1)(study).p_value < 0.05  # the trend the row used to read "agrees"
    assert verdict(cloak, cloak.measure(study), study) == "substitute: no verdict"  # 'digit > 5' for the paper's attribute
    as_paper = replace(cloak, substitute="")
    assert verdict(as_paper, cloak.measure(study), study) == "differs"  # 0.89 at the most suppressing point: no chance


def test_a_quantity_two_rows_test_is_counted_once():
    table = seeded(np.array([3.0, 1.0, 0.3, 0.1, 0.03] * 3), [10.0, 30.0, 100.0, 300.0, 1000.0]).trials
    study = StudyRuns("s", "p", {}, table.assign(rho_median=table["rho"] / 2), ("n", "seed"), dataset="adult")
    mean = Claim("membership", "Fig. 1", "", "falls", "adult-n", Trend("rho", "n", -1), quantity="ρ_KL")
    median = replace(mean, measure=Trend("rho_median", "n", -1))
    rows = evaluate([mean, median], {"adult-n": study})
    assert [r.verdict for r in rows] == ["agrees", "counted in row 1"]
    assert tally(rows) == "**2 rows**: 1 agrees, 1 counted in row 1"
    unmeasured = replace(mean, measure=Trend("not-logged", "n", -1))  # e.g. an attacker the sweep did not run yet
    assert [r.verdict for r in evaluate([unmeasured, median], {"adult-n": study})] == ["—", "agrees"]
    named = replace(study, trials=table.assign(**{"leakage/kl/rho": table["rho"], "leakage/kl/rho/median": table["rho"]}))
    fig1 = [r for r in evaluate(CLAIMS, {"adult-n": named}) if r.claim.item == "Fig. 1" and r.claim.quantity == "ρ_KL"]
    assert [r.verdict.startswith("counted in row") for r in fig1] == [False, True]  # the paper's line, then the median


def test_no_two_rows_with_verdicts_measure_the_same_thing():
    seen: dict[tuple, str] = {}
    for claim in CLAIMS:
        if claim.kind == OWN:
            continue
        key = (claim.study, repr(claim.measure), claim.quantity)
        assert key not in seen, f"{claim.item}: {claim.setting} measures what {seen[key]} does"
        seen[key] = f"{claim.item}: {claim.setting}"


def test_the_three_seed_rule_counts_the_seeds_of_the_slice():
    # three seeds in the study, two at λ = 3: a trend along α there has two
    table = pd.DataFrame({"alpha": [0.0, 0.5, 1.0] * 4, "lam": [0.0] * 6 + [3.0] * 6,
                          "seed": [0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2], "x": [0.9, 0.6, 0.3] * 4})
    study = runs(table)
    assert study.seeds == 3
    falls = Claim("alpha-mi", "", "", "", "amnist", Trend("x", "alpha", -1, {"lam": 3.0}))
    measured = falls.measure(study)
    assert measured.seeds == 2 and measured.p_value < 0.05
    assert verdict(falls, measured, study) == "too few seeds"
    assert verdict(replace(falls, measure=Trend("x", "alpha", -1)), Trend("x", "alpha", -1)(study), study) == "agrees"


def test_a_bound_counts_only_where_it_is_informative():
    # ½√ρ at ρ's upper end: 0.5 (informative), 1.5 → clipped to 1 (vacuous), 0.1 (informative)
    table = pd.DataFrame({"n": [10, 30, 100] * 3, "seed": np.repeat([0, 1, 2], 3),
                          "attack/yeom/advantage_abs": [0.3, 0.9, 0.05] * 3,
                          "attack/yeom/advantage_abs/ci_low": [0.2, 0.8, 0.02] * 3,
                          "leakage/kl/rho": [0.9, 8.0, 0.03] * 3, "leakage/kl/rho/ci_high": [1.0, 9.0, 0.04] * 3})
    study = StudyRuns("s", "p", {}, table, ("n", "seed"), dataset="adult")
    measured = WithinBound()(study)
    assert measured.value == 0 and "informative at 2 of 3 points" in measured.text and "(vacuous)" in measured.text
    bound = Claim("membership", "Fig. 1, Thm. 1", "", "", "adult-n", WithinBound(), 0.0, direction=EXACT)
    assert verdict(bound, measured, study) == "agrees"
    past = table.assign(**{"attack/yeom/advantage_abs/ci_low": [0.6, 0.8, 0.02] * 3})  # 0.6 > ½√1.0 at n = 10
    assert verdict(bound, WithinBound()(replace(study, trials=past)), study) == "differs"
    vacuous = table.assign(**{"leakage/kl/rho/ci_high": [5.0, 9.0, 4.0] * 3})
    nothing = WithinBound()(replace(study, trials=vacuous))
    assert math.isnan(nothing.value) and verdict(bound, nothing, study) == "—"  # a vacuous bound is no agreement


def test_theorem_3_3_at_k_0_is_a_level_the_filter_can_meet():
    k_bound, alphas = math.log(2), [0.1, 0.5, 0.8]
    rng = np.random.default_rng(0)
    i_uxq = np.array([a * k_bound for a in alphas] * 3) + rng.normal(0, 0.003, 9)
    table = pd.DataFrame({"k": 0.0, "alpha": alphas * 3, "seed": np.repeat([0, 1, 2], 3), "leakage/i_uxq": i_uxq,
                          "leakage/i_sq": k_bound - i_uxq, "leakage/bound_k": k_bound})
    study = StudyRuns("g", "quick", {"data/synthetic": 0.0}, table, ("k", "alpha", "seed"), dataset="gmm")
    row59 = next(c for c in CLAIMS if c.item.startswith("Theorem 3.3") and c.measure.where == {"k": 0.0})
    assert row59.direction == LEVEL
    assert verdict(row59, row59.measure(study), study) == "agrees"  # I(U;X|Q) = αK within ±0.02 at every α
    both = BoundMargin({"k": 0.0})(study)  # the old reading: the smaller slack, which is −|I(U;X|Q) − αK| ≤ 0
    assert both.high <= 0.0 + 1e-12 or both.value < 0
    shifted = replace(study, trials=table.assign(**{"leakage/i_uxq": i_uxq + 0.1}))
    assert verdict(row59, row59.measure(shifted), shifted) == "differs"


def test_row_52_checks_the_paper_s_0_19_to_its_two_decimals():
    row52 = next(c for c in CLAIMS if c.study == "gmm" and c.measure == OverTrials("leakage/i_us", {"k": 0.4}))
    table = pd.DataFrame({"k": 0.4, "alpha": [0.1, 0.5], "seed": [0, 0], "leakage/i_us": 0.19274475702175756})
    study = StudyRuns("g", "quick", {"data/synthetic": 0.0}, table, ("k", "alpha", "seed"), dataset="gmm")
    assert verdict(row52, row52.measure(study), study) == "sanity check: holds"
    wrong = replace(study, trials=table.assign(**{"leakage/i_us": 0.1966}))
    assert verdict(row52, row52.measure(wrong), wrong) == "sanity check: FAILS"


def test_the_committed_report_is_what_its_snapshots_give(tmp_path):
    """docs/reproduction.md is generated: regenerating it from the committed snapshots changes nothing."""
    report = REPO / "docs" / "reproduction.md"
    found = {s.key: r for s in STUDIES if (r := snapshot.load(report.parent / "reproduction" / s.key)) is not None}
    figures = {key: sorted((report.parent / "reproduction" / key).glob("*.png")) for key in found}
    assert render(evaluate(CLAIMS, found), found, figures, report, plan_drifts(found)) == report.read_text()


def test_snapshots_mode_reads_no_store_and_refuses_to_run(tmp_path, capsys):
    from platform.reproduction import main
    out = tmp_path / "docs" / "reproduction.md"
    (tmp_path / "docs" / "reproduction" / "gone-study").mkdir(parents=True)  # a folder the report does not show
    assert main(["--snapshots", "--out", str(out)]) == 2  # no mlflow.db anywhere: nothing is read but snapshots
    assert capsys.readouterr().err.strip() == f"error: --snapshots: no study snapshot in {out.parent / 'reproduction'} " \
                                              "to read"  # a report of rows all "not run" is not one to publish
    assert not out.exists() and not (tmp_path / "mlflow.db").exists()
    assert main(["--snapshots", "--run"]) == 2
    assert capsys.readouterr().err.strip() == ("error: --snapshots reads no store and runs no sweep: leave out --run, "
                                               "--rerun and --tracking-uri")


def test_scale_names_a_grid_some_seeds_of_which_are_missing():
    """A stopped part can leave a point with fewer seeds: the scale counts grid points, not trials ÷ seeds."""
    trials = pd.DataFrame({"alpha": [0.0, 0.0, 0.0, 1.0, 1.0], "seed": [0, 1, 2, 0, 1]})
    runs = StudyRuns("w", "quick", {}, trials, ("alpha", "seed"))
    assert runs.scale == "5 trials (2 points, 3 seeds, not every seed at every point)"
    full = replace(runs, trials=trials.iloc[:3].assign(alpha=[0.0, 1.0, 2.0], seed=[0, 0, 0]))
    assert full.scale == "3 trials (3 points × 1 seed)"


def test_a_study_that_ran_an_earlier_plan_names_each_setting_it_ran_otherwise_and_a_current_one_names_none(
        tmp_path: Path) -> None:
    study = Study("amnist-scale", "amnist", "scale", extra=("--set", "attack_records=28476"))
    today = tracking.flatten("", presets()["amnist"].base | presets()["amnist"].profiles["scale"].config)
    current = StudyRuns("amnist-scale-1", "scale", {}, TRIALS, ("alpha", "lam", "seed"), dataset="amnist",
                        config={k: today[k] for k in ("attack_epochs", "attack_patience", "epochs")} |
                        {"attack_records": "28476", "seed": "2"})  # the seed of a part is no drift
    assert plan_drift(study, current) == []
    earlier = replace(current, config=current.config | {"attack_records": "5000", "epochs": "4", "gone_key": "1"})
    assert plan_drift(study, earlier) == ["attack_records = 5000 (today 28476)", f"epochs = 4 (today {today['epochs']})"]
    text = render([], {"amnist-scale": earlier}, {}, tmp_path / "reproduction.md",
                  {"amnist-scale": plan_drift(study, earlier)})
    assert "- **amnist-scale** ran attack_records = 5000 (today 28476), epochs = 4 (today 8): its rows measure" in text
    assert "earlier plan" not in render([], {"amnist-scale": current}, {}, tmp_path / "r.md", {"amnist-scale": []})


def test_a_committed_snapshot_of_parts_is_joined_again_by_todays_rules_and_its_front_drawn_again(tmp_path):
    trials = TRIALS.rename(columns={"utility/accuracy": "utility/fresh_accuracy"}).assign(
        status="FINISHED", name=[f"trial {i}" for i in range(len(TRIALS))])
    parts = [replace(runs(trials[trials["seed"] == s].reset_index(drop=True),
                          {"m": float(s), "m/ci_low": s - 0.1, "m/ci_high": s + 0.1}),
                     sweep=f"part-{s}", started=f"2026-11-2{s + 1} 10:00", minutes=10.0) for s in (0, 1)]
    joined, _ = join(parts[::-1])
    snapshot.save(replace(joined, parent_metrics=joined.parent_metrics | {"m/ci_low": 0.4, "m/ci_high": 0.6}),
                  tmp_path)  # an interval an earlier rule saved: the mean of the parts' interval ends
    kept = snapshot.load(tmp_path)
    assert kept is not None and len(kept.parts) == 2
    again, figures = rejoined(kept, next(s for s in STUDIES if s.key == "amnist"), tmp_path)
    expected = t_band([0.0, 1.0])  # today's rule: the t interval of the parts' mean
    assert np.allclose((again.parent_metrics["m/ci_low"], again.parent_metrics["m/ci_high"]), expected)
    saved = snapshot.load(tmp_path)
    assert saved is not None and np.allclose((saved.parent_metrics["m/ci_low"], saved.parent_metrics["m/ci_high"]),
                                             expected)
    assert tmp_path / "front.png" in figures and (tmp_path / "front.png").read_bytes().startswith(b"\x89PNG")
    one_sweep = replace(parts[0], parent_metrics={"m": 0.0, "m/ci_low": 0.4, "m/ci_high": 0.6})
    assert rejoined(one_sweep, STUDIES[0], tmp_path)[0] is one_sweep  # one sweep: as it was saved

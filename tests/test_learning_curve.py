"""Is the attacker still learning? Learning curves on synthetic data where more records help or do not, the nested
stratified parts, the rule at its boundary, and ``python -m platform.attack --learning-curve`` end to end."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import REPO, run_sweep, store, user_env
from ray import tune
from stores import RawStore

from attacks.attackers.deep import DeepAttacker
from attacks.attackers.knn import KnnAttacker
from attacks.audits.learning_curve import (
    CurvePoint,
    LearningCurve,
    learning_curve,
    narrowed,
    nested_parts,
    run_lane,
    still_learning,
    training_part,
)
from attacks.base import AttackInput, AttackResult, CheckpointInputs
from attacks.plots.learning_curve_plot import curve_png
from core.classifier import Candidate, family
from core.config import AttackBudget
from platform.figures.report_tables import learning_curves
from platform.results.summary import SATURATION
from platform.run.learning_curves import (
    CurveJob,
    curve_attackers,
    lanes,
    logged_choice,
    logged_point,
    saturation_of_point,
)


def board(n: int, cells: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Points in the unit square; S is the colour of their cell on a ``cells`` × ``cells`` checkerboard."""
    x = torch.rand(n, 2, generator=torch.Generator().manual_seed(seed))
    return x, ((x * cells).floor().sum(1) % 2).long()


def split(cells: int, n_train: int = 1200, n_test: int = 1000) -> AttackInput:
    (train_x, train_s), (test_x, test_s) = board(n_train, cells, 1), board(n_test, cells, 2)
    return AttackInput(train_x, train_s, test_x, test_s, num_classes=2)


def test_a_fine_checkerboard_still_rises_at_the_last_step() -> None:
    # 64 cells: 300 records leave about 5 per cell, which k-NN underfits; every doubling of the records helps.
    curve = learning_curve(KnnAttacker(), split(cells=8))
    assert [p.records for p in curve.points] == [300, 600, 1200]
    accuracy = [p.accuracy for p in curve.points]
    assert accuracy[0] < accuracy[1] < accuracy[2] and accuracy[2] - accuracy[1] > 0.04
    assert curve.still_learning
    assert curve.logged()["attack/knn/still_learning"] == 1.0


def test_a_secret_read_off_one_feature_saturates_early() -> None:
    # x is the label seen through a little noise, but 15 % of the labels are flipped: 300 records reach the
    # ceiling of about 0.85 already, and more records add nothing beyond the interval.
    def noisy(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        gen = torch.Generator().manual_seed(seed)
        s = torch.randint(0, 2, (n,), generator=gen)
        x = s.float().view(n, 1) + 0.05 * torch.randn(n, 1, generator=gen)
        return x, torch.where(torch.rand(n, generator=gen) < 0.15, 1 - s, s)

    (train_x, train_s), (test_x, test_s) = noisy(1200, 1), noisy(1000, 2)
    curve = learning_curve(KnnAttacker(), AttackInput(train_x, train_s, test_x, test_s, num_classes=2))
    assert all(abs(p.accuracy - 0.85) < 0.04 for p in curve.points), curve
    assert not curve.still_learning
    assert curve.logged()["attack/knn/still_learning"] == 0.0


def test_twice_the_budget_adds_a_200_point_on_the_same_test_split() -> None:
    # 2,400 records given, a budget of 1,200: the 25/50/100 % parts come from the first 1,200 only (the farm's own
    # records), 200 % is all of them; the 100 % point is the plain curve's on those 1,200 records.
    data = split(cells=8, n_train=2400)
    curve = learning_curve(KnnAttacker(), data, budget=1200)
    assert [p.records for p in curve.points] == [300, 600, 1200, 2400] and curve.points[-1].percent == 200
    first = AttackInput(data.train_x[:1200], data.train_s[:1200], data.test_x, data.test_s, num_classes=2)
    plain = learning_curve(KnnAttacker(), first)
    assert [p.accuracy for p in curve.points[:3]] == [p.accuracy for p in plain.points]
    assert curve.points[3].accuracy > curve.points[2].accuracy  # the fine board keeps rising
    assert "attack/knn/curve/200" in curve.logged() and curve.saturation.estimate is not None
    last = curve.points[-1]
    assert curve.saturation.estimate >= last.accuracy - (last.ci_high - last.ci_low) / 2
    # a budget whose double the data do not hold: no 200 % point
    assert [p.records for p in learning_curve(KnnAttacker(), split(cells=8, n_train=2000), budget=1200).points] == [
        300, 600, 1200]


@dataclass
class CountingKnn:
    """k-NN that notes the records of every fit it makes."""

    fitted: list[int] = field(default_factory=list)
    name: str = "knn"

    def run(self, data: AttackInput) -> AttackResult:
        self.fitted.append(len(data.train_s))
        return KnnAttacker().run(data)


def test_the_farm_s_own_reading_is_the_100_point_and_is_not_fitted_again() -> None:
    # The farm read 0.77 [0.74, 0.80] on these 1,200 records: the curve takes that point as it is and fits only the
    # 25, 50 and 200 % parts (300, 600 and 2,400 records), each as the plain curve fits it.
    data = split(cells=8, n_train=2400)
    attacker = CountingKnn()
    farm = CurvePoint(1.0, 1200, 0.77, 0.74, 0.80)
    curve = learning_curve(attacker, data, budget=1200, full=farm)
    assert attacker.fitted == [300, 600, 2400]
    assert curve.points[2] == farm
    plain = learning_curve(KnnAttacker(), data, budget=1200)
    assert [p.accuracy for i, p in enumerate(curve.points) if i != 2] == [p.accuracy for i, p in enumerate(plain.points)
                                                                           if i != 2]
    assert curve.logged()["attack/knn/curve/100"] == 0.77 and curve.logged()["attack/knn/curve/100/ci_low"] == 0.74


def test_the_parts_are_fitted_with_the_configuration_the_farm_s_search_chose() -> None:
    # the quick profile's family: widths 16 and 32, with and without augmentation; the farm chose the wide one with it
    budget = AttackBudget(attack_lrs=(1e-3,), attack_width_factors=(1.0, 2.0), attack_augment=(False, True))
    deep = DeepAttacker(budget)
    assert len(family(deep.budget, deep.width)) == 4
    one = narrowed(deep, Candidate(32, 1e-3, True))
    assert isinstance(one, DeepAttacker) and family(one.budget, one.width) == [Candidate(32, 1e-3, True)]
    assert one.name == "deep" and one.budget.seed == budget.seed
    assert narrowed(deep, None) is deep and narrowed(KnnAttacker(), Candidate(32, 1e-3, True)) == KnnAttacker()


def test_parts_are_nested_stratified_and_seeded() -> None:
    s = torch.tensor([0] * 300 + [1] * 100 + [2] * 40)  # imbalanced classes
    quarter, half, whole = nested_parts(s, seed=3)
    assert set(quarter) < set(half) < set(whole) and np.array_equal(whole, np.arange(len(s)))
    assert len(quarter) == 110 and len(half) == 220
    for part, share in ((quarter, 0.25), (half, 0.5)):
        counts = np.bincount(s[part].numpy(), minlength=3)
        assert np.abs(counts - share * np.array([300, 100, 40])).max() <= 2, counts  # every class in its share
    assert all(np.array_equal(a, b) for a, b in zip(nested_parts(s, seed=3), (quarter, half, whole), strict=True))
    assert not np.array_equal(nested_parts(s, seed=4)[0], quarter)


def test_a_training_part_keeps_every_training_field_aligned_and_the_test_split_whole() -> None:
    n = 40
    data = AttackInput(torch.arange(n).float().view(n, 1), torch.arange(n) % 2, torch.zeros(7, 1), torch.zeros(7).long(),
                       2, train_u=torch.arange(n) * 10, raw_train_x=torch.arange(n).float().view(n, 1) + 0.5,
                       train_si=torch.arange(n).float().view(n, 1) * 2)
    idx = nested_parts(data.train_s, seed=0)[0]
    part = training_part(data, idx)
    rows = part.train_x.view(-1).long()
    assert part.train_u is not None and part.raw_train_x is not None and part.train_si is not None
    assert torch.equal(rows, torch.as_tensor(idx)) and torch.equal(part.train_s, rows % 2)
    assert torch.equal(part.train_u, rows * 10) and torch.equal(part.raw_train_x.view(-1), rows + 0.5)
    assert torch.equal(part.train_si.view(-1), rows.float() * 2)
    assert part.test_x is data.test_x and part.test_s is data.test_s


@pytest.mark.parametrize(("high", "learning"), [(1.0, False), (0.875, True)])
def test_the_rule_at_its_boundary(high: float, learning: bool) -> None:
    # 50 % → 100 % gains 0.25. An interval [0.5, 1.0] has half-width 0.25: a gain equal to it is not "more than" it.
    half, full = CurvePoint(0.5, 50, 0.5, 0.375, 0.625), CurvePoint(1.0, 100, 0.75, 0.5, high)
    assert still_learning(half, full) is learning
    curve = LearningCurve("deep", (CurvePoint(0.25, 25, 0.5, 0.25, 0.75), half, full))
    assert curve.still_learning is learning
    logged = curve.logged()
    fitted = {k: logged.pop(k) for k in list(logged) if k.startswith("attack/deep/saturation")}
    assert fitted == curve.saturation.logged("attack/deep/saturation") and set(fitted) == {
        "attack/deep/saturation", "attack/deep/saturation/ci_low", "attack/deep/saturation/ci_high"}
    assert logged == {
        "attack/deep/still_learning": float(learning),
        "attack/deep/curve/25": 0.5, "attack/deep/curve/25/ci_low": 0.25, "attack/deep/curve/25/ci_high": 0.75,
        "attack/deep/curve/25/records": 25.0,
        "attack/deep/curve/50": 0.5, "attack/deep/curve/50/ci_low": 0.375, "attack/deep/curve/50/ci_high": 0.625,
        "attack/deep/curve/50/records": 50.0,
        "attack/deep/curve/100": 0.75, "attack/deep/curve/100/ci_low": 0.5, "attack/deep/curve/100/ci_high": high,
        "attack/deep/curve/100/records": 100.0}


def test_the_report_reads_a_runs_curves_and_the_picture_is_a_png() -> None:
    curve = LearningCurve("deep", (CurvePoint(0.25, 25, 0.5, 0.25, 0.75), CurvePoint(0.5, 50, 0.5, 0.375, 0.625),
                                   CurvePoint(1.0, 100, 0.75, 0.5, 0.875)))
    (row,) = learning_curves(curve.logged() | {"attack/deep/accuracy": 0.7, "attack/max/accuracy": 0.7})
    assert row["attacker"] == "deep" and row["still_learning"]
    assert row["points"][2] == {"value": 0.75, "low": 0.5, "high": 0.875}
    assert row["points"][3] == {"value": None, "low": None, "high": None}  # no 200 % point drawn
    fitted = curve.saturation
    assert row["saturation"] == {"value": fitted.estimate, "low": fitted.ci_low, "high": fitted.ci_high}
    assert curve_png(curve, "sigma=1, checkpoint 2")[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture()
def ray_tmp() -> Iterator[Path]:
    """Ray's own temp dir for the end-to-end test (short: Ray's socket paths must stay under 107 characters)."""
    path = Path(tempfile.mkdtemp(prefix="lc-ray-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow  # a smoke sweep and a re-attack: over a minute on 2 busy cores; runs under -m slow
def test_platform_attack_draws_the_fronts_learning_curves(workdir: Path, ray_tmp: Path) -> None:
    env = user_env() | {"RAY_TMPDIR": str(ray_tmp)}  # the README's environment: no PYTHONPATH
    out = run_sweep(workdir, "noise", "--profile", "smoke", "--set", "sigma=1", env=env)  # one front point
    assert out.returncode == 0, out.stderr[-3000:]
    cmd = [sys.executable, "-m", "platform.attack", "putlab-noise", "--learning-curve",
           "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}"]
    first = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-noise")
    assert exp is not None
    front = client.search_runs([exp.experiment_id], filter_string="tags.`putlab.pareto_front` = 'true'")
    drew = re.search(rf"drew (\d+) learning curve\(s\) of the strongest attackers of {len(front)} front point", first.stdout)
    assert front and drew and int(drew.group(1)) >= len(front)  # a second where a rule leads (its strongest learner)
    for run in front:
        winner = run.data.tags["putlab.strongest_attacker"]
        metrics = run.data.metrics
        assert metrics[f"attack/{winner}/still_learning"] in (0.0, 1.0)
        for pct in (25, 50, 100, 200):  # AMNIST holds twice the smoke trial's records outside its test split
            low, high = metrics[f"attack/{winner}/curve/{pct}/ci_low"], metrics[f"attack/{winner}/curve/{pct}/ci_high"]
            assert low <= metrics[f"attack/{winner}/curve/{pct}"] <= high
        assert metrics[f"attack/{winner}/curve/200/records"] == 2 * metrics[f"attack/{winner}/curve/100/records"]
        drawn = [k.split("/")[1] for k in metrics if k.startswith("attack/") and k.endswith("/saturation")
                 and k != "attack/max/saturation"]  # the winner's curve, and its strongest learner's where a rule leads
        assert winner in drawn and metrics["attack/max/saturation"] == max(metrics[f"attack/{a}/saturation"] for a in drawn)
        half = (metrics[f"attack/{winner}/curve/200/ci_high"] - metrics[f"attack/{winner}/curve/200/ci_low"]) / 2
        assert metrics["attack/max/saturation"] >= metrics[f"attack/{winner}/curve/200"] - half - 1e-12
        pngs = [a.path for a in client.list_artifacts(run.info.run_id, "attacks")]
        assert any(re.search(rf"epoch\d+_learning_curve_{winner}\.png$", p) for p in pngs), pngs
    written = re.search(r"report: (\S+)", first.stdout)
    assert written, first.stdout
    report = Path(written.group(1)).read_text()
    assert "Is the attacker still learning?" in report and "learning curve" in report
    second = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0 and "drew 0 learning curve(s)" in second.stdout, second.stderr[-3000:]


def job(name: str) -> CurveJob:
    return CurveJob(run_id=name, trial=name, step=1, location="", attacker="knn")


@pytest.mark.parametrize(("jobs", "slots", "beside", "expected"), [
    ("abcd", 2, True, ["abcd"]),  # 2 CPUs beside the grids: one lane, the grid keeps a CPU
    ("abcd", 2, False, ["ac", "bd"]),  # nothing beside them (platform.attack): every slot
    ("abcde", 4, True, ["ad", "be", "c"]),
    ("ab", 8, False, ["a", "b"]),  # never more lanes than curves
    ("ab", 1, True, ["ab"]),  # at least one lane
])
def test_curves_run_in_lanes_that_leave_a_slot_to_the_work_beside_them(jobs: str, slots: int, beside: bool,
                                                                         expected: list[str]) -> None:
    dealt = lanes([job(n) for n in jobs], slots, beside)
    assert ["".join(j.trial for j in lane) for lane in dealt] == expected


def test_a_lane_draws_its_curves_in_order_and_a_failing_one_does_not_stop_the_others(tmp_path: Path) -> None:
    data = split(cells=1)

    def load(config: dict, directory: str) -> CheckpointInputs:
        if config["bad"]:
            raise ValueError(f"no release for {config['name']}")
        return CheckpointInputs(data)

    checkpoint = tune.Checkpoint.from_directory(str(tmp_path))
    tasks = [({"bad": True, "name": "first"}, checkpoint, "knn", None, None, None),
             ({"bad": False}, checkpoint, "knn", None, None, None),
             ({"bad": True, "name": "third"}, checkpoint, "knn", None, None, None)]
    first, curve, third = run_lane(load, tasks)
    assert first == "ValueError: no release for first" and third == "ValueError: no release for third"
    assert isinstance(curve, LearningCurve)
    assert curve == learning_curve(KnnAttacker(), data, CheckpointInputs(data).config.seed)


def test_a_curve_job_reads_the_farm_s_own_point_and_choice_at_its_step(tmp_path: Path) -> None:
    # what the farm logged at step 4 (and other values at step 2): the curve's 100 % point and the configuration its
    # parts are fitted with; an attacker with no tuned family (no chosen_*) gives no choice
    client = RawStore(f"sqlite:///{tmp_path / 'mlflow.db'}")
    run_id = client.create_run(client.create_experiment("curves")).info.run_id
    at_four = {"accuracy": 0.799, "accuracy/ci_low": 0.772, "accuracy/ci_high": 0.824, "train_records": 5000.0,
               "chosen_width": 32.0, "chosen_lr": 1e-3, "chosen_augment": 1.0}
    for key, value in at_four.items():
        client.log_metric(run_id, f"attack/deep/{key}", value, step=4)
        client.log_metric(run_id, f"attack/deep/{key}", 0.0, step=2)
    client.log_metric(run_id, "attack/thickness/accuracy", 0.7, step=4)
    assert logged_point(client, run_id, 4, "deep") == CurvePoint(1.0, 5000, 0.799, 0.772, 0.824)
    assert logged_choice(client, run_id, 4, "deep") == Candidate(32, 1e-3, True)
    assert logged_point(client, run_id, 4, "thickness") is None and logged_choice(client, run_id, 4, "thickness") is None


def test_a_rule_strongest_point_also_gets_its_strongest_learners_curve_and_the_higher_saturation(tmp_path: Path) -> None:
    # the thickness rule reads 0.935 at 5,000 records and has no tuned family; the deep attacker reads 0.93 and has one:
    # both are drawn, and the point's saturation is the learner's rising curve's, in whichever order they are logged
    client = RawStore(f"sqlite:///{tmp_path / 'mlflow.db'}")
    run_id = client.create_run(client.create_experiment("curves")).info.run_id
    for key, value in {"accuracy": 0.93, "chosen_width": 32.0, "chosen_lr": 1e-3, "chosen_augment": 0.0}.items():
        client.log_metric(run_id, f"attack/deep/{key}", value, step=4)
    client.log_metric(run_id, "attack/thickness/accuracy", 0.935, step=4)
    assert curve_attackers(client, run_id, 4, {"thickness": 0.935, "deep": 0.93}) == ["thickness", "deep"]
    assert curve_attackers(client, run_id, 4, {"thickness": 0.9, "deep": 0.93}) == ["deep"]  # the learner is strongest

    def curve(attacker: str, accuracies: tuple[float, ...]) -> LearningCurve:
        return LearningCurve(attacker, tuple(CurvePoint(f, int(5000 * f), a, a - 0.015, a + 0.015)
                                             for f, a in zip((0.25, 0.5, 1.0, 2.0), accuracies, strict=True)))

    flat, rising = curve("thickness", (0.93, 0.93, 0.935, 0.93)), curve("deep", (0.85, 0.88, 0.93, 0.95))
    assert (rising.saturation.estimate or 0) > (flat.saturation.estimate or 1)
    for first, second in ((flat, rising), (rising, flat)):
        run = client.create_run(client.get_experiment_by_name("curves").experiment_id).info.run_id
        for drawn in (first, second):
            job = CurveJob(run, "trial", 4, "", drawn.attacker)
            client.log_metrics(run, saturation_of_point(client, job, drawn), step=4)
        assert client.get_run(run).data.metrics[SATURATION] == pytest.approx(rising.saturation.estimate)

"""The baselines' hull: what per-record mixes of comparison releases reach, against hand-computed margins; the
distortion mixed as the mean squared error (a real mix of two releases), the verdict per seed, and the words a
one-point and a two-point grid give where they cannot be interpolated."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import SharedSweep, store

from attacks.attackers.deep import DeepAttacker
from attacks.attackers.tuning import per_record_metrics
from attacks.base import AttackInput
from core.config import AttackBudget
from core.image_quality import distortion, psnr_of_mse, with_psnr_of_mse
from core.metric_names import MSE, PSNR, PSNR_OF_MSE
from platform.results.baseline_hull import BEYOND_SEEDS, MARGIN, MIX, Corners, Standing, hull_columns, hull_metrics, standing
from platform.results.comparison_grid import ComparisonGrid, compare_all, curve_of, format_comparison
from platform.results.summary import summary_of
from search_spaces import presets
from trainables.shared.image_data import constant_release

AMNIST = presets()["amnist"]
AXES = list(AMNIST.front.axes)  # fresh digit accuracy, strongest attacker, PSNR of the MSE
U, P, D = (a.metric for a in AXES)
# two comparison releases as sharp as each other: A keeps everything (utility 1, attacker 1), B keeps little (0.6, 0.6)
SAME_SHARPNESS = Corners(("A", "B"), np.array([[1.0, 1.0, 30.0], [0.6, 0.6, 30.0]]))


def test_a_point_inside_a_mix_of_two_baselines_is_inside_though_neither_dominates_it() -> None:
    # neither corner dominates (0.8, 0.85): A's attacker reads more, B's utility less. The mix p·A + (1 − p)·B reads
    # 0.6 + 0.4p on both accuracies; the margin t needs 0.6 + 0.4p ≥ 0.8 + t and 0.6 + 0.4p ≤ 0.85 − t: at 0.4p =
    # 0.225 (p = 0.5625) t = 0.025
    inside = standing(np.array([0.8, 0.85, 30.0]), SAME_SHARPNESS, AXES)
    assert inside.margin == pytest.approx(0.025, abs=1e-9)
    assert dict(inside.weights) == pytest.approx({"A": 0.5625, "B": 0.4375}, abs=1e-9)
    assert inside.verdict == "inside the baselines' hull by 0.025" and inside.mix == "56.2 % A + 43.8 % B"
    # on the mix's own line (0.8, 0.8): inside by 0; more private than it (0.8, 0.75): beyond by 0.025
    assert standing(np.array([0.8, 0.8, 30.0]), SAME_SHARPNESS, AXES).margin == pytest.approx(0.0, abs=1e-9)
    beyond = standing(np.array([0.8, 0.75, 30.0]), SAME_SHARPNESS, AXES)
    assert beyond.margin == pytest.approx(-0.025, abs=1e-9) and beyond.verdict == "beyond the baselines' hull by 0.025"
    # a release collapsed below every baseline's utility: no mix of them reaches its privacy, but a release keeping
    # nothing (not a baseline) would; it is not compared, and not counted
    front = pd.DataFrame([{"name": "collapsed", U: 0.1, P: 0.5, D: 30.0}, {"name": "X", U: 0.8, P: 0.85, D: 30.0}])
    columns = hull_columns(front, SAME_SHARPNESS, AXES)
    assert np.isnan(columns[MARGIN][0]) and columns[MARGIN][1] == pytest.approx(0.025, abs=1e-9)
    assert hull_metrics(pd.DataFrame(columns)) == {"front/hull_compared": 1.0, "front/beyond_hull": 0.0,
                                                   "front/hull_margin_min": pytest.approx(0.025, abs=1e-9)}
    assert Standing(np.nan, ()).verdict.startswith("less useful than every baseline point: not compared")


def test_the_distortion_mixes_as_the_mean_squared_error_not_as_decibels() -> None:
    # A at 40 dB (MSE 1e-4), B at 10 dB (MSE 0.1). A point at 20 dB (MSE 0.01) needs p ≥ (0.1 − 0.01) / (0.1 − 1e-4)
    # of A, where both accuracies read 0.6 + 0.4p ≥ 0.96036: its attacker margin 0.81 − 0.96036 = −0.15036. Averaging
    # decibels instead (10 + 30p ≥ 20, p ≥ 1/3) would put it inside by 0.005 (0.4p = 0.205).
    corners = Corners(("A", "B"), np.array([[1.0, 1.0, 40.0], [0.6, 0.6, 10.0]]))
    p = (0.1 - 0.01) / (0.1 - 1e-4)
    assert standing(np.array([0.8, 0.81, 20.0]), corners, AXES).margin == pytest.approx(0.81 - (0.6 + 0.4 * p), abs=1e-9)
    # sharper than both corners: no mix is as little distorted
    sharp = standing(np.array([0.8, 0.81, 45.0]), corners, AXES)
    assert sharp.margin == -math.inf and sharp.verdict.endswith("no mix of them is as little distorted")


def test_a_real_per_record_mix_has_the_mix_of_the_mean_squared_errors() -> None:
    gen = torch.Generator().manual_seed(0)
    raw = torch.rand(400, 1, 28, 28, generator=gen)
    noisy, black = (raw + 0.3 * torch.randn(raw.shape, generator=gen)).clamp(0, 1), torch.zeros_like(raw)
    verbatim = torch.rand(400, generator=gen) < 0.3  # each record released as it is with probability 0.3
    for other in (noisy, black):
        mixed = torch.where(verbatim[:, None, None, None], raw, other)
        per_record = (other - raw).pow(2).flatten(1).mean(1)
        expected = float(torch.where(verbatim, 0.0, per_record).mean())  # each record's error, the verbatim ones 0
        assert distortion(mixed, raw)[PSNR_OF_MSE] == pytest.approx(psnr_of_mse(expected), rel=1e-5)
        # the mean of per-image PSNRs rewards the verbatim records (each capped at 60 dB): it reads far sharper
        assert distortion(mixed, raw)[PSNR] > psnr_of_mse(expected) + 10


def test_the_psnr_of_the_mse_by_hand_and_old_stores_read_it_from_the_mse() -> None:
    assert psnr_of_mse(0.01) == pytest.approx(20.0) and psnr_of_mse(0.0) == 60.0 and psnr_of_mse(1e-9) == 60.0
    assert with_psnr_of_mse({MSE: 0.001})[PSNR_OF_MSE] == pytest.approx(30.0)
    assert with_psnr_of_mse({MSE: 0.001, PSNR_OF_MSE: 12.0})[PSNR_OF_MSE] == 12.0  # a logged value is kept
    assert PSNR_OF_MSE not in with_psnr_of_mse({PSNR: 20.0})


def trial(name: str, seed: int, values: tuple[float, float, float], **keys: float) -> dict:
    return {"name": f"{name} seed={seed}", "run_id": f"{name.replace(' ', '_')}-{seed}", "status": "FINISHED",
            "seed": float(seed),
            U: values[0], P: values[1], D: values[2], **keys}


def test_the_summary_gives_each_front_point_its_standing_per_seed_and_at_saturation() -> None:
    # the releaser's point at two seeds against the digit prototype (0.6, 0.6) and the raw release (noise σ = 0: 1, 1),
    # all as sharp: a mix with q of the raw release reads 0.6 + 0.4q on both accuracies
    table = pd.DataFrame([trial("alpha=1 lam=100 adv_steps=1", 0, (0.9, 0.70, 30.0), alpha=1.0, lam=100.0, adv_steps=1.0),
                          trial("alpha=1 lam=100 adv_steps=1", 1, (0.9, 0.55, 30.0), alpha=1.0, lam=100.0, adv_steps=1.0)])
    table["attack/max/saturation"] = [0.9, 0.9]
    noise = pd.DataFrame([trial("sigma=0", s, (1.0, 1.0, 30.0), sigma=0.0) for s in (0, 1)])
    prototype = pd.DataFrame([trial("mix=0", s, (0.6, 0.6, 30.0), mix=0.0) for s in (0, 1)])
    summary = summary_of(table, {"noise": noise, "digit-prototype": prototype}, AMNIST, {})
    (row,) = summary.compared.to_dict("records")
    # the mean point (0.9, 0.625): 0.6 + 0.4q ≥ 0.9 + t and ≤ 0.625 − t: at 0.4q = 0.1625 t = −0.1375 (beyond)
    assert row[MARGIN] == pytest.approx(-0.1375, abs=1e-9)
    assert row[MIX] == "59.4 % digit-prototype mix=0 + 40.6 % noise sigma=0"
    # seed 0 (0.9, 0.70): t = min(0.4q − 0.3, 0.1 − 0.4q) = −0.1 beyond; seed 1 (0.9, 0.55) −0.175: beyond at both
    assert row[BEYOND_SEEDS] == "2 of 2"
    # at its saturation 0.9 the attacker reads as much as the utility: t = min(0.4q − 0.3, 0.3 − 0.4q) = 0 (inside)
    assert row["hull/margin_at_saturation"] == pytest.approx(0.0, abs=1e-9)
    metrics = summary.metrics()
    assert metrics["front/beyond_hull"] == 1 and metrics["front/hull_compared"] == 1
    assert metrics["front/hull_margin_min"] == pytest.approx(-0.1375, abs=1e-9)


def test_a_release_collapsed_to_chance_is_compared_with_the_release_that_keeps_nothing() -> None:
    # X collapsed (0.105, 0.51, 8 dB) is less useful than the one comparison point A (0.9, 0.8, 12 dB): not compared.
    # With the constant release C the raw-data reference points log (chance 0.1 / 0.5, 10 dB), a mix with w of A reads
    # 0.1 + 0.8w and 0.5 + 0.3w at an MSE below X's: t = min(0.8w − 0.005, 0.01 − 0.3w), at 1.1w = 0.015 t = 0.00591
    table = pd.DataFrame([trial("alpha=1 lam=300 adv_steps=1", 0, (0.105, 0.51, 8.0), alpha=1.0, lam=300.0, adv_steps=1.0)])
    prototype = {"digit-prototype": pd.DataFrame([trial("mix=0", 0, (0.9, 0.8, 12.0), mix=0.0)])}
    alone = summary_of(table, prototype, AMNIST, {}).compared
    assert np.isnan(alone[MARGIN].iloc[0])
    constant = {"baseline/constant/utility": 0.1, "baseline/constant/attack": 0.5, "baseline/constant/psnr_of_mse": 10.0}
    summary = summary_of(table, prototype, AMNIST, constant)
    assert summary.compared[MARGIN].iloc[0] == pytest.approx(0.8 * 0.015 / 1.1 - 0.005, abs=1e-9)
    assert summary.hull is not None and summary.hull.names[-1] == "a constant release (the mean image)"


def test_the_constant_release_reads_chance_at_the_mean_images_distortion() -> None:
    train, test = torch.zeros(4, 1, 2, 2), torch.ones(3, 1, 2, 2)
    train[:2] = 1.0  # the training mean is 0.5 everywhere: MSE 0.25 against the all-ones test images, 6.02 dB
    assert constant_release(train, test, 10, 2) == pytest.approx(
        {"baseline/constant/utility": 0.1, "baseline/constant/attack": 0.5,
         "baseline/constant/psnr_of_mse": 10 * math.log10(4)})


def grid_points(grid: str, key: str, rows: dict[float, tuple[float, float, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"name": f"{key}={value:g}", "run_id": f"{key}-{value}", "status": "FINISHED", key: value,
                          U: u, P: p, D: d} for value, (u, p, d) in rows.items()])


def test_a_grid_that_cannot_be_interpolated_says_how_the_point_compares_with_its_points() -> None:
    front = pd.DataFrame([{"name": "low", U: 0.7, P: 0.8, D: 11.0}, {"name": "high", U: 0.99, P: 0.9, D: 20.0},
                          {"name": "middle", U: 0.9, P: 0.8, D: 14.0}]).assign(pareto_front=True)
    prototype = curve_of(grid_points("digit-prototype", "mix", {0.0: (0.978, 0.626, 12.6)}),
                         ComparisonGrid(presets()["digit-prototype"]), AXES)
    text = format_comparison(compare_all(front, [prototype], AXES), prototype, AXES)
    assert ("  low: 0.7 / 0.8 / 11; every digit-prototype point has more utility/fresh_accuracy than this one (the least "
            "reads 0.978): nothing to compare at equal utility/fresh_accuracy") in text
    assert ("  high: 0.99 / 0.9 / 20; no digit-prototype point reaches this utility/fresh_accuracy (its best reads "
            "0.978): nothing to compare at equal utility/fresh_accuracy") in text
    noise = curve_of(grid_points("noise", "sigma", {0.3: (0.954, 0.884, 13.3), 1.0: (0.648, 0.771, 6.0)}),
                     ComparisonGrid(presets()["noise"]), AXES)
    lines = {line.split(":")[0].strip(): line for line in format_comparison(compare_all(front, [noise], AXES), noise,
                                                                             AXES).splitlines()}
    assert lines["high"].endswith("no noise point reaches this utility/fresh_accuracy (its best reads 0.954): nothing "
                                  "to compare at equal utility/fresh_accuracy")
    for inside in ("low", "middle"):  # within the two points' range: the grid's values there, interpolated
        assert " at this utility/fresh_accuracy → " in lines[inside], lines[inside]


def test_the_per_record_view_by_hand() -> None:
    # ten records: the three most confident (0.99) are right, the rest read at 0.6 (right 4 of 7); confident ≥ 0.9: 3
    logits = torch.log(torch.tensor([[0.99, 0.01]] * 3 + [[0.6, 0.4]] * 7))
    target = torch.tensor([0, 0, 0, 0, 0, 0, 0, 1, 1, 1])
    assert per_record_metrics(logits, target) == pytest.approx({"top_decile_accuracy": 1.0, "confident_share": 0.3})


def released(kind: str, s: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Noise images [N, 1, 8, 8] whose top-left 4×4 block shows S: ``verbatim`` for a random half of the records (the
    other half's block is noise), ``uniform`` for every record but with S flipped for a random quarter."""
    x = torch.rand(len(s), 1, 8, 8, generator=gen)
    shown = s.float().clone()
    if kind == "verbatim":
        keep = torch.rand(len(s), generator=gen) < 0.5
        x[keep, :, :4, :4] = shown[keep, None, None, None]
    else:
        flip = torch.rand(len(s), generator=gen) < 0.25
        x[:, :, :4, :4] = torch.where(flip, 1 - shown, shown)[:, None, None, None]
    return x


def test_a_release_that_publishes_half_its_records_stands_out_per_record_not_on_average() -> None:
    # both releases read about 0.75 on average; the verbatim half is read almost surely, the uniform one nowhere
    budget = AttackBudget(attack_epochs=12, attack_patience=4, attack_width_factors=(1.0,), attack_lrs=(1e-3,),
                          attack_augment=(False,), attack_rung_epochs=2)
    views = {}
    for kind in ("verbatim", "uniform"):
        gen = torch.Generator().manual_seed(1)
        s_train, s_test = torch.randint(0, 2, (2000,), generator=gen), torch.randint(0, 2, (2000,), generator=gen)
        data = AttackInput(released(kind, s_train, gen), s_train, released(kind, s_test, gen), s_test, num_classes=2)
        views[kind] = DeepAttacker(budget, width=8, cache_dir=None).run(data).metrics
    for kind, m in views.items():
        assert 0.68 < m["accuracy"] < 0.82, (kind, m)
    assert views["verbatim"]["top_decile_accuracy"] > 0.97 and views["verbatim"]["confident_share"] > 0.35, views
    assert views["uniform"]["top_decile_accuracy"] < 0.9 and views["uniform"]["confident_share"] < 0.1, views


def test_the_farm_puts_the_strongest_attackers_per_record_view_beside_the_privacy_axis(smoke_sweep: SharedSweep) -> None:
    # every trial of the shared smoke sweep: attack/max/... is its winner's view where the winner gives probabilities
    # (the deep family), and absent where it does not (the thickness rule)
    client = store(smoke_sweep.folder)
    exp = client.get_experiment_by_name("putlab-amnist")
    runs = client.search_runs([exp.experiment_id], filter_string="tags.`putlab.role` = 'trial'")
    winners = [run.data.tags["putlab.strongest_attacker"] for run in runs]
    assert any(w.startswith("deep") for w in winners), winners
    for run, winner in zip(runs, winners, strict=True):
        for view in ("top_decile_accuracy", "confident_share"):
            mine = run.data.metrics.get(f"attack/{winner}/{view}")
            assert run.data.metrics.get(f"attack/max/{view}") == mine, (winner, view, run.data.metrics)
            assert (mine is None) == (winner == "thickness")

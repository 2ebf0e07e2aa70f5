"""The arithmetic (thickness) attacker on real AMNIST and the side-information attackers on synthetic SI."""
from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
from torch.nn import functional as F

from attacks.attackers.side_info import SideInfoAttacker, SiOnlyAttacker
from attacks.attackers.thickness import ThicknessAttacker
from attacks.base import AttackInput
from core.config import AttackBudget
from core.data import LINE, THICK, THIN, load_amnist, thickness_labels

# Early stopping with a short cap and two learning rates: quick on two cores, converged on these simple tasks.
FAST = AttackBudget(attack_epochs=10, attack_patience=2, attack_width_factors=(1.0,), attack_augment=(False,),
                    attack_batch_size=256)


@pytest.fixture(scope="module")
def amnist():
    train, test, _ = load_amnist(n_train=2000, n_test=1000, seed=0)
    return train, test


def released(train, test, train_x: torch.Tensor, test_x: torch.Tensor) -> AttackInput:
    """An AMNIST attack input with the given released images and the public digits."""
    return AttackInput(train_x, train.thick, test_x, test.thick, 2, train_u=train.digit, test_u=test.digit)


def blur_and_noise(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A heavy privatisation: 7×7 Gaussian blur (σ = 3 px) plus N(0, 0.3²) noise, clamped to [0, 1]."""
    g = torch.exp(-(torch.arange(7.0) - 3) ** 2 / (2 * 3.0**2))
    kernel = (g[:, None] * g[None, :]) / (g.sum() ** 2)
    blurred = F.conv2d(x, kernel[None, None], padding=3)
    return (blurred + 0.3 * torch.randn(x.shape, generator=generator)).clamp(0, 1)


# --- thickness attacker ------------------------------------------------------------------------


def test_thickness_attacker_is_exact_on_raw_amnist(amnist) -> None:
    train, test = amnist
    result = ThicknessAttacker().run(released(train, test, train.x, test.x))
    m = result.metrics
    assert m["accuracy"] == m["accuracy_thin"] == m["accuracy_thick"] == m["accuracy_random"] == 1.0
    assert m["normal_share"] == 0.0
    relabelled = thickness_labels(test.x, test.digit, nonzero_threshold=m["threshold"])
    assert torch.equal(relabelled, torch.where(test.thick == 1, THICK, THIN))
    assert result.logged()["attack/thickness/accuracy"] == 1.0
    assert set(result.logged()) == {f"attack/thickness/{k}" for k in
                                    ("accuracy", "accuracy/ci_low", "accuracy/ci_high", "accuracy_random",
                                     "accuracy_thin", "accuracy_thick", "threshold", "normal_share", "normal_to_thick",
                                     "train_records")}


def test_thickness_attacker_weakens_on_blurred_noisy_images_and_the_fit_helps(amnist) -> None:
    train, test = amnist
    gen = torch.Generator().manual_seed(1)
    data = released(train, test, blur_and_noise(train.x, gen), blur_and_noise(test.x, gen))
    fitted = ThicknessAttacker().run(data).metrics
    raw_threshold = ThicknessAttacker(thresholds=(0.5 / 255,)).run(data).metrics
    assert fitted["accuracy"] < 0.85
    # With the raw labeler's threshold every noisy pixel counts: all "thick", chance. Fitting moves τ up.
    assert raw_threshold["accuracy"] == pytest.approx(0.5, abs=0.02)
    assert fitted["threshold"] > 0.1
    assert fitted["accuracy"] > raw_threshold["accuracy"] + 0.1


def test_thickness_attacker_is_near_chance_on_per_digit_mean_images(amnist) -> None:
    train, test = amnist
    means = torch.stack([train.x[train.digit == d].mean(0) for d in range(10)])
    # The mean image keeps the digit but no thickness: the attacker can only exploit P(s | digit).
    m = ThicknessAttacker().run(released(train, test, means[train.digit], means[test.digit])).metrics
    assert abs(m["accuracy"] - 0.5) < 0.1


def width_images(widths: torch.Tensor, background: float) -> torch.Tensor:
    """Digit-0 images whose measured row has ``widths`` pixels at 1.0 and the rest at ``background``."""
    images = torch.zeros(len(widths), 1, 28, 28)
    images[:, 0, LINE[0]] = torch.where(torch.arange(28) < widths[:, None], 1.0, background)
    return images


def test_normal_is_mapped_three_ways_and_the_threshold_is_fitted() -> None:
    # Digit 0: lower = int(8 - 2/2) = 7, upper = int(8 + 2/2) = 9; width 3 -> thin, 8 -> normal, 12 -> thick.
    # s = 0 (1000 images): 600 labelled thin, 400 normal.  s = 1 (1000): 500 thick, 300 normal, 200 thin.
    widths = torch.tensor([3] * 600 + [8] * 400 + [12] * 500 + [8] * 300 + [3] * 200)
    s = torch.tensor([0] * 1000 + [1] * 1000)
    # The row's background is 0.27: every threshold below it sees 28 pixels (all thick, chance);
    # the smallest grid value above it, 0.3, recovers the widths (0.35, 0.4, ... tie and lose).
    x = width_images(widths, background=0.27)
    digits = torch.zeros(len(s), dtype=torch.long)
    m = ThicknessAttacker(seed=3).run(AttackInput(x, s, x, s, 2, train_u=digits, test_u=digits)).metrics
    assert m["threshold"] == pytest.approx(0.3)
    assert m["normal_share"] == pytest.approx(700 / 2000)
    # normal -> thin:  recall0 = (600 + 400) / 1000 = 1.0, recall1 = 500 / 1000 = 0.5 -> 0.75
    assert m["accuracy_thin"] == pytest.approx(0.75)
    # normal -> thick: recall0 = 600 / 1000 = 0.6, recall1 = (500 + 300) / 1000 = 0.8 -> 0.70
    assert m["accuracy_thick"] == pytest.approx(0.70)
    # normal -> coin:  recall0 ≈ (600 + 200) / 1000 = 0.8, recall1 ≈ (500 + 150) / 1000 = 0.65 -> ≈ 0.725
    # (std of the estimate ≈ 0.007), so the maximum is the thin mapping.
    assert m["accuracy_random"] == pytest.approx(0.725, abs=0.03)
    # chosen on the training split (here the same images): the thin mapping
    assert m["normal_to_thick"] == 0.0
    assert m["accuracy"] == m["accuracy_thin"] == pytest.approx(0.75)
    again = ThicknessAttacker(seed=3).run(AttackInput(x, s, x, s, 2, train_u=digits, test_u=digits)).metrics
    assert again == m


def test_thickness_mapping_is_chosen_on_the_training_split_not_the_test_split() -> None:
    # Training split: "normal" rows are thick (normal -> thick wins there). Test split: they are thin, so the
    # thin mapping would score higher on test; the attacker must still report the mapping it chose on training.
    digits = torch.zeros(2000, dtype=torch.long)
    widths = torch.tensor([3] * 1000 + [8] * 500 + [12] * 500)
    s_train = torch.tensor([0] * 1000 + [1] * 1000)
    s_test = torch.tensor([0] * 1000 + [0] * 500 + [1] * 500)
    x = width_images(widths, background=0.0)
    m = ThicknessAttacker().run(AttackInput(x, s_train, x, s_test, 2, train_u=digits, test_u=digits)).metrics
    assert m["normal_to_thick"] == 1.0
    assert m["accuracy_thin"] == 1.0 > m["accuracy"] == m["accuracy_thick"]


def test_thickness_attacker_needs_the_digits(amnist) -> None:
    train, test = amnist
    for missing in ({"train_u": None}, {"test_u": None}):
        kwargs = {"train_u": train.digit, "test_u": test.digit, **missing}
        data = AttackInput(train.x, train.thick, test.x, test.thick, 2, **kwargs)
        with pytest.raises(ValueError, match="digits") as err:
            ThicknessAttacker().run(data)
        assert "\n" not in str(err.value)


# --- side-information attackers ----------------------------------------------------------------

N_TRAIN, N_TEST = 20_000, 20_000


def weekday_case(p_s1: list[float], n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Weekday w uniform on 0..6, S | w ~ Bernoulli(p_s1[w]); returns (one-hot SI [n, 7], S [n])."""
    gen = torch.Generator().manual_seed(seed)
    w = torch.randint(0, 7, (n,), generator=gen)
    s = (torch.rand(n, generator=gen) < torch.tensor(p_s1)[w]).long()
    return F.one_hot(w, 7).float(), s


def si_input(
    p_s1: list[float],
    x_of: Callable[[torch.Tensor, torch.Generator], torch.Tensor] | None = None,
    n_train: int = N_TRAIN,
) -> AttackInput:
    """Train/test splits of the weekday case; released x = x_of(S, generator) when given, else a dummy column."""
    (train_si, train_s), (test_si, test_s) = weekday_case(p_s1, n_train, 0), weekday_case(p_s1, N_TEST, 1)
    gen = torch.Generator().manual_seed(2)
    make = x_of or (lambda s, g: torch.zeros(len(s), 1))
    return AttackInput(make(train_s, gen), train_s, make(test_s, gen), test_s, 2,
                       train_si=train_si, test_si=test_si)


def test_si_only_reaches_the_bayes_balanced_accuracy() -> None:
    # P(S=1 | w) = 0.9 for w < 3, 0.2 otherwise, w uniform: P(S=1) = (3·0.9 + 4·0.2) / 7 = 3.5 / 7 = 0.5.
    # Bayes rule for balanced accuracy: predict 1 where P(w | S=1) > P(w | S=0), i.e. for w < 3.
    # recall1 = P(w < 3 | S=1) = (3/7 · 0.9) / 0.5 = 2.7 / 3.5;  recall0 = P(w ≥ 3 | S=0) = (4/7 · 0.8) / 0.5 = 3.2 / 3.5
    # balanced accuracy = (2.7 + 3.2) / (2 · 3.5) = 5.9 / 7 ≈ 0.8429.
    result = SiOnlyAttacker().run(si_input([0.9] * 3 + [0.2] * 4))
    assert result.metrics["accuracy"] == pytest.approx(5.9 / 7, abs=0.02)
    logged = result.logged()
    assert logged["attack/si_only/accuracy"] == result.metrics["accuracy"]
    assert logged["attack/si_only/accuracy/ci_low"] < result.metrics["accuracy"] < logged["attack/si_only/accuracy/ci_high"]


def test_si_only_normalises_by_the_prior() -> None:
    # P(S=1 | w) = 0.5 for w < 3, 0.1 otherwise: P(S=1) = (1.5 + 0.4) / 7 = 1.9 / 7 ≈ 0.27, so the
    # posterior argmax never says 1 (balanced accuracy 0.5), but P(s | w) / P(s) says 1 for w < 3:
    # recall1 = P(w < 3 | S=1) = 1.5 / 1.9;  recall0 = P(w ≥ 3 | S=0) = (4 · 0.9) / (7 - 1.9) = 3.6 / 5.1
    # balanced accuracy = (1.5 / 1.9 + 3.6 / 5.1) / 2 ≈ 0.7477.
    result = SiOnlyAttacker().run(si_input([0.5] * 3 + [0.1] * 4))
    assert result.metrics["accuracy"] == pytest.approx((1.5 / 1.9 + 3.6 / 5.1) / 2, abs=0.02)


def test_si_only_is_chance_with_uninformative_si() -> None:
    assert SiOnlyAttacker().run(si_input([0.3] * 7)).metrics["accuracy"] == pytest.approx(0.5, abs=0.02)


def test_si_only_sends_unseen_rows_to_the_rarest_training_class() -> None:
    # Training: row A is 3× class 0 and 1× class 1 (then class 0 is the majority, class 1 the rarest).
    # Test: row A with s = 0 (predicted 0), unseen row B with s = 1 -> predicted 1 -> balanced accuracy 1.
    a, b = [1.0, 0.0], [0.0, 1.0]
    data = AttackInput(torch.zeros(4, 1), torch.tensor([0, 0, 0, 1]), torch.zeros(2, 1), torch.tensor([0, 1]), 2,
                       train_si=torch.tensor([a, a, a, a]), test_si=torch.tensor([a, b]))
    assert SiOnlyAttacker().run(data).metrics["accuracy"] == 1.0


def test_si_only_falls_back_to_an_mlp_for_continuous_si() -> None:
    # SI = S + N(0, 1) with balanced S: every row is distinct (no table); the Bayes rule thresholds
    # at 0.5, so recall0 = recall1 = Φ(0.5) ≈ 0.6915.
    gen = torch.Generator().manual_seed(0)
    s_train, s_test = (torch.randint(0, 2, (n,), generator=gen) for n in (5000, 10_000))
    si_train, si_test = ((s.float() + torch.randn(len(s), generator=gen))[:, None] for s in (s_train, s_test))
    data = AttackInput(torch.zeros(5000, 1), s_train, torch.zeros(10_000, 1), s_test, 2,
                       train_si=si_train, test_si=si_test)
    phi = 0.5 * (1 + math.erf(0.5 / math.sqrt(2)))
    assert SiOnlyAttacker(FAST).run(data).metrics["accuracy"] == pytest.approx(phi, abs=0.03)


P_WEEKDAY = [0.9] * 3 + [0.2] * 4
N_MLP = 4000  # training rows for the MLP attackers: enough to fit, quick on two cores


def test_side_info_attacker_beats_the_floor_when_x_carries_s() -> None:
    data = si_input(P_WEEKDAY, lambda s, g: s[:, None].float() + torch.randn(len(s), 8, generator=g), N_MLP)
    floor = SiOnlyAttacker().run(data).metrics["accuracy"]
    joint = SideInfoAttacker(FAST).run(data)
    assert joint.metrics["accuracy"] > floor + 0.05
    assert joint.logged()["attack/side_info/accuracy"] == joint.metrics["accuracy"]


def test_side_info_attacker_matches_the_floor_when_x_is_noise() -> None:
    data = si_input(P_WEEKDAY, lambda s, g: torch.randn(len(s), 24, generator=g), N_MLP)
    floor = SiOnlyAttacker().run(data).metrics["accuracy"]
    joint = SideInfoAttacker(FAST).run(data).metrics["accuracy"]
    assert joint == pytest.approx(floor, abs=0.03)


@pytest.mark.parametrize("attacker", [SideInfoAttacker(FAST), SiOnlyAttacker()])
@pytest.mark.parametrize("missing", ["train_si", "test_si"])
def test_side_info_attackers_need_si(attacker, missing: str) -> None:
    si = torch.zeros(4, 7)
    kwargs = {"train_si": si, "test_si": si, missing: None}
    data = AttackInput(torch.zeros(4, 3), torch.tensor([0, 1, 0, 1]), torch.zeros(4, 3), torch.tensor([0, 1, 0, 1]), 2,
                       **kwargs)
    with pytest.raises(ValueError, match="side information") as err:
        attacker.run(data)
    assert "\n" not in str(err.value)

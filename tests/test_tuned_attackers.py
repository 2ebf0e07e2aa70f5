"""Converged, tuned attackers: early stopping, selection on validation only, intervals, the α-MI leakage floor."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from attacks.attackers.deep import DeepAttacker
from attacks.base import AttackInput
from core.classifier import family, tune_classifier
from core.config import AttackBudget
from core.data import load_amnist
from core.metrics import balanced_accuracy_interval, wilson_interval
from core.training import EarlyStoppedFit, EarlyStopping, evaluate, shift_images
from platform.plan.spec import resolve
from trainables.shared.alpha_mi import leakage_alpha_mi

SMALL = AttackBudget(attack_epochs=6, attack_patience=2, attack_width_factors=(1.0, 2.0), attack_lrs=(1e-3, 3e-3),
                     attack_augment=(False, True), attack_rung_epochs=1)


def mlp(num_classes: int, width: int) -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(20, width), nn.ReLU(), nn.Linear(width, num_classes))


def test_early_stopping_restores_the_best_validation_weights() -> None:
    # Pure-noise labels with a wide network: validation accuracy wanders around chance while training
    # overfits, so the last epoch is (almost surely) not the best one and restoring must matter.
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(300, 20, generator=gen), torch.randint(0, 2, (300,), generator=gen)
    vx, vy = torch.randn(300, 20, generator=gen), torch.randint(0, 2, (300,), generator=gen)
    torch.manual_seed(0)
    model = mlp(2, 256)
    fit = EarlyStoppedFit(model, (x, y), (vx, vy), 2, stopping=EarlyStopping(max_epochs=40, patience=3),
                          batch_size=32, lr=3e-3, generator=gen)
    fit.run()
    last = evaluate(model, vx, vy, 2)
    log = fit.finish()
    assert log.epochs == log.best_epoch + 3 and not log.capped  # patience ran out, so the cap did not stop it
    assert evaluate(model, vx, vy, 2) == pytest.approx(log.best_val_accuracy)
    assert log.best_val_accuracy > last


def test_the_cap_is_reported_when_it_stops_a_still_improving_attacker() -> None:
    gen = torch.Generator().manual_seed(1)
    w = torch.randn(20, generator=gen)
    x = torch.randn(2000, 20, generator=gen)
    y = (x @ w > 0).long()
    fit = EarlyStoppedFit(mlp(2, 32), (x[:1500], y[:1500]), (x[1500:], y[1500:]), 2,
                          stopping=EarlyStopping(max_epochs=1, patience=3), batch_size=64, lr=1e-3, generator=gen)
    fit.run()
    assert fit.finish().capped


def test_selection_never_reads_the_test_split() -> None:
    train, test, _ = load_amnist(n_train=600, n_test=300, seed=0)
    attacker = DeepAttacker(SMALL, width=4)
    honest = attacker.run(AttackInput(train.x, train.thick, test.x, test.thick, 2)).metrics
    # The same training split with a test split whose labels are flipped and images replaced by noise:
    # everything about the fit and the choice must be identical, only the test score may move.
    poisoned = attacker.run(AttackInput(train.x, train.thick, torch.rand_like(test.x), 1 - test.thick, 2)).metrics
    chosen = ("val_accuracy", "epochs", "best_epoch", "capped", "candidates", "chosen_width", "chosen_lr", "chosen_augment")
    assert {k: honest[k] for k in chosen} == {k: poisoned[k] for k in chosen}
    assert honest["accuracy"] != poisoned["accuracy"]
    assert honest["candidates"] == len(family(SMALL, 4)) == 8


def test_halving_and_full_search_both_choose_the_best_validation_member() -> None:
    gen = torch.Generator().manual_seed(2)
    w = torch.randn(20, generator=gen)
    x = torch.randn(800, 20, generator=gen)
    y = (x @ w + 0.5 * torch.randn(800, generator=gen) > 0).long()
    for search in ("halving", "full"):
        budget = AttackBudget(attack_epochs=8, attack_patience=2, attack_width_factors=(1.0, 4.0), attack_lrs=(1e-3, 1e-2),
                              attack_augment=(False,), attack_search=search, attack_rung_epochs=1)
        fit = tune_classifier(mlp, x, y, 2, budget, base_width=8)
        assert fit.log.best_val_accuracy == max(fit.val_scores.values()) == fit.val_scores[fit.candidate.label]
        assert fit.log.best_val_accuracy > 0.8


def test_shifts_move_whole_images_and_keep_their_mass() -> None:
    x = torch.zeros(64, 1, 12, 12)
    x[:, 0, 5:7, 5:7] = 1.0
    shifted = shift_images(x, torch.Generator().manual_seed(0), max_shift=2)
    assert torch.equal(shifted.sum((1, 2, 3)), x.sum((1, 2, 3)))  # a 2×2 blob 2 px from any border stays whole
    moved = (shifted != x).flatten(1).any(1)
    assert 0.8 < moved.float().mean() < 1.0  # 24 of 25 shifts move it


@pytest.mark.parametrize("n, p", [(50, 0.9), (200, 0.7), (1000, 0.55)])
def test_wilson_interval_covers_a_known_binomial_95_percent_of_the_time(n: int, p: float) -> None:
    rng = np.random.default_rng(0)
    draws = rng.binomial(n, p, size=4000)
    covered = np.mean([lo <= p <= hi for lo, hi in (wilson_interval(k, n) for k in draws)])
    assert 0.93 <= covered <= 0.98  # Wilson oscillates around 95 % with n (discreteness), never far


def test_balanced_accuracy_interval_is_wilson_for_one_class_and_covers_for_two() -> None:
    target = torch.zeros(100, dtype=torch.long)
    pred = torch.cat([torch.zeros(80, dtype=torch.long), torch.ones(20, dtype=torch.long)])
    assert balanced_accuracy_interval(pred, target, 2) == pytest.approx(wilson_interval(80, 100))
    # Two classes of 300 and 100 samples with recalls 0.8 and 0.6: balanced accuracy 0.7.
    rng = np.random.default_rng(1)
    target = torch.cat([torch.zeros(300, dtype=torch.long), torch.ones(100, dtype=torch.long)])
    hits = 0
    for _ in range(1500):
        right = torch.from_numpy(np.r_[rng.random(300) < 0.8, rng.random(100) < 0.6])
        pred = torch.where(right, target, 1 - target)
        lo, hi = balanced_accuracy_interval(pred, target, 2)
        hits += lo <= 0.7 <= hi
    assert 0.93 <= hits / 1500 <= 0.97


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0, 10.0, math.inf])
def test_alpha_mi_leakage_is_zero_for_uninformative_and_never_negative(alpha: float) -> None:
    uniform = torch.full((500, 2), 0.5)
    constant = torch.tensor([[0.8, 0.2]]).repeat(500, 1)  # sure of one class, whatever Y is: still no information
    assert float(leakage_alpha_mi(uniform, alpha)) == pytest.approx(0.0, abs=1e-6)
    assert float(leakage_alpha_mi(constant, alpha)) == pytest.approx(0.0, abs=1e-6)
    random = torch.rand(500, 2, generator=torch.Generator().manual_seed(3)).softmax(1)
    assert float(leakage_alpha_mi(random, alpha)) >= 0.0
    certain = torch.nn.functional.one_hot(torch.arange(500) % 2, 2).float()
    assert float(leakage_alpha_mi(certain, alpha)) == pytest.approx(1.0, abs=1e-5)


def test_equivalent_lambda_zero_points_run_once() -> None:
    spec = resolve("amnist", "quick", ["alpha=0.5,1,2", "lam=0,1"])
    points = [(p["alpha"], p["lam"]) for p in spec.grid_points()]
    assert sorted(points) == [(0.5, 1.0), (1.0, 0.0), (1.0, 1.0), (2.0, 1.0)]
    assert len(spec.product_points()) == 6


def test_attackers_standardise_so_a_tiny_input_range_costs_nothing() -> None:
    # Released images can live in a sliver of [0, 1] (near-black releases); the family standardises each feature
    # with its training part's statistics, so an affine squeeze of the inputs changes no prediction.
    gen = torch.Generator().manual_seed(3)
    w = torch.randn(20, generator=gen)
    x, tx = torch.randn(600, 20, generator=gen), torch.randn(400, 20, generator=gen)
    y, ty = (x @ w > 0).long(), (tx @ w > 0).long()
    budget = AttackBudget(attack_epochs=5, attack_patience=2, attack_width_factors=(1.0,), attack_lrs=(3e-3,),
                          attack_augment=(False,))
    plain = tune_classifier(mlp, x, y, 2, budget, 16)
    squeezed = tune_classifier(mlp, 0.02 * x + 0.5, y, 2, budget, 16)
    assert torch.equal(plain.model(tx).argmax(1), squeezed.model(0.02 * tx + 0.5).argmax(1))
    assert plain.log == squeezed.log
    assert evaluate(plain.model, tx, ty, 2) > 0.75  # chance is 0.5


def test_a_stored_fit_is_the_fit_training_gives_and_an_identity_release_reads_it(tmp_path) -> None:
    # content-addressed fits: the raw-data fit a sweep stores is read back, byte for byte the same data gets it, and
    # it equals what training would give (fitting is deterministic for a budget and seed)
    x, s = torch.rand(240, 1, 28, 28, generator=torch.Generator().manual_seed(1)), torch.arange(240) % 2
    x[s == 1, :, 10:18, 10:18] += 0.5  # a learnable secret
    test = AttackInput(x, s, x[:60], s[:60], num_classes=2, raw_train_x=x)
    stored = DeepAttacker(SMALL, cache_dir=str(tmp_path), store=True).run(test)
    assert len(list(tmp_path.glob("*.pt"))) == 1
    trained = DeepAttacker(SMALL, cache_dir=None).run(test)  # no cache: trained afresh
    assert stored.metrics == trained.metrics
    from core.classifier import FITS, cached_fit, fit_key
    FITS.forget()  # the in-process copy goes: the read comes from disk
    assert cached_fit(fit_key(x.clone(), s, 2, SMALL, 16), x, 2, str(tmp_path)) is not None
    FITS.forget()
    read = DeepAttacker(SMALL, cache_dir=str(tmp_path)).run(AttackInput(x.clone(), s, x[:60], s[:60], num_classes=2))
    assert read.metrics == stored.metrics
    other = DeepAttacker(SMALL, cache_dir=str(tmp_path)).run(AttackInput(x + 1e-3, s, x[:60], s[:60], num_classes=2))
    assert len(list(tmp_path.glob("*.pt"))) == 1 and other.metrics["val_accuracy"] > 0  # other data: trained, not stored


def test_an_attacker_reads_the_fit_stored_under_its_datas_key_instead_of_training(tmp_path) -> None:
    # a control that must fail if the lookup were skipped: a fit planted under other data's key is what comes back
    from core.classifier import FITS, fit_key
    x, s = torch.rand(120, 1, 28, 28, generator=torch.Generator().manual_seed(2)), torch.arange(120) % 2
    planted = DeepAttacker(SMALL, cache_dir=str(tmp_path), store=True).fit(x, s, 2)
    other = x.flip(0)
    FITS.path(tmp_path, fit_key(x, s, 2, SMALL, 16)).rename(FITS.path(tmp_path, fit_key(other, s, 2, SMALL, 16)))
    FITS.forget()
    read = DeepAttacker(SMALL, cache_dir=str(tmp_path)).fit(other, s, 2)
    assert read.val_scores == planted.val_scores and read.candidate == planted.candidate
    assert all(torch.equal(a, b) for a, b in zip(read.model.state_dict().values(), planted.model.state_dict().values(),
                                                 strict=True))


def test_the_raw_trained_attacker_reads_a_noisy_release_instead_of_predicting_one_class(tmp_path) -> None:
    # Images black outside their centre, as MNIST's border is: standardised per pixel with the retrained attackers' 1 %
    # floor, those pixels were divided by ~0.002 and light noise on them pushed every prediction into one class. The
    # raw-trained attacker, which reads data it was not trained on, floors at the average std.
    gen = torch.Generator().manual_seed(4)
    s = torch.arange(400) % 2
    x = torch.zeros(400, 1, 28, 28)
    x[:, :, 4:24, 4:24] = torch.rand(400, 1, 20, 20, generator=gen)
    x[s == 1, :, 10:18, 10:18] += 0.5  # a learnable secret in the centre
    train, test = x[:300], x[300:]
    noisy = test + 0.1 * torch.randn(test.shape, generator=gen)
    release = AttackInput(train, s[:300], noisy, s[300:], num_classes=2, raw_train_x=train)
    from attacks.attackers.deep import RawTrainedDeepAttacker
    one = AttackBudget(attack_epochs=4, attack_patience=2, attack_width_factors=(1.0,), attack_lrs=(3e-3,),
                       attack_augment=(False,))
    raw = RawTrainedDeepAttacker(one, cache_dir=str(tmp_path)).run(release)
    assert raw.metrics["accuracy"] > 0.9
    brittle = DeepAttacker(one, cache_dir=None).fit(train, s[:300], 2)  # the 1 % floor, trained on the same images
    assert brittle.model(noisy).argmax(1).unique().numel() == 1  # the control: one class for every noisy image


def stuck_at_chance(seed: int = 2) -> EarlyStoppedFit:
    """A learnable task whose network starts predicting one class for every input (a large bias): for several epochs
    the validation loss falls while every prediction, and so the balanced accuracy (0.5), stays the same."""
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(20, generator=gen)
    x = torch.randn(2000, 20, generator=gen)
    y = (x @ w > 0).long()
    torch.manual_seed(seed)
    model = mlp(2, 32)
    with torch.no_grad():
        model[-1].bias.copy_(torch.tensor([30.0, -30.0]))
    return EarlyStoppedFit(model, (x[:1500], y[:1500]), (x[1500:], y[1500:]), 2,
                           stopping=EarlyStopping(max_epochs=60, patience=3), batch_size=64, lr=1e-3, generator=gen)


def test_a_fit_whose_loss_still_falls_at_chance_is_not_stopped_there() -> None:
    fit = stuck_at_chance()
    fit.run(3)
    assert fit.best == 0.5 and fit.best_epoch == 1 and not fit.stopped  # patience 3 from epoch 1 would end it here
    fit.run()
    log = fit.finish()
    assert log.best_val_accuracy > 0.9 and log.best_epoch > 4
    # the tuner's ranking: a better score first; among fits at chance, the lower validation loss
    other = stuck_at_chance()
    other.run(1)
    assert fit.rank > other.rank and other.at_chance and not fit.at_chance
    worse = stuck_at_chance()
    worse.best_loss = other.best_loss + 1.0
    worse.best = 0.5
    assert other.rank > worse.rank

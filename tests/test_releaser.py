"""The releaser game and the deep attacker on real AMNIST, run in-process (Tune is tested elsewhere)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from attacks.attackers.deep import DeepAttacker
from attacks.base import AttackInput
from core.config import BUDGET_KEYS, AttackBudget
from core.data import load_amnist
from core.image_quality import image_quality, squared_error
from core.nets import ConvReleaser, game_classifier
from trainables.releaser.config import ReleaserConfig
from trainables.releaser.mechanism import RESTART_SEED_STRIDE, Releaser
from trainables.shared.mechanism import STATE_FILE, CheckpointError
from trainables.shared.release_map import release
from trainables.shared.tune_loop import epochs as play_epochs

N_TRAIN, N_TEST = 3000, 1000


@pytest.fixture(scope="module")
def amnist():
    train, test, _ = load_amnist(n_train=N_TRAIN, n_test=N_TEST, seed=0)
    return train, test


# One configuration, early-stopped with a short cap: enough to show the direction, quick on two cores.
ONE = AttackBudget(attack_epochs=8, attack_patience=2, attack_width_factors=(1.0,), attack_lrs=(1e-3,), attack_augment=(False,))

def play(lam: float, alpha: float = 2.0, epochs: int = 3) -> dict[str, float]:
    """The trial's own loop (pre-training, the game, evaluation with a fresh deep attacker), last epoch's metrics."""
    cfg = ReleaserConfig(alpha=alpha, lam=lam, epochs=epochs, pretrain_epochs=2, n_train=N_TRAIN, n_test=N_TEST, threads=2,
                         **ONE.model_dump(include=set(BUDGET_KEYS)))  # the farm's tuned family is tested elsewhere
    outcomes = list(play_epochs(Releaser(cfg, torch.device("cpu"))))
    assert [o.epoch for o in outcomes] == list(range(1, epochs + 1))
    return outcomes[-1].metrics


def test_deep_attacker_beats_chance_on_raw_and_not_on_noise(amnist) -> None:
    train, test = amnist
    raw = DeepAttacker(ONE).run(AttackInput(train.x, train.thick, test.x, test.thick, 2))
    assert raw.metrics["accuracy"] > 0.85
    noise = torch.rand_like
    blind = DeepAttacker(ONE).run(AttackInput(noise(train.x), train.thick, noise(test.x), test.thick, 2))
    assert abs(blind.metrics["accuracy"] - 0.5) < 0.06
    logged = raw.logged()
    assert logged["attack/deep/accuracy"] == raw.metrics["accuracy"]
    assert logged["attack/deep/accuracy/ci_low"] < raw.metrics["accuracy"] < logged["attack/deep/accuracy/ci_high"]
    assert {"attack/deep/val_accuracy", "attack/deep/epochs", "attack/deep/capped"} <= set(logged)


@pytest.mark.slow  # end to end, about a minute or more: runs under -m slow (CI runs both)
def test_lambda_zero_keeps_digits_and_large_lambda_hides_thickness(amnist) -> None:
    train, test = amnist
    raw_digits = DeepAttacker(ONE).run(AttackInput(train.x, train.digit, test.x, test.digit, 10)).metrics["accuracy"]
    open_release = play(lam=0.0)
    private_release = play(lam=300.0)
    # A data user's fresh classifier reads the digits of the λ = 0 release (0.84 at 2,000 images and 4 epochs, where
    # raw images give about 0.93), and the release is the digit, not a black code (a black image scores 9.7 dB).
    assert open_release["utility/fresh_accuracy"] > raw_digits - 0.2, (raw_digits, open_release)
    assert open_release["utility/psnr"] > 12.5, open_release
    assert open_release["attack/deep/accuracy"] > 0.7  # nothing hidden at λ = 0
    # Toward chance at large λ: at λ = 300 (E‖X − Y‖² of a black image is about 84) thickness is hidden, at a price.
    assert private_release["attack/deep/accuracy"] < open_release["attack/deep/accuracy"] - 0.1
    assert open_release["utility/mse"] < private_release["utility/mse"]


def test_the_distortion_is_the_papers_and_lambda_zero_keeps_an_image() -> None:
    """With the utility term off and λ = 0 the releaser's loss is E‖X − Y‖² alone (weight 1, the paper's); after
    the warm start and an epoch of the game the release is still the digit, far above a black image's PSNR."""
    cfg = ReleaserConfig(lam=0.0, utility_ce_weight=0.0, epochs=1, pretrain_epochs=3, n_train=1024, n_test=256, width=8,
                         batch_size=32, lr=3e-3, threads=2)  # about 4 s of CPU
    game = Releaser(cfg, torch.device("cpu"))
    game.setup()
    game.pretrain()
    losses = game.train_epoch()
    assert losses["train/loss_releaser"] == pytest.approx(losses["train/squared_error"], rel=1e-6)
    with torch.no_grad():
        released = game.releaser(game.train.x[:64], game.gen)
    assert squared_error(released, game.train.x[:64]).item() < 0.5 * squared_error(0 * released, game.train.x[:64]).item()
    metrics = game.evaluate(attack=False)
    black = image_quality(torch.zeros_like(game.test.x), game.test.x)
    assert metrics["utility/psnr"] > black["utility/psnr"] + 6, (metrics, black)
    assert metrics["utility/ssim"] > black["utility/ssim"] + 0.3  # a black image keeps the background: SSIM 0.41
    assert metrics["utility/mean_pixel"] == pytest.approx(game.test.x.mean().item(), abs=0.05)


def test_old_configs_with_the_per_pixel_weight_still_load() -> None:
    stored = ReleaserConfig().as_dict() | {"mse_weight": 10.0}
    assert Releaser.typed(stored).squared_error_weight == 1.0
    with pytest.raises(ValueError, match="mse_weight: unknown releaser config key"):
        ReleaserConfig.from_dict(stored)  # a user's new config is told the knob went


def test_checkpoint_round_trip_and_corrupt_checkpoint(amnist, tmp_path: Path) -> None:
    cfg = ReleaserConfig(width=8)
    models = Releaser(cfg, torch.device("cpu"))
    models.build()
    torch.save({"models": models.state(), "epoch": 3, "config": cfg.as_dict()}, tmp_path / STATE_FILE)
    fresh = Releaser.restore(ReleaserConfig(width=8, seed=1).as_dict(), str(tmp_path), torch.device("cpu"), data=False)
    assert fresh.epoch == 3
    for a, b in zip(models.releaser.parameters(), fresh.releaser.parameters(), strict=True):
        assert torch.equal(a, b)

    (tmp_path / STATE_FILE).write_bytes(b"\x00truncated")
    with pytest.raises(CheckpointError, match=r"cannot restore checkpoint .*state\.pt") as info:
        Releaser.restore(cfg.as_dict(), str(tmp_path), torch.device("cpu"), data=False)
    assert "\n" not in str(info.value)
    with pytest.raises(CheckpointError):
        Releaser.restore(cfg.as_dict(), str(tmp_path / "missing"), torch.device("cpu"), data=False)


def test_a_player_behind_the_input_norm_reads_a_dimmed_release_as_a_bright_one() -> None:
    """Per-pixel batch standardisation: an affine dimming of a batch (x → 0.01·x + 0.02) changes nothing in
    training mode, and the running statistics carry it to evaluation; a bare SmallCNN sees a different input."""
    from core.nets import InputNorm, SmallCNN, game_classifier

    torch.manual_seed(0)
    x = torch.rand(64, 1, 28, 28)
    normed = game_classifier(2, 8, (1, 28, 28), input_norm=True)
    bare = game_classifier(2, 8, (1, 28, 28))
    assert isinstance(normed, InputNorm) and isinstance(bare, SmallCNN)
    dim = 0.01 * x + 0.02
    assert torch.allclose(normed(x), normed(dim), atol=1e-3)  # float32 rounding of the dimmed pixels
    assert not torch.allclose(bare(x), bare(dim), atol=1e-2)
    for _ in range(200):  # running statistics converge to the dimmed batch's
        normed(dim)
    normed.eval()
    train_mode_out = normed.train()(dim)
    assert torch.allclose(normed.eval()(dim), train_mode_out, atol=1e-2)
    assert normed.train()(dim[:1]).shape == (1, 2)  # one sample: the running statistics, no error


def test_the_membership_reference_of_a_normed_player_has_the_same_architecture() -> None:
    from core.nets import InputNorm
    from trainables.shared.image_game import classifier_reference

    x, labels = torch.rand(8, 1, 28, 28), torch.tensor([0, 1] * 4)
    for flag, kind in ((True, InputNorm), (False, torch.nn.Module)):
        cfg = ReleaserConfig(width=8)
        released: list[int] = []  # the population's release is deferred: made once, when an attack first reads it

        def release(made: list[int] = released) -> torch.Tensor:
            made.append(1)
            return x

        ref = classifier_reference(2, 1, cfg, tuple(x.shape[1:]), release, labels, None, "/tmp/unused-ref-cache",
                                   input_norm=flag)
        assert ref is not None and isinstance(ref.recipe.build(), kind)
        assert isinstance(ref.recipe.build(), InputNorm) == flag
        assert not released and ref.inputs is x and ref.queries is x and released == [1]


def restarting(every: int, steps: int = 60, seed: int = 0) -> Releaser:
    """A set-up releaser (warm start skipped: the release is the untrained net's) whose adversary restarts every ``every``
    epochs."""
    cfg = ReleaserConfig(n_train=512, n_test=256, epochs=3, pretrain_epochs=0, width=8, threads=2, seed=seed,
                         adversary_restart_every=every, adversary_restart_steps=steps)
    mechanism = Releaser(cfg, torch.device("cpu"))
    mechanism.setup()
    return mechanism


def test_a_restarted_adversary_is_fresh_trained_and_the_same_on_a_resumed_game() -> None:
    a, b = restarting(every=1), restarting(every=1)
    first = a.adversary
    a.restart_adversary()
    b.restart_adversary()
    assert a.adversary is not first  # new weights, not the old network trained on
    # seeded by the seed and the epoch: the same restart on a resumed game gives the same network
    for p, q in zip(a.adversary.parameters(), b.adversary.parameters(), strict=True):
        assert torch.equal(p, q)
    # trained on the release before the game goes on: exactly adversary_restart_steps Adam steps from its fresh weights
    steps = {int(state["step"]) for state in a.opt_a.state.values()}
    assert steps == {a.cfg.adversary_restart_steps}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(a.cfg.seed + RESTART_SEED_STRIDE)
        untrained = game_classifier(a.s_classes, a.cfg.width, a.shape, a.cfg.player_input_norm)
    assert not torch.equal(next(untrained.parameters()), next(a.adversary.parameters()))


def test_the_adversary_restarts_on_its_schedule_only() -> None:
    mechanism = restarting(every=2, steps=1)
    seen = []
    for epoch in range(4):
        mechanism.epoch = epoch
        before = mechanism.adversary
        mechanism.train_epoch()
        seen.append(mechanism.adversary is not before)
    assert seen == [True, False, True, False]
    assert restarting(every=0).cfg.adversary_restart_every == 0  # the default: never


def test_membership_references_mirror_the_adversary_since_its_last_restart() -> None:
    mechanism = restarting(every=2, steps=8)  # 512 records in batches of 128: 4 steps a pass, 8 steps = 2 passes
    assert [mechanism.adversary_epochs(e) for e in (1, 2, 3, 4)] == [2 + 1, 2 + 2, 2 + 1, 2 + 2]
    never = restarting(every=0)
    assert never.adversary_epochs(3) == never.cfg.pretrain_epochs + 3 * never.cfg.adv_steps


def pixel_response(net: torch.nn.Module, corner: tuple[int, int], probe: tuple[int, int]) -> float:
    """How much the release at ``probe`` moves when the input pixel at ``corner`` is lit (same noise both times)."""
    x = torch.zeros(1, 1, 28, 28)
    lit = x.clone()
    lit[0, 0, corner[0], corner[1]] = 1.0
    with torch.no_grad():
        moved = net(lit, torch.Generator().manual_seed(0)) - net(x, torch.Generator().manual_seed(0))
    return moved[0, 0, probe[0], probe[1]].abs().item()


def test_the_latent_code_makes_the_release_global_and_without_it_nothing_changes() -> None:
    torch.manual_seed(0)
    patchwise = ConvReleaser(8, 2)
    torch.manual_seed(0)
    unchanged = ConvReleaser(8, 2, latent=0)
    assert patchwise.state_dict().keys() == unchanged.state_dict().keys()  # old checkpoints load as before
    assert all(torch.equal(a, b) for a, b in zip(patchwise.state_dict().values(), unchanged.state_dict().values(),
                                                 strict=True))
    # without the code an output pixel sees only a patch: a pixel in the far corner leaves it untouched
    assert pixel_response(patchwise, (0, 0), (27, 27)) == 0.0 and pixel_response(patchwise, (0, 0), (1, 1)) > 0
    coded = ConvReleaser(8, 2, latent=16)
    assert coded.squeeze[1].out_features == 16 and coded.expand[0].in_features == 16 + 2
    assert pixel_response(coded, (0, 0), (27, 27)) > 0  # through the global code every pixel reaches every other
    x = torch.rand(3, 1, 28, 28)
    same = coded(x, torch.Generator().manual_seed(1)), coded(x, torch.Generator().manual_seed(1))
    assert torch.equal(*same) and not torch.equal(same[0], coded(x, torch.Generator().manual_seed(2)))  # noise joins
    game = Releaser(ReleaserConfig(latent=16, n_train=256, n_test=128, pretrain_epochs=0, width=8, threads=2, lam=10.0),
                    torch.device("cpu"))
    game.setup()  # the trial's releaser carries the code, and a round of the game trains through it
    before = game.releaser.squeeze[1].weight.clone()
    assert game.releaser.latent == 16 and math.isfinite(game.train_epoch()["train/loss_releaser"])
    assert not torch.equal(before, game.releaser.squeeze[1].weight)


def test_evaluation_reads_the_players_with_the_current_releases_statistics() -> None:
    """The in-game players standardise their inputs with running statistics that trail a release moving every step;
    evaluation first recomputes them on the current release of the training split (4 equal batches here, so the
    mean is exact), without drawing from the game's generator or touching a weight."""
    cfg = ReleaserConfig(n_train=512, n_test=256, epochs=2, pretrain_epochs=0, width=8, threads=2,
                         player_input_norm=True, batch_size=128)
    mechanism = Releaser(cfg, torch.device("cpu"))
    mechanism.setup()
    mechanism.train_epoch()
    drawn = mechanism.gen.get_state()
    weights = [p.clone() for net in (mechanism.utility, mechanism.adversary) for p in net.parameters()]
    mechanism.release_test()  # what evaluation draws first; the training split is released from there
    after = mechanism.gen.get_state()
    released = release(mechanism.releaser, mechanism.train.x, mechanism.gen)
    mechanism.gen.set_state(drawn)
    flat = released.flatten(1)
    batch_vars = torch.stack([b.var(0) for b in flat.split(128)]).mean(0)

    def matches(player: torch.nn.Module) -> bool:
        norm = player.norm
        return (torch.allclose(norm.running_mean, flat.mean(0), atol=1e-5)
                and torch.allclose(norm.running_var, batch_vars, rtol=1e-3, atol=1e-9))

    for player in (mechanism.utility, mechanism.adversary):
        player.norm.reset_running_stats()  # a control: statistics from elsewhere do not match
        assert not matches(player)
    mechanism.evaluate(attack=False)
    assert all(matches(p) for p in (mechanism.utility, mechanism.adversary))
    assert torch.equal(mechanism.gen.get_state(), after)  # it drew only the released test split's noise, as before
    now = [p for net in (mechanism.utility, mechanism.adversary) for p in net.parameters()]
    assert all(torch.equal(a, b) for a, b in zip(weights, now, strict=True))

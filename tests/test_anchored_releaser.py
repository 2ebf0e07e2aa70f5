"""The anchored releaser: with its residual at zero it releases exactly what the digit prototype releases, every pixel
stays within its bound of the prototype however hard λ pushes, its privacy term is the mean over the current and the
replayed adversaries, and the farm and serving restore the release a trained trial scored."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import torch

from core.image_quality import psnr
from search_spaces import presets
from trainables.anchored.mechanism import AnchoredReleaser
from trainables.prototype.mechanism import DigitPrototypeBaseline
from trainables.shared.alpha_mi import normalised_alpha_mi
from trainables.shared.tune_loop import write_checkpoint

SMOKE = {"n_train": 512, "n_test": 256, "attack_epochs": 1}
GAME = SMOKE | {"pretrain_epochs": 1, "width": 8, "player_input_norm": True, "adversary_restart_every": 1,
                "adversary_restart_steps": 3}


def anchored(**config) -> AnchoredReleaser:
    """A smoke-sized anchored releaser, set up and pretrained."""
    trial = AnchoredReleaser.create(GAME | config)
    trial.setup()
    trial.pretrain()
    return trial


def played(trial: AnchoredReleaser, epochs: int) -> AnchoredReleaser:
    """``trial`` after ``epochs`` epochs of its game."""
    for _ in range(epochs):
        trial.train_epoch()
        trial.epoch += 1
    return trial


def test_the_zero_residual_releases_the_digit_prototype_exactly() -> None:
    trial = anchored(lam=0.0)
    prototype = DigitPrototypeBaseline.create(SMOKE)
    prototype.setup()
    prototype.pretrain()  # the same classifier, read from the store by its data's content
    x = trial.test.x
    assert torch.equal(trial.net(x, trial.gen), prototype.net(x, prototype.gen))


@pytest.mark.parametrize("push", [10.0, -10.0])
def test_every_pixel_stays_within_the_bound_of_the_prototype_however_hard_the_residual_pushes(push: float) -> None:
    trial = anchored(lam=1000.0, residual_bound=0.1)
    torch.nn.init.constant_(trial.net.residual.decoder[-1].bias, push)  # the residual at its limit everywhere
    x = trial.test.x
    with torch.no_grad():
        release, anchor = trial.net(x, trial.gen), trial.net.anchor(x, trial.gen)
    torch.testing.assert_close(release, (anchor + 0.1 * torch.tanh(torch.tensor(push))).clamp(0, 1))
    assert (release - anchor).abs().max() <= 0.1 + 1e-6  # never black, never the raw image: the prototype ± 0.1


def test_at_lambda_zero_the_residual_gives_detail_back() -> None:
    trial = anchored(lam=0.0, n_train=2048, player_input_norm=False)
    x = trial.test.x
    before = psnr(trial.net(x, trial.gen).detach(), x)
    played(trial, epochs=3)
    assert psnr(trial.net(x, trial.gen).detach(), x) > before + 1.0


def test_the_privacy_term_is_the_mean_over_the_current_and_the_replayed_adversaries() -> None:
    trial = played(anchored(lam=10.0, replay=2), epochs=4)
    # the first restart replaces the raw-trained adversary (not replayed); the next three are kept, the newest two
    assert len(trial.replayed) == 2
    assert all(trial.adversary is not old for old in trial.replayed)
    assert not any(p.requires_grad for old in trial.replayed for p in old.parameters())
    y = trial.net(trial.test.x[:128], trial.gen)
    by_hand = sum(normalised_alpha_mi(a(y).softmax(1), trial.prior, 1.0)
                  for a in (trial.adversary, *trial.replayed)) / 3
    torch.testing.assert_close(trial.privacy_term(y), by_hand)
    alone = AnchoredReleaser.create(GAME | {"lam": 10.0, "replay": 0})
    alone.setup()
    alone.adversary, alone.prior = trial.adversary, trial.prior
    torch.testing.assert_close(alone.privacy_term(y), normalised_alpha_mi(trial.adversary(y).softmax(1), trial.prior, 1.0))


def test_the_farm_serving_and_a_resumed_game_restore_the_trained_release() -> None:
    config = GAME | {"lam": 100.0, "replay": 2}
    trial = played(anchored(**config), epochs=3)
    with tempfile.TemporaryDirectory() as folder:
        trial.release_test()  # what the checkpoint's figure draws
        write_checkpoint(trial, Path(folder))
        farm = AnchoredReleaser.checkpoint_inputs(config, folder)
        torch.testing.assert_close(farm.data.test_x, trial.released_splits().data.test_x)  # the farm's own noise draw
        assert {t.name for t in farm.targets} == {"utility", "adversary"}
        served = AnchoredReleaser.load_release(config, folder).release(trial.test.x[:8], seed=0)
        torch.testing.assert_close(served, trial.net(trial.test.x[:8], torch.Generator().manual_seed(0)))
        resumed = AnchoredReleaser.restore(config, folder)
    assert len(resumed.replayed) == 2
    for old, back in zip(trial.replayed, resumed.replayed, strict=True):
        for key, value in old.state_dict().items():
            torch.testing.assert_close(back.state_dict()[key], value)


def test_the_anchored_preset_runs_the_three_comparison_grids_on_its_data() -> None:
    preset = presets()["anchored"]
    assert preset.comparison_grids == ("noise", "stroke-redraw", "digit-prototype")
    assert preset.mechanism is AnchoredReleaser

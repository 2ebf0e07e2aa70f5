"""The image games' warm start, computed once per (data, seed, recipe) and shared by every trial of a grid: a trial
that reads it continues exactly as the one that computed it; a grid's trials train it once; a recipe trains its own."""
from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest
import torch

from trainables.privatizer.mechanism import Privatizer
from trainables.releaser.config import ReleaserConfig
from trainables.releaser.mechanism import Releaser
from trainables.shared.image_game import ImageGame
from trainables.shared.pretrain_cache import PRETRAINED, pretrain_key
from trainables.shared.tune_loop import epochs as play_epochs

# about a second of CPU per trial: the first of two epochs runs no attacker
TINY = {"n_train": 256, "n_test": 128, "width": 8, "batch_size": 64, "pretrain_epochs": 1, "epochs": 2,
        "checkpoint_every": 2, "threads": 1}


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def trial(mechanism: type[ImageGame], cache: Path | None, **config) -> tuple[ImageGame, dict[str, float]]:
    """A trial's own loop (warm start, one epoch) with its warm starts shared through ``cache``; the first epoch's metrics."""
    game = mechanism(mechanism.config_class(**TINY | config), torch.device("cpu"))
    game.pretrain_dir = None if cache is None else str(cache)
    first = next(iter(play_epochs(game)))
    return game, first.metrics


def game_metrics(metrics: dict[str, float]) -> dict[str, float]:
    """The metrics a game computes (no timings, no cache flag)."""
    return {k: v for k, v in metrics.items() if not k.startswith(("time/", "pretrain/"))}


def same(a, b) -> bool:
    """Equal to the last bit: nested states of tensors, numbers and containers."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    return a == b


def stored(cache: Path) -> list[Path]:
    return sorted(cache.glob("pretrain-*.pt"))


@pytest.mark.parametrize(("mechanism", "config"), [(Releaser, {"lam": 30.0}), (Privatizer, {"algorithm": 2})])
def test_a_trial_reading_the_pretrain_continues_exactly_as_the_one_that_computed_it(tmp_path: Path, mechanism,
                                                                                      config) -> None:
    computed, first = trial(mechanism, tmp_path, **config)
    loaded, again = trial(mechanism, tmp_path, **config)
    assert (first["pretrain/cached"], again["pretrain/cached"]) == (0.0, 1.0)
    # the same epoch to the last digit: the networks, the optimisers' moments and the generators all carried over
    assert game_metrics(again) == game_metrics(first)
    assert same(loaded.state(), computed.state())
    # ... and a trial without the store computes the same game
    _, alone = trial(mechanism, None, **config)
    assert game_metrics(alone) == game_metrics(first)
    assert "pretrain/cached" not in alone and alone["time/pretrain_s"] > 0


def test_two_trials_of_one_grid_train_the_pretrain_once(tmp_path: Path) -> None:
    _, first = trial(Releaser, tmp_path, lam=0.0)
    _, second = trial(Releaser, tmp_path, lam=100.0, alpha=float("inf"), adv_steps=2)
    assert (first["pretrain/cached"], second["pretrain/cached"]) == (0.0, 1.0)
    assert len(stored(tmp_path)) == 1
    assert second["time/pretrain_s"] < first["time/pretrain_s"]
    assert game_metrics(second) != game_metrics(first)  # the games differ: only their start is shared


def test_a_changed_recipe_trains_its_own_pretrain(tmp_path: Path) -> None:
    _, first = trial(Releaser, tmp_path)
    _, longer = trial(Releaser, tmp_path, pretrain_epochs=2)
    _, wider = trial(Releaser, tmp_path, width=12)
    assert (first["pretrain/cached"], longer["pretrain/cached"], wider["pretrain/cached"]) == (0.0, 0.0, 0.0)
    assert len(stored(tmp_path)) == 3


def key(config: dict, records: tuple[torch.Tensor, ...] | None = None, device: str = "cpu") -> str:
    cfg = ReleaserConfig(**TINY | config)
    records = records or (torch.zeros(4, 1, 28, 28), torch.zeros(4, dtype=torch.long))
    return pretrain_key("releaser", cfg.as_dict(), Releaser.game_knobs, records, torch.device(device))


RECIPE = {"seed": 1, "width": 12, "noise_channels": 2, "pretrain_epochs": 2, "lr": 3e-3, "releaser_lr": 1e-4,
          "batch_size": 32, "player_input_norm": True, "n_train": 300, "dataset": "mnist32", "threads": 2}
GAME = {"lam": 300.0, "alpha": 2.0, "adv_steps": 5, "epochs": 9, "squared_error_weight": 2.0, "utility_ce_weight": 0.5,
        "clip_norm": 1.0, "adversary_restart_every": 2, "adversary_restart_steps": 7, "checkpoint_every": 3,
        "attack_epochs": 3, "attack_records": 5000, "n_test": 64, "samples_in_figure": 4, "distortion_target": 20.0,
        "multiplier_lr": 0.1, "multiplier_kp": 1.0}


@pytest.mark.parametrize(("knob", "value"), RECIPE.items())
def test_every_knob_of_the_recipe_moves_the_key(knob: str, value) -> None:
    assert key({knob: value}) != key({})


@pytest.mark.parametrize(("knob", "value"), GAME.items())
def test_the_games_own_knobs_leave_the_key(knob: str, value) -> None:
    assert key({knob: value}) == key({})


def test_other_records_or_another_device_move_the_key() -> None:
    x, s = torch.zeros(4, 1, 28, 28), torch.zeros(4, dtype=torch.long)
    one_pixel = x.clone()
    one_pixel[2, 0, 3, 3] = 1.0
    assert key({}, (one_pixel, s)) != key({}, (x, s))
    assert key({}, (x, s), device="cuda") != key({}, (x, s))


def test_the_games_own_knobs_do_not_touch_the_pretrain() -> None:
    """The knobs the key leaves out change nothing a warm start computes (what makes sharing it sound); the squared
    error's weight, which the warm start never moves, is not part of it."""
    def warm(config: dict) -> dict:
        game = Releaser(ReleaserConfig(**TINY | config), torch.device("cpu"))
        game.pretrain_dir = None
        game.setup()
        game.pretrain()
        return game.pretrained_state()

    plain, other = warm({}), warm({k: v for k, v in GAME.items() if k not in {"n_test", "attack_records"}})
    assert same(plain, other)


def _compute_slowly(folder: str, marks: str, tag: str) -> None:
    def compute() -> dict:
        (Path(marks) / tag).touch()
        time.sleep(0.5)
        return {"w": torch.ones(3)}
    state, _ = PRETRAINED.stored_or_computed(folder, "x", compute)
    assert torch.equal(state["w"], torch.ones(3))


def test_concurrent_trials_compute_once_and_a_damaged_file_is_computed_again(tmp_path: Path) -> None:
    path, marks = PRETRAINED.path(tmp_path, "x"), tmp_path / "marks"
    marks.mkdir()
    fork = multiprocessing.get_context("fork")
    workers = [fork.Process(target=_compute_slowly, args=(str(tmp_path), str(marks), str(i))) for i in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert [w.exitcode for w in workers] == [0, 0, 0]
    assert len(list(marks.iterdir())) == 1  # one computed, the others waited and read
    assert not list(tmp_path.glob("*.tmp"))

    path.write_bytes(b"\x00half a file")
    state, cached = PRETRAINED.stored_or_computed(tmp_path, "x", lambda: {"w": torch.zeros(2)})
    assert not cached and torch.equal(state["w"], torch.zeros(2))
    assert torch.equal(PRETRAINED.stored_or_computed(tmp_path, "x", dict)[0]["w"], torch.zeros(2))


def test_every_stored_fit_and_pretrain_is_keyed_by_the_codes_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit of the code (another version) must never be answered by a pretrained state, a raw-data fit or a
    reference model the old code stored: every key of the one content cache holds the code's version."""
    from core import classifier, content_cache
    from core import reference_models as reference
    from core.config import AttackBudget

    x, s = torch.zeros(4, 1, 28, 28), torch.zeros(4, dtype=torch.long)
    recipe = reference.ClassifierRecipe(torch.nn.Flatten, epochs=1, batch_size=4, lr=1e-3)
    before = (key(RECIPE), classifier.fit_key(x, s, 2, AttackBudget(), 32), reference._key(recipe, x, s, 0))
    monkeypatch.setattr(content_cache, "code_version", lambda: "torch 0, source edited")
    after = (key(RECIPE), classifier.fit_key(x, s, 2, AttackBudget(), 32), reference._key(recipe, x, s, 0))
    assert all(a != b for a, b in zip(before, after, strict=True))

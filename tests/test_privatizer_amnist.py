"""The AMNIST privatizer (stochastic U-Net) in-process on real AMNIST, and its preset end to end through the CLI."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch
from conftest import REPO, SharedSweep, copy_sweep, run_sweep, store, sweep_env

from core.config import AttackBudget
from trainables.privatizer.config import PrivatizerConfig
from trainables.privatizer.mechanism import Privatizer
from trainables.privatizer.retrained import fit_temperature, retrained_secret_term
from trainables.shared.image_data import load_splits
from trainables.shared.mechanism import STATE_FILE, CheckpointError
from trainables.shared.release_map import release
from trainables.shared.tune_loop import epochs, write_checkpoint

SMALL = {"n_train": 512, "n_test": 256, "epochs": 1, "pretrain_epochs": 1, "attack_epochs": 1, "width": 8, "threads": 2}


def play(**overrides) -> tuple[Privatizer, list]:
    """The trial's own loop: the mechanism after it, and every epoch's outcome."""
    mechanism = Privatizer(PrivatizerConfig(**{**SMALL, **overrides}), torch.device("cpu"))
    return mechanism, list(epochs(mechanism))


def weights(net: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in net.parameters()]


@pytest.mark.parametrize("algorithm, fixed, trained", [(2, ("phi",), ("unet", "eta")), (3, ("phi", "eta"), ("unet",)),
                                                      (1, (), ("unet", "eta", "psi", "phi"))])
def test_algorithms_keep_exactly_their_fixed_estimators(algorithm: int, fixed: tuple, trained: tuple,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    snapshots = {}
    real_pretrain = Privatizer.pretrain

    def pretrain_then_snapshot(m: Privatizer) -> None:  # the weights the game starts from
        real_pretrain(m)
        snapshots.update({name: weights(getattr(m, name)) for name in ("unet", "eta", "psi", "phi")})

    monkeypatch.setattr(Privatizer, "pretrain", pretrain_then_snapshot)
    m, _ = play(algorithm=algorithm)
    assert set(m.frozen()) == set(fixed)
    for name in fixed:
        assert all(torch.equal(a, b) for a, b in zip(snapshots[name], weights(getattr(m, name)), strict=True)), name
        assert not any(p.requires_grad for p in getattr(m, name).parameters())
    for name in trained:
        assert not all(torch.equal(a, b) for a, b in zip(snapshots[name], weights(getattr(m, name)), strict=True)), name


@pytest.mark.slow  # end to end, about a minute or more: runs under -m slow (CI runs both)
def test_raising_alpha_trades_the_utility_term_for_the_secret_term() -> None:
    common = {"n_train": 2000, "n_test": 800, "epochs": 1, "pretrain_epochs": 3, "attack_epochs": 1, "width": 16, "algorithm": 1}
    (_, (utility_only,)), (_, (privacy_only,)) = play(alpha=0.0, **common), play(alpha=1.0, **common)
    open_m, private_m = utility_only.metrics, privacy_only.metrics
    # the in-game estimates the loss squares: α = 1 drives the secret term toward 0, α = 0 the utility term
    assert private_m["leakage/secret_term"] < open_m["leakage/secret_term"] - 0.05, (open_m, private_m)
    assert open_m["leakage/utility_term"] < private_m["leakage/utility_term"], (open_m, private_m)
    assert open_m["train/adversary_accuracy"] > 0.7  # nothing hidden at α = 0: the in-game η reads thickness


@pytest.mark.slow  # two early-stopped CNN fits on 1,000 images: about 2 CPU minutes
def test_retrained_secret_term_reads_thickness_in_raw_images_and_nothing_in_a_constant_release() -> None:
    splits = load_splits(PrivatizerConfig(n_train=1000, n_test=500))
    train, test = splits.train, splits.test
    budget = AttackBudget(attack_epochs=30, attack_patience=8)  # the log-loss sits at the prior's for a few epochs first
    raw = retrained_secret_term(train.x, train.s, test.x, test.s, 2, budget)
    assert raw["leakage/retrained_secret_term"] > 0.1 and raw["leakage/retrained_secret_accuracy"] > 0.7, raw
    constant = retrained_secret_term(torch.full_like(train.x, 0.3), train.s, torch.full_like(test.x, 0.3), test.s, 2,
                                     budget)
    # a blind estimator can only learn the prior: its mean log P(s|q)/P(s) is −KL(test labels ‖ training prior) ≈ 0
    assert abs(constant["leakage/retrained_secret_term"]) < 0.02, constant
    assert constant["leakage/retrained_secret_accuracy"] == 0.5


def test_temperature_undoes_a_known_overconfidence() -> None:
    gen = torch.Generator().manual_seed(0)
    true_logits = 2 * torch.randn(5000, 3, generator=gen)
    labels = torch.multinomial(true_logits.softmax(1), 1, generator=gen).squeeze(1)
    assert fit_temperature(3 * true_logits, labels) == pytest.approx(3, rel=0.1)
    assert fit_temperature(true_logits / 2, labels) == pytest.approx(0.5, rel=0.1)


def test_checkpoint_serves_the_same_release_and_feeds_the_farm(tmp_path: Path) -> None:
    cfg = PrivatizerConfig(**SMALL, algorithm=2)
    m, outcomes = play(algorithm=2)
    metrics = outcomes[-1].metrics  # a checkpoint epoch: the in-game and the retrained secret terms side by side
    assert {"leakage/secret_term", "leakage/retrained_secret_term", "leakage/retrained_secret_accuracy"} <= set(metrics)
    # the game's curves every epoch: its distortion and how hard it pushes the U-Net
    assert {"utility/squared_error", "utility/psnr", "utility/ssim"} <= set(metrics)
    assert all(o.metrics["train/privatizer_grad_norm"] > 0 for o in outcomes)
    write_checkpoint(m, tmp_path)
    assert (tmp_path / "released.png").stat().st_size > 1000
    served = Privatizer.load_release(cfg.as_dict(), str(tmp_path))
    x = m.test.x[:16]
    offline = release(m.unet, x, torch.Generator().manual_seed(7))
    assert torch.equal(served.release(x, seed=7), offline)
    assert not torch.equal(served.release(x, seed=8), offline)  # the release is stochastic
    assert served.input_shape == (1, 28, 28) and served.mechanism == "privatizer"

    inputs = Privatizer.checkpoint_inputs(cfg.as_dict(), str(tmp_path))
    assert inputs.data.train_x.shape == (512, 1, 28, 28) and inputs.data.raw_train_x is not None
    assert [t.name for t in inputs.targets] == ["utility", "adversary"]
    assert inputs.targets[0].model is not None

    (tmp_path / STATE_FILE).write_bytes(b"\x00truncated")
    with pytest.raises(CheckpointError, match=r"cannot restore checkpoint .*state\.pt"):
        Privatizer.restore(cfg.as_dict(), str(tmp_path), torch.device("cpu"), data=False)


@pytest.mark.parametrize("override, message", [({"alpha": 1.5}, "alpha: must be in [0, 1] (got 1.5)"),
                                               ({"algorithm": 4}, "algorithm: must be in [1, 3] (got 4)"),
                                               ({"estimator_steps": 0}, "estimator_steps: must be in [1, 1000] (got 0)"),
                                               ({"estimator_lr": 0}, "estimator_lr: must be in (0, 10] (got 0)")])
def test_config_rejects_in_one_line(override: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        PrivatizerConfig.from_dict(override)


def test_estimator_lr_steps_only_the_learned_estimators_and_defaults_to_lr() -> None:
    default, faster = (Privatizer(PrivatizerConfig(**{**SMALL, **extra}), torch.device("cpu"))
                       for extra in ({}, {"estimator_lr": 3e-3}))
    for m in (default, faster):
        m.build()
    assert default.opt_est is not None and faster.opt_est is not None
    assert [g["lr"] for g in default.opt_est.param_groups] == [default.cfg.lr] == [1e-3]
    assert [g["lr"] for g in faster.opt_est.param_groups] == [3e-3]
    assert [g["lr"] for g in faster.opt_q.param_groups] == [1e-3]  # the U-Net keeps lr


def test_bad_alpha_on_the_command_line_exits_2_before_ray(workdir: Path) -> None:
    out = run_sweep(workdir, "amnist-privatizer", "--profile", "smoke", "--set", "alpha=0,1.5", timeout=60)
    assert out.returncode == 2 and "alpha: must be in [0, 1] (got 1.5)" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (workdir / "mlflow.db").exists()


@pytest.mark.slow  # end to end, about a minute or more: runs under -m slow (CI runs both)
def test_smoke_sweep_logs_the_privatizer_beside_the_releaser(smoke_sweep: SharedSweep, tmp_path: Path) -> None:
    # into a copy of the session's releaser smoke sweep (the comparison's second front), with the attackers whose
    # numbers it reads (the reference-model attacks: test_mia_control)
    workdir = copy_sweep(smoke_sweep, tmp_path / "store")
    out = run_sweep(workdir, "amnist-privatizer", "--profile", "smoke", "--attackers", "deep_raw,thickness,yeom")
    assert out.returncode == 0, out.stderr[-3000:]
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-amnist-privatizer")
    runs = client.search_runs([exp.experiment_id])
    (parent,) = [r for r in runs if r.data.tags.get("putlab.role") == "sweep"]
    children = [r for r in runs if r.data.tags.get("putlab.role") == "trial"]
    assert {"front/hypervolume", "baseline/utility/accuracy", "baseline/attack/deep/accuracy"} <= set(parent.data.metrics)
    assert sorted(c.data.params["alpha"] for c in children) == ["0.0", "1.0"]
    for child in children:
        metrics = child.data.metrics
        assert child.data.params["mechanism"] == "privatizer" and child.data.params["algorithm"] == "2"
        for key in ("utility/accuracy", "utility/provider_accuracy", "utility/fresh_accuracy", "attack/deep/accuracy",
                    "attack/deep_raw/accuracy", "attack/thickness/accuracy", "attack/yeom/advantage", "attack/max/accuracy",
                    "leakage/secret_term", "train/loss_privatizer"):
            assert key in metrics, key
        assert metrics["attack/max/accuracy"] == max(metrics[f"attack/{a}/accuracy"] for a in ("deep", "deep_raw", "thickness"))
        assert [a.path for a in client.list_artifacts(child.info.run_id, "figures")] == ["figures/epoch001_released.png"]

    compared = subprocess.run([sys.executable, "-m", "platform.compare", "putlab-amnist-privatizer", "putlab-amnist",
                               "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}"],
                              cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=120)
    assert compared.returncode == 0, compared.stderr
    assert "amnist-privatizer (privatizer)" in compared.stdout and "amnist (releaser)" in compared.stdout
    (comparison,) = client.search_runs([client.get_experiment_by_name("putlab-comparisons").experiment_id])
    assert {a.path for a in client.list_artifacts(comparison.info.run_id, "comparison")} == {
        "comparison/fronts.png", "comparison/trials.csv"}
    trials = pd.read_csv(client.download_artifacts(comparison.info.run_id, "comparison/trials.csv", str(workdir)))
    assert len(trials) == 2 + 3 and trials["sweep"].nunique() == 2  # 2 privatizer trials + the releaser's 3
    for i in (0, 1):
        assert 0 <= comparison.data.metrics[f"compare/{i}/hypervolume_normalised"] <= 1


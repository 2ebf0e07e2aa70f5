"""Does the game settle? The game curves read back from a real MLflow store, the gap and verdict by hand, the figure
and the report's section; end to end through a real sweep under the slow marker."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_sweep, store
from stores import RawStore

from platform.figures.game_curves import plot_game_curves
from platform.plan.spec import preset_of
from platform.publish import log_game_curves, publish, render_stored_sweep
from platform.results import tracking
from platform.results.game import SETTLE_MARGIN, Checkpoint, GameCurves, Verdict, read_game_curves
from platform.results.summary import read_summary
from search_spaces import presets

PNG = b"\x89PNG\r\n\x1a\n"
EPOCHS = (1, 2, 3, 4)
# a game the releaser outruns: its adversary falls to chance while fresh attackers keep reading S
OUTRUN = {
    "train/adversary_accuracy": (0.80, 0.70, 0.62, 0.55),
    "utility/accuracy": (0.95, 0.93, 0.90, 0.88),
    "leakage/normalised_alpha_mi": (0.30, 0.15, 0.08, 0.02),
    "utility/squared_error": (6.0, 9.5, 12.0, 14.25),
    "utility/psnr": (21.0, 18.5, 17.0, 16.0),
    "utility/psnr_of_mse": (20.5, 18.0, 16.5, 15.5),  # the front's third axis
    "train/releaser_grad_norm": (3.5, 8.0, 12.5, 20.0),
}
# checkpoints at epochs 2 and 4: (strongest, its interval, the mechanism's own deep attacker)
OUTRUN_FRESH = {2: (0.86, (0.84, 0.88), 0.83), 4: (0.85, (0.83, 0.87), 0.80)}
SETTLED = {"train/adversary_accuracy": (0.80, 0.74, 0.71, 0.70), "utility/accuracy": (0.9, 0.85, 0.82, 0.8),
           "utility/psnr": (20.0, 19.0, 18.0, 17.0), "utility/psnr_of_mse": (19.5, 18.5, 17.5, 16.5)}
SETTLED_FRESH = {2: (0.76, None, 0.74), 4: (0.72, None, 0.71)}


def trial_run(client: RawStore, exp_id: str, parent_id: str, name: str, curves: dict, fresh: dict,
              fresh_utility: float) -> str:
    """A trial's run with per-epoch curves, and at checkpoints the fresh attackers (the strongest as the farm logs it,
    after the trial's own report) and the data user's fresh digit accuracy."""
    run_id = client.create_run(exp_id, run_name=name, tags={
        "mlflow.parentRunId": parent_id, tracking.TAG_PARENT: parent_id, tracking.TAG_TRIAL: name,
        tracking.TAG_ROLE: "trial"}).info.run_id
    client.log_params(run_id, {"alpha": 1.0, "lam": float(name.split("=")[-1]), "adv_steps": 1})
    for i, epoch in enumerate(EPOCHS):
        client.log_metrics(run_id, {k: v[i] for k, v in curves.items()} | {"epoch": epoch}, step=epoch)
        if epoch in fresh:
            client.log_metrics(run_id, {"attack/deep/accuracy": fresh[epoch][2],
                                                  "utility/fresh_accuracy": fresh_utility}, step=epoch)
    for epoch, (strongest, interval, _) in fresh.items():  # the farm, later
        bounds = {"attack/max/accuracy/ci_low": interval[0], "attack/max/accuracy/ci_high": interval[1]} if interval else {}
        client.log_metrics(run_id, {"attack/max/accuracy": strongest} | bounds, step=epoch)
    client.set_terminated(run_id, "FINISHED")
    return run_id


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[RawStore, str, dict[str, str]]:
    """A real sqlite store with an amnist sweep of three trials: one outrun, one settled, one without a game (noise-like:
    no in-game adversary); all on the front."""
    client = RawStore.open(f"sqlite:///{tmp_path_factory.mktemp('game') / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    parent_id, _ = client.start_parent(exp_id, "amnist-game", {"preset": "amnist", "profile": "quick",
                                                                         "search": "grid", "planned_trials": 3})
    runs = {"outrun": trial_run(client, exp_id, parent_id, "lam=300", OUTRUN, OUTRUN_FRESH, 0.70),
            "settled": trial_run(client, exp_id, parent_id, "lam=30", SETTLED, SETTLED_FRESH, 0.60),
            "no game": trial_run(client, exp_id, parent_id, "lam=0", {"utility/psnr_of_mse": (30, 30, 30, 30)},
                                 {4: (0.95, None, 0.95)}, 0.99)}
    # a second farm pass at epoch 4 (a re-attack): the last value logged at a step is the one read
    client.log_metrics(runs["settled"], {"attack/max/accuracy": 0.73}, step=4)
    publish(client, parent_id, presets()["amnist"])
    return client, parent_id, runs


def test_histories_read_back_with_their_epochs_and_values(sweep) -> None:
    client, _, runs = sweep
    game = read_game_curves(client, runs["outrun"], "lam=300")
    assert [c.key for c in game.curves] == ["adversary", "utility", "leakage", "squared_error", "psnr", "grad_norm"]
    for curve in game.curves:
        assert curve.epochs == list(EPOCHS) and curve.values == pytest.approx(OUTRUN[curve.metric]), curve.metric
    assert game.fresh_utility == ((2, 0.70), (4, 0.70))
    # the strongest attacker at each checkpoint, with its interval, beside the in-game adversary of the same epoch
    assert game.checkpoints == (Checkpoint(2, 0.86, 0.70, "strongest fresh attacker", 0.84, 0.88),
                                Checkpoint(4, 0.85, 0.55, "strongest fresh attacker", 0.83, 0.87))
    settled = read_game_curves(client, runs["settled"], "lam=30")
    assert settled.checkpoints[-1].fresh == 0.73  # the re-attack's value, not the first one
    assert [c.key for c in settled.curves] == ["adversary", "utility", "psnr"]  # only what the run logged
    assert not read_game_curves(client, runs["no game"], "lam=0").has_game


def test_gap_is_fresh_minus_in_game_at_each_checkpoint(sweep) -> None:
    client, _, runs = sweep
    game = read_game_curves(client, runs["outrun"], "lam=300")
    assert [c.gap for c in game.checkpoints] == pytest.approx([0.86 - 0.70, 0.85 - 0.55])  # 0.16 and 0.30
    verdict = game.verdict()
    assert verdict is not None and verdict.checkpoint.epoch == 4 and not verdict.settles
    assert verdict.line == ("the releaser outruns its adversary: the in-game adversary reads 0.55, a fresh one 0.85 "
                            "(gap +0.300) at epoch 4")
    settled = read_game_curves(client, runs["settled"], "lam=30").verdict()
    assert settled is not None and settled.settles and settled.checkpoint.gap == pytest.approx(0.03)
    assert settled.line.startswith("settles: the in-game adversary reads 0.7, a fresh one 0.73 (gap +0.030 ≤ 0.05)")


def test_without_the_farm_the_mechanisms_own_deep_attacker_is_the_fresh_one(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    run_id = client.create_run(client.ensure_experiment("game")).info.run_id
    for epoch, in_game in ((1, 0.8), (2, 0.6)):
        client.log_metrics(run_id, {"train/adversary_accuracy": in_game}, step=epoch)
    client.log_metrics(run_id, {"attack/deep/accuracy": 0.82, "attack/deep/accuracy/ci_low": 0.8}, step=2)
    client.log_metrics(run_id, {"attack/max/accuracy": 0.9}, step=3)  # no in-game adversary there: no gap
    game = read_game_curves(client, run_id, "t")
    assert game.checkpoints == (Checkpoint(2, 0.82, 0.6, "fresh deep attacker", 0.8, None),)


@pytest.mark.parametrize("fresh, settles", [(0.55, True), (0.5504, True), (0.551, False), (0.45, True)])
def test_the_game_settles_up_to_the_margin_at_three_decimals(fresh: float, settles: bool) -> None:
    # in-game 0.5: a gap of exactly the margin (0.55 − 0.5 is 0.05000000000000004 in floats) settles, as does one that
    # reads +0.050; +0.051 does not; a fresh attacker below the in-game adversary (gap < 0) settles
    verdict = Verdict(Checkpoint(4, fresh, 0.5, "strongest fresh attacker"), SETTLE_MARGIN)
    assert SETTLE_MARGIN == 0.05 and verdict.settles is settles
    assert verdict.line.startswith("settles" if settles else "the releaser outruns its adversary")


def test_figure_is_a_png_for_a_long_game_a_one_epoch_game_and_one_not_yet_attacked(sweep, tmp_path: Path) -> None:
    client, _, runs = sweep
    games = {"long": read_game_curves(client, runs["outrun"], "lam=300"),
             "one epoch": GameCurves("smoke", (read_game_curves(client, runs["settled"], "s").curves[0],), (
                 Checkpoint(1, 0.9, 0.8, "strongest fresh attacker"),)),
             "unattacked": GameCurves("early", read_game_curves(client, runs["settled"], "s").curves, ())}
    for name, game in games.items():
        path = plot_game_curves(game, tmp_path / f"{name}.png")
        data = path.read_bytes()
        assert data[:8] == PNG and len(data) > 10_000, name


def test_publish_logs_the_curves_of_every_game_and_the_report_says_whether_it_settles(sweep) -> None:
    client, parent_id, runs = sweep
    for kind, run_id in runs.items():
        logged = [a.path for a in client.list_artifacts(run_id, "game")]
        assert logged == ([] if kind == "no game" else ["game/game_curves.png"]), kind
        if logged:
            assert Path(client.download_artifacts(run_id, logged[0])).read_bytes()[:8] == PNG
    preset = preset_of(client.get_run(parent_id).data.params)
    summary = read_summary(client, parent_id, preset)
    assert summary.front.all()  # every trial is a front point, the one without a game too
    html = render_stored_sweep(client, parent_id, preset, summary)
    section = html[html.index("<h2>Does the game settle?</h2>"):html.index("<h2>", html.index("Does the game settle?"))]
    assert "gap ≤ 0.05" in section
    rows = re.findall(r'<tr class="front"><td class="text">★ (.+?)</td>', section)
    assert sorted(rows) == ["lam=30", "lam=300"]  # front trials with a game; the one without has nothing to settle
    assert "⚠ the releaser outruns its adversary: the in-game adversary reads 0.55, a fresh one 0.85" in section
    assert "<td>+0.300</td>" in section and "<td>+0.030</td>" in section
    assert "settles: the in-game adversary reads 0.7, a fresh one 0.73" in section
    assert len(re.findall(r'<img alt="lam=300?: game curves" src="data:image/webp;base64,', section)) == 2


def test_a_sweep_without_a_game_has_no_section(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    parent_id, _ = client.start_parent(exp_id, "no-game", {"preset": "amnist", "profile": "quick"})
    run_id = trial_run(client, exp_id, parent_id, "lam=0", {"utility/psnr_of_mse": (30, 30, 30, 30)}, {4: (0.9, None, 0.9)}, 0.9)
    preset = presets()["amnist"]
    assert log_game_curves(client, read_summary(client, parent_id, preset).trials) == 0
    assert client.list_artifacts(run_id, "game") == []
    assert "Does the game settle?" not in render_stored_sweep(client, parent_id, preset, read_summary(client, parent_id, preset))


@pytest.mark.slow  # a real sweep with its farm: about two minutes on 2 CPUs
def test_a_real_sweep_draws_its_game_with_the_farms_fresh_attacker_at_each_checkpoint(workdir: Path) -> None:
    out = run_sweep(workdir, "amnist", "--profile", "smoke", "--set", "alpha=2", "--set", "lam=10", "--set", "epochs=2",
                    "--set", "checkpoint_every=1", "--attackers", "deep_raw,thickness",  # the privacy attackers it reads
                    timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    client = store(workdir)
    (run,) = [r for r in client.search_runs([client.get_experiment_by_name("putlab-amnist").experiment_id])
              if r.data.tags.get(tracking.TAG_ROLE) == "trial"]
    game = read_game_curves(client, run.info.run_id, run.info.run_name)
    assert {c.key for c in game.curves} == {"adversary", "utility", "leakage", "squared_error", "psnr", "grad_norm"}
    assert all(c.epochs == [1, 2] for c in game.curves)
    # the farm's strongest attacker at both checkpoints, exactly as logged, beside the in-game adversary
    history = {m.step: m.value for m in client.get_metric_history(run.info.run_id, "attack/max/accuracy")}
    assert [(c.epoch, c.fresh, c.attacker) for c in game.checkpoints] == [
        (1, history[1], "strongest fresh attacker"), (2, history[2], "strongest fresh attacker")]
    assert [a.path for a in client.list_artifacts(run.info.run_id, "game")] == ["game/game_curves.png"]
    report = Path(next(line for line in out.stdout.splitlines() if line.startswith("report: ")).removeprefix("report: "))
    html = report.read_text(encoding="utf-8")
    verdict = game.verdict()
    assert verdict is not None and "Does the game settle?" in html and verdict.line.split(" (gap")[0] in html


def test_a_constrained_trial_draws_its_multiplier(tmp_path: Path) -> None:
    """The releaser's constrained form logs its Lagrange multiplier per epoch: the game reads it as a panel of its own
    (after the others), and the figure draws it."""
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    parent_id, _ = client.start_parent(exp_id, "constrained", {"preset": "amnist", "profile": "quick"})
    multiplier = (2.9, 4.1, 4.3, 4.0)
    run_id = trial_run(client, exp_id, parent_id, "lam=30", SETTLED | {"train/distortion_multiplier": multiplier},
                       SETTLED_FRESH, 0.6)
    game = read_game_curves(client, run_id, "lam=30")
    assert game.curves[-1].key == "multiplier" and game.curves[-1].values == pytest.approx(multiplier)
    assert plot_game_curves(game, tmp_path / "game.png").read_bytes()[:8] == PNG

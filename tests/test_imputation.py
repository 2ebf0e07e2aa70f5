"""The imputation attacker (attacks/audits/imputation.py): the best attacker that never sees the release, exact on hand-built
data, logged by the mechanisms' raw-data reference points, and shown beside the front (summary, front.csv, terminal, report)."""
from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd
import pytest
import torch
from stores import RawStore

from attacks.attackers.side_info import SiOnlyAttacker
from attacks.audits.imputation import ImputationAttacker, simplest_best
from attacks.base import AttackInput
from core.metrics import balanced_accuracy
from platform.figures.front import draw_imputation, front_figure
from platform.publish import publish, render_stored_sweep
from platform.results import tracking
from platform.results.imputation import ADDED, TAG_SOURCE, read_imputation
from platform.results.summary import format_summary
from search_spaces import presets
from search_spaces.eco import PRESET as ECO
from search_spaces.eco import SMOKE as ECO_SMOKE
from trainables.cloak.mechanism import Cloak
from trainables.eco_releaser.attack_runs import imputation_attack
from trainables.eco_releaser.mechanism import EcoReleaser
from trainables.eco_releaser.scores import position_floors
from trainables.eco_releaser.windows import load_data
from trainables.releaser.mechanism import Releaser


def released(s: torch.Tensor, u: torch.Tensor) -> AttackInput:
    """Train = test = (S, U); the released inputs are zeros the family must never need."""
    x = torch.zeros(len(s), 1)
    return AttackInput(x, s, x, s, num_classes=int(s.max()) + 1, train_u=u, test_u=u)


def test_utility_member_reads_exactly_what_the_label_says() -> None:
    u = torch.arange(10).repeat(20)
    parity = ImputationAttacker().run(released(u % 2, u)).metrics
    assert parity["utility/accuracy"] == parity["accuracy"] == 1.0 and parity["prior/accuracy"] == 0.5
    # every (u, s) pair equally often: U says nothing, so the family reads chance and the tie goes to the prior
    u, s = torch.arange(10).repeat_interleave(4), torch.tensor([0, 1]).repeat(20)
    independent = ImputationAttacker().run(released(s, u)).metrics
    assert independent["utility/accuracy"] == independent["accuracy"] == 0.5
    assert simplest_best({"utility": 0.5, "prior": 0.5}) == "prior"


def test_utility_member_is_the_best_rule_from_the_label_for_balanced_accuracy() -> None:
    """A skewed joint of U (4 values) and S (3 classes): no map from U to S scores a higher balanced accuracy (all
    3⁴ maps tried), where the per-U majority of S would not be best (the classes are unbalanced)."""
    counts = torch.tensor([[30, 5, 1], [20, 10, 4], [25, 2, 8], [40, 6, 3]])  # [u, s]
    u = torch.cat([torch.full((int(n),), i) for i, row in enumerate(counts) for n in row])
    s = torch.cat([torch.full((int(n),), j) for row in counts for j, n in enumerate(row)])
    best = max(balanced_accuracy(torch.tensor(rule)[u], s, 3) for rule in itertools.product(range(3), repeat=4))
    majority = balanced_accuracy(counts.argmax(1)[u], s, 3)
    found = ImputationAttacker().run(released(s, u)).metrics
    assert found["utility/accuracy"] == pytest.approx(best) and best > majority + 0.1


def test_eco_family_reuses_the_floors_and_fits_within_hours() -> None:
    """On synthetic ECO windows: the side-information member is the SI-only attacker, the hour and position members
    are the position floors, the within-hour members are each hour's own rule, and each baseline is its best member."""
    cfg = EcoReleaser.typed({**ECO.base, **ECO_SMOKE})
    train, test, _ = load_data(cfg, torch.device("cpu"))
    raw = AttackInput(train.x, train.occupancy, test.x, test.occupancy, num_classes=2, train_si=train.si,
                      test_si=test.si)
    got = imputation_attack(SiOnlyAttacker().budget, raw, train, test).metrics
    floors = position_floors(train, test)
    assert got["side_info/accuracy"] == SiOnlyAttacker().run(raw).metrics["accuracy"]
    assert got["hour/accuracy"] == floors["attack/hour_only/accuracy"]
    assert got["position/accuracy"] == floors["attack/position_only/accuracy"]
    for metric in ("accuracy", "accuracy_within_hour"):
        assert got[metric] == max(v for k, v in got.items() if k.endswith(f"/{metric}"))
    assert got["prior/accuracy"] == got["hour/accuracy_within_hour"] == 0.5  # the hour alone is chance within hours
    assert got["side_info_by_hour/accuracy_within_hour"] >= got["side_info/accuracy_within_hour"]


@pytest.mark.slow  # raw-data fits on AMNIST: 17 s on 2 busy cores: runs under -m slow (CI runs both)
def test_amnist_baselines_log_the_imputation_baseline_and_raw_attackers_reach_it() -> None:
    """The releaser's raw-data reference points on a small AMNIST config log the imputation attacker (the digit's Bayes rule),
    and the control: a deep attacker that sees the raw image (digit included) is at least as strong."""
    config = {**presets()["amnist"].base, **presets()["amnist"].profiles["smoke"].config, "attack_epochs": 4}
    baselines = Releaser.raw_references(config)
    value = baselines["baseline/attack/imputation/accuracy"]
    assert baselines["baseline/attack/imputation/utility/accuracy"] == value > 0.55  # thickness rates differ by digit
    assert baselines["baseline/attack/imputation/prior/accuracy"] == 0.5
    assert baselines["baseline/attack/imputation/accuracy/ci_low"] < value < baselines[
        "baseline/attack/imputation/accuracy/ci_high"]
    assert baselines["baseline/attack/deep/accuracy/ci_high"] >= value


def test_cloak_baselines_guess_thickness_from_the_digit_the_farm_gives() -> None:
    """Cloak's raw-data reference points log the imputation attacker from the digit (the farm's ``train_u``), below the deep
    attacker on raw images."""
    preset = presets()["cloak-mnist"]
    baselines = Cloak.raw_references({**preset.base, **preset.profiles["smoke"].config})
    value = baselines["baseline/attack/imputation/accuracy"]
    assert baselines["baseline/attack/imputation/utility/accuracy"] == value > 0.55
    assert baselines["baseline/attack/deep/accuracy"] >= baselines["baseline/attack/imputation/accuracy/ci_low"]


def test_summary_report_and_front_show_the_added_leakage(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    parent_id, _ = client.start_parent(exp_id, "amnist-imputation", {"preset": "amnist", "profile": "quick"})
    client.log_metrics(parent_id, {
        "baseline/attack/imputation/accuracy": 0.62, "baseline/attack/imputation/accuracy/ci_low": 0.59,
        "baseline/attack/imputation/accuracy/ci_high": 0.65, "baseline/attack/imputation/prior/accuracy": 0.5,
        "baseline/attack/imputation/utility/accuracy": 0.62})
    for lam, utility, attack in ((0.0, 0.95, 0.90), (30.0, 0.85, 0.70), (100.0, 0.70, 0.80)):  # the last is dominated
        run_id = trial(client, exp_id, parent_id, lam)
        client.log_metrics(run_id, {"utility/fresh_accuracy": utility, "attack/max/accuracy": attack}, step=4)
        client.set_terminated(run_id, "FINISHED")
    preset = presets()["amnist"]
    summary = publish(client, parent_id, preset)

    imputation = summary.imputation
    assert imputation is not None and (imputation.value, imputation.low, imputation.source) == (0.62, 0.59, "utility")
    front = pd.read_csv(client.download_artifacts(parent_id, "front/front.csv", str(tmp_path)))
    assert sorted(front[ADDED].round(6)) == [0.08, 0.28]
    parent = client.get_run(parent_id)
    assert parent.data.tags[TAG_SOURCE] == "utility"
    assert parent.data.metrics["front/added_leakage_min"] == pytest.approx(0.08)
    assert parent.data.metrics["front/added_leakage_max"] == pytest.approx(0.28)
    line = "imputation attacker 0.62 [0.59, 0.65] on attack/max/accuracy"
    axes = summary.axes  # the amnist axes less the distortion these trials never logged
    assert [a.metric for a in axes] == ["utility/fresh_accuracy", "attack/max/accuracy"]
    text = format_summary(summary, preset.label_keys)
    assert line in text and "the front's points add +0.08 … +0.28" in text and "added" in text.splitlines()[0]
    html = render_stored_sweep(client, parent_id, preset, summary)
    assert line in html and "+0.08 … +0.28" in html
    figure = front_figure(summary.points, axes, summary.points["pareto_front"].to_numpy(), "name")
    draw_imputation(figure.axes[0], imputation, axes)
    assert any(label.startswith("imputation attacker 0.62 (utility") for label in figure.axes[0].get_legend_handles_labels()[1])


def test_ecos_front_reads_the_baseline_of_its_within_hour_axis() -> None:
    metrics = {"baseline/attack/imputation/accuracy": 0.76, "baseline/attack/imputation/accuracy/ci_low": 0.75,
               "baseline/attack/imputation/accuracy/ci_high": 0.77, "baseline/attack/imputation/accuracy_within_hour": 0.57,
               "baseline/attack/imputation/prior/accuracy_within_hour": 0.5,
               "baseline/attack/imputation/hour/accuracy_within_hour": 0.5,
               "baseline/attack/imputation/side_info_by_hour/accuracy_within_hour": 0.57,
               "baseline/attack/imputation/hour/accuracy": 0.76}
    imputation = read_imputation(metrics, list(ECO.front.axes))
    assert imputation is not None
    assert (imputation.axis, imputation.value, imputation.low, imputation.source) == (
        "attack/deep/accuracy_within_hour", 0.57, None, "side_info_by_hour")
    assert [name for name, _ in imputation.members] == ["prior", "hour", "side_info_by_hour"]
    assert read_imputation({}, list(ECO.front.axes)) is None  # a sweep from before: no line


def trial(client: RawStore, exp_id: str, parent_id: str, lam: float) -> str:
    """A trial's child run of the parent, named and tagged as the sweep names and tags its trials."""
    run = client.create_run(exp_id, run_name=f"alpha=1 lam={lam:g} adv_steps=1",
                            tags={"mlflow.parentRunId": parent_id, tracking.TAG_PARENT: parent_id,
                                  tracking.TAG_TRIAL: f"t{lam}", tracking.TAG_ROLE: "trial"})
    client.log_params(run.info.run_id, {"alpha": 1.0, "lam": lam, "adv_steps": 1})
    return run.info.run_id

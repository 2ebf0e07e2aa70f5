"""The attack farm through real Ray and MLflow: per-checkpoint attacks, the strongest attacker, re-attacks."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, SharedSweep, run_sweep, store, sweep_env


def run_attack(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "platform.attack", *args, "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}"]
    return subprocess.run(cmd, cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=300)


def history(client, run_id: str, key: str) -> list[tuple[int, float]]:
    return sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))


def trials(workdir: Path) -> list:
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-amnist")
    return client.search_runs([exp.experiment_id], filter_string="tags.`putlab.role` = 'trial'")


def test_the_farm_leaves_out_an_attacker_the_trials_fit_themselves_and_only_on_their_mechanism() -> None:
    """The releaser (an image game) fits a fresh deep attacker at every checkpoint and logs it as ``attack/deep``: a
    farm fit on another release draw would overwrite it at the same step. A comparison grid reads the sweep's request
    again, so a grid whose mechanism fits no deep attacker itself (Cloak here) still gets the farm's."""
    from platform.plan.spec import resolve
    from platform.run.comparison_grid import comparison_grid_farm
    from platform.run.farm import FarmPlan

    amnist = resolve("amnist", "smoke", [])
    requested = ("deep", "thickness", "yeom")
    farm = FarmPlan.of(amnist.preset.mechanism, print, requested, ("deep", "thickness"), {"cpu": 1})
    assert (farm.attackers, farm.requested) == (("thickness", "yeom"), requested)
    noise = comparison_grid_farm(resolve("noise", "smoke", []), farm)
    assert noise is not None and noise.attackers == ("thickness",)  # yeom: noise trains no network to test
    cloak = comparison_grid_farm(resolve("cloak-mnist", "smoke", []), farm)
    assert cloak is not None and cloak.attackers == ("deep", "thickness", "yeom")


@pytest.mark.slow  # the session's farm sweep, over half a minute: runs under -m slow (CI runs both)
def test_farm_attacks_every_checkpoint_and_max_is_the_strongest(farm_sweep: SharedSweep) -> None:
    workdir = farm_sweep.folder  # two checkpoints, the attackers whose keys it reads (RMIA and LiRA: test_mia_control)
    client = store(workdir)
    (child,) = trials(workdir)
    run_id = child.info.run_id
    for key in ("attack/deep_raw/accuracy", "attack/thickness/accuracy", "attack/thickness/accuracy_thin",
                "attack/yeom/advantage", "attack/yeom/utility/auc", "attack/yeom/adversary/tpr_at_1pct_fpr",
                "attack/max/accuracy"):
        assert [step for step, _ in history(client, run_id, key)] == [1, 2], key
    for step in (1, 2):
        scores = [dict(history(client, run_id, f"attack/{a}/accuracy"))[step] for a in ("deep", "deep_raw", "thickness")]
        assert dict(history(client, run_id, "attack/max/accuracy"))[step] == max(scores)
    assert child.data.tags["putlab.strongest_attacker"] in ("deep", "deep_raw", "thickness")
    artifacts = {a.path for a in client.list_artifacts(run_id, "attacks")}
    assert "attacks/epoch002_roc_yeom_utility.png" in artifacts, artifacts


@pytest.mark.slow  # end to end, about a minute or more: runs under -m slow (CI runs both)
def test_platform_attack_adds_missing_metrics_once(workdir: Path) -> None:
    out = run_sweep(workdir, "amnist", "--profile", "smoke", "--set", "lam=0", "--attackers", "yeom")  # one checkpoint
    assert out.returncode == 0, out.stderr[-3000:]
    client = store(workdir)
    before = {c.info.run_id: c for c in trials(workdir)}
    assert all("attack/thickness/accuracy" not in c.data.metrics for c in before.values())
    max_before = {rid: history(client, rid, "attack/max/accuracy") for rid in before}

    first = run_attack(workdir, "putlab-amnist", "--attackers", "thickness,deep_raw")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "attacked 1 checkpoint(s)" in first.stdout
    second = run_attack(workdir, "putlab-amnist", "--attackers", "thickness,deep_raw,yeom")
    assert second.returncode == 0 and "attacked 0 checkpoint(s)" in second.stdout

    for run_id in before:
        assert [s for s, _ in history(client, run_id, "attack/thickness/accuracy")] == [1]
        assert [s for s, _ in history(client, run_id, "attack/deep_raw/accuracy")] == [1]
        assert [s for s, _ in history(client, run_id, "attack/yeom/advantage")] == [1]
        after = history(client, run_id, "attack/max/accuracy")
        best = max(history(client, run_id, f"attack/{a}/accuracy")[0][1] for a in ("deep", "deep_raw", "thickness"))
        assert after[-1] == (1, best) and len(after) <= len(max_before[run_id]) + 1


def test_platform_attack_rejects_unknown_target_and_attacker(workdir: Path) -> None:
    out = run_attack(workdir, "no-such-sweep")  # no store yet: refused, and none created
    assert out.returncode == 2 and out.stderr.strip().splitlines()[-1].startswith("error: no MLflow tracking store at")
    assert not (workdir / "mlflow.db").exists()
    store(workdir).search_experiments()  # an empty store: the sweep is what is missing
    out = run_attack(workdir, "no-such-sweep")
    assert out.returncode == 2 and out.stderr.strip().splitlines()[-1].startswith("error: 'no-such-sweep' is neither")
    out = run_sweep(workdir, "amnist", "--profile", "smoke", "--attackers", "laser")
    assert out.returncode == 2 and "unknown attacker(s) laser" in out.stderr


def test_strongest_attacker_is_the_maximum_of_the_privacy_attackers(workdir: Path) -> None:
    from platform.run.farm import MAX_METRIC, TAG_STRONGEST, update_strongest

    client = store(workdir)
    run_id = client.create_run(client.create_experiment("strongest")).info.run_id
    for name, value in (("deep", 0.6), ("deep_raw", 0.8), ("thickness", 0.7), ("si_only", 0.9)):
        client.log_metric(run_id, f"attack/{name}/accuracy", value, step=1)
    update_strongest(client, run_id, 1, ("deep", "deep_raw", "thickness"))
    update_strongest(client, run_id, 1, ("deep", "deep_raw", "thickness"))  # same value: logged once
    assert history(client, run_id, MAX_METRIC) == [(1, 0.8)]
    assert client.get_run(run_id).data.tags[TAG_STRONGEST] == "deep_raw"


def test_a_catch_up_reads_the_strongest_again_over_today_s_privacy_attackers(workdir: Path) -> None:
    from platform.run.catch_up import refresh_strongest
    from platform.run.farm import MAX_METRIC, TAG_STRONGEST, update_strongest

    client = store(workdir)
    run_id = client.create_run(client.create_experiment("refresh")).info.run_id
    for step, scores in ((2, {"deep": 0.70, "fresh_adversary": 0.74}), (4, {"deep": 0.66, "fresh_adversary": 0.61})):
        for name, value in scores.items():
            client.log_metric(run_id, f"attack/{name}/accuracy", value, step=step)
        update_strongest(client, run_id, step, ("deep",))  # logged when the paper's attacker did not count
    refresh_strongest(client, [client.get_run(run_id)], ("deep", "fresh_adversary"))
    assert history(client, run_id, MAX_METRIC) == [(2, 0.70), (2, 0.74), (4, 0.66)]  # step 4: deep stays strongest
    assert client.get_run(run_id).data.tags[TAG_STRONGEST] == "deep"  # the last step's winner


def test_skipped_attackers_are_tagged_and_said_once(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from platform.run.farm import TAG_SKIPPED, report_skipped

    client = store(workdir)
    run_id = client.create_run(client.create_experiment("skipped"), run_name="trial").info.run_id
    skipped = {"rmia/utility": "needs a population for reference models (MembershipTarget.reference)"}
    report_skipped(client, run_id, 1, skipped)
    report_skipped(client, run_id, 2, skipped)  # the same skips again: no second line
    assert client.get_run(run_id).data.tags[TAG_SKIPPED] == "rmia/utility"
    assert capsys.readouterr().out.splitlines() == [
        "[trial] step 1: attacker rmia/utility skipped: needs a population for reference models (MembershipTarget.reference)"]


def test_a_reports_exposed_records_are_logged_as_csv_and_gallery(workdir: Path, tmp_path: Path) -> None:
    from attacks.audits.exposure import ExposedRecords
    from attacks.farm.checkpoint import FarmReport
    from platform.run.farm import FarmPlan, FarmScheduler

    client = store(workdir)
    run_id = client.create_run(client.create_experiment("exposed"), run_name="trial").info.run_id
    records = [ExposedRecords("yeom", "utility", (4, 0), (-1e-7, -2e-7), (0.0, 0.5), (3, 1), 2),
               ExposedRecords("rmia", "utility", (1,), (0.75,), (0.0,), (2,), 2)]
    report = FarmReport(metrics={"attack/yeom/utility/auc": 0.75}, figures={"exposed_yeom_utility.png": b"\x89PNG"},
                        exposed=records)
    FarmScheduler(client, FarmPlan(load=lambda *a: None, attackers=("yeom", "rmia"), privacy_attackers=(),
                                   resources={}))._log(run_id, 3, report)
    artifacts = {a.path for a in client.list_artifacts(run_id, "attacks")}
    assert artifacts == {"attacks/epoch003_exposed_records.csv", "attacks/epoch003_exposed_yeom_utility.png"}
    csv = Path(client.download_artifacts(run_id, "attacks/epoch003_exposed_records.csv", str(tmp_path))).read_text()
    assert csv.splitlines() == ["attacker,network,rank,index,score,fpr,label", "yeom,utility,1,4,-9.9999999999999995e-08,0,3",
                                "yeom,utility,2,0,-1.9999999999999999e-07,0.5,1", "rmia,utility,1,1,0.75,0,2"]

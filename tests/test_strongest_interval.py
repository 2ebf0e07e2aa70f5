"""``attack/max/accuracy`` carries the 95 % interval of the attacker that wins it, on a real sqlite MLflow store."""
from __future__ import annotations

from pathlib import Path

from conftest import store

from platform.run.farm import MAX_METRIC, TAG_CAPPED, TAG_STRONGEST, flag_capped, update_strongest

PRIVACY = ("deep", "deep_raw", "thickness")


def history(client, run_id: str, key: str) -> list[tuple[int, float]]:
    return sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))


def test_max_accuracy_takes_the_winners_interval(workdir: Path) -> None:
    client = store(workdir)
    run_id = client.create_run(client.create_experiment("strongest-ci")).info.run_id
    logged = {"deep": (0.6, 0.55, 0.65), "deep_raw": (0.8, 0.76, 0.84), "thickness": (0.7, 0.66, 0.74),
              "si_only": (0.9, 0.88, 0.92)}  # si_only is no privacy attacker: never the max
    for name, (acc, low, high) in logged.items():
        for key, value in (("", acc), ("/ci_low", low), ("/ci_high", high)):
            client.log_metric(run_id, f"attack/{name}/accuracy{key}", value, step=1)
    update_strongest(client, run_id, 1, PRIVACY)
    update_strongest(client, run_id, 1, PRIVACY)  # same values: logged once
    assert history(client, run_id, MAX_METRIC) == [(1, 0.8)]
    assert history(client, run_id, f"{MAX_METRIC}/ci_low") == [(1, 0.76)]
    assert history(client, run_id, f"{MAX_METRIC}/ci_high") == [(1, 0.84)]
    assert client.get_run(run_id).data.tags[TAG_STRONGEST] == "deep_raw"

    # a later report at the same step makes thickness the strongest: value and interval follow it
    for key, value in (("", 0.85), ("/ci_low", 0.81), ("/ci_high", 0.89)):
        client.log_metric(run_id, f"attack/thickness/accuracy{key}", value, step=1)
    update_strongest(client, run_id, 1, PRIVACY)
    metrics = client.get_run(run_id).data.metrics
    assert (metrics[MAX_METRIC], metrics[f"{MAX_METRIC}/ci_low"], metrics[f"{MAX_METRIC}/ci_high"]) == (0.85, 0.81, 0.89)
    assert client.get_run(run_id).data.tags[TAG_STRONGEST] == "thickness"

    client.log_metric(run_id, "attack/thickness/train_records", 5000.0, step=1)  # the winner's data budget follows it
    client.log_metric(run_id, "attack/deep_raw/train_records", 2000.0, step=1)
    update_strongest(client, run_id, 1, PRIVACY)
    assert client.get_run(run_id).data.metrics["attack/max/train_records"] == 5000.0

    run_id = client.create_run(client.create_experiment("strongest-no-ci")).info.run_id  # no interval: none logged
    client.log_metric(run_id, "attack/deep/accuracy", 0.6, step=2)
    update_strongest(client, run_id, 2, PRIVACY)
    assert set(client.get_run(run_id).data.metrics) == {"attack/deep/accuracy", MAX_METRIC}


def test_a_capped_attacker_is_tagged_and_announced(workdir: Path, capsys) -> None:
    client = store(workdir)
    run_id = client.create_run(client.create_experiment("capped"), run_name="alpha=1 lam=1").info.run_id
    for name, capped in (("deep", 1.0), ("deep_raw", 0.0)):
        client.log_metric(run_id, f"attack/{name}/capped", capped, step=4)
    assert flag_capped(client, run_id, 4, PRIVACY) == ["deep"]
    assert client.get_run(run_id).data.tags[TAG_CAPPED] == "deep"
    assert "[alpha=1 lam=1] step 4: attacker deep hit its epoch cap" in capsys.readouterr().out
    assert flag_capped(client, run_id, 2, PRIVACY) == []  # nothing logged at that step: nothing flagged

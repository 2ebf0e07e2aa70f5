"""A sweep's expected cost is priced from the newest finished sweep like it in a real sqlite MLflow store."""
from __future__ import annotations

import time
from pathlib import Path

from conftest import store

from platform.results import tracking
from platform.run.cost_estimate import CostEstimate, last_finished

FARM = ("deep_raw", "thickness")


def finished_sweep(client, exp_id: str, name: str, profile: str, wall_s: float, trials: int, baselines: int) -> None:
    """A sweep's parent run (FINISHED after ``wall_s``) with its finished trial and baseline runs."""
    time.sleep(0.005)  # start times in ms: each sweep strictly newer than the one before
    params = {"preset": "amnist", "profile": profile} | tracking.flatten("attackers", FARM)
    parent_id, _ = tracking.start_parent(client, exp_id, name, params)
    for k in range(trials + baselines):
        role = "trial" if k < trials else "baseline"
        run = client.create_run(exp_id, tags={tracking.TAG_PARENT: parent_id, tracking.TAG_ROLE: role})
        client.set_terminated(run.info.run_id, "FINISHED")
    # start_parent stamps the start time: rewrite both ends so the wall time is exact
    client.set_terminated(parent_id, "FINISHED", end_time=client.get_run(parent_id).info.start_time + int(wall_s * 1000))


def test_the_estimate_is_the_newest_like_sweeps_pace_per_trial(workdir: Path) -> None:
    client = store(workdir)
    exp_id = tracking.experiment_id(client, "putlab-amnist")
    finished_sweep(client, exp_id, "old", "quick", wall_s=3000, trials=9, baselines=6)
    finished_sweep(client, exp_id, "smoke", "smoke", wall_s=60, trials=3, baselines=2)  # another profile: not used
    finished_sweep(client, exp_id, "new", "quick", wall_s=600, trials=9, baselines=6)
    like = {"preset": "amnist", "profile": "quick"} | tracking.flatten("attackers", FARM)
    source = last_finished(client, exp_id, like)
    assert source is not None and (source.name, source.trials, source.wall_s) == ("new", 15, 600.0)
    estimate = CostEstimate(9, 6, FARM, 1, source)
    assert estimate.seconds == 600.0  # 40 s a trial, 15 trials
    assert CostEstimate(18, 12, FARM, 1, source).seconds == 1200.0  # two seeds: twice the trials
    assert estimate.line().endswith("about 10:00 here (sweep new: 15 trials in 10:00)")
    assert "9 trials + 6 baseline trials, 1 checkpoint(s) each, 2 farm attackers per checkpoint" in estimate.line()


def test_a_resumed_sweep_is_priced_by_its_minutes_of_work_not_its_span(workdir: Path) -> None:
    client = store(workdir)
    exp_id = tracking.experiment_id(client, "putlab-amnist")
    finished_sweep(client, exp_id, "resumed", "quick", wall_s=86_400, trials=9, baselines=6)  # a day from start to end
    (parent,) = client.search_runs([exp_id], filter_string="attributes.run_name = 'resumed'")
    client.log_metric(parent.info.run_id, tracking.ACTIVE_MINUTES, 10.0)  # of which it worked 10 minutes
    like = {"preset": "amnist", "profile": "quick"} | tracking.flatten("attackers", FARM)
    source = last_finished(client, exp_id, like)
    assert source is not None and source.wall_s == 600.0


def test_no_like_sweep_means_no_estimate(workdir: Path) -> None:
    client = store(workdir)
    exp_id = tracking.experiment_id(client, "putlab-amnist")
    finished_sweep(client, exp_id, "smoke", "smoke", wall_s=60, trials=3, baselines=2)
    running = tracking.start_parent(client, exp_id, "running", {"preset": "amnist", "profile": "quick"}
                                    | tracking.flatten("attackers", FARM))[0]  # not finished: not a price
    assert client.get_run(running).info.status == "RUNNING"
    like = {"preset": "amnist", "profile": "quick"} | tracking.flatten("attackers", FARM)
    assert last_finished(client, exp_id, like) is None
    assert "no finished sweep of this preset, profile and farm" in CostEstimate(9, 0, FARM, 1, None).line()

"""A sweep's expected cost is priced from the newest finished sweep like it in a real sqlite MLflow store, else in this
machine's cost ledger; ``--budget`` picks the profile those prices fit."""
from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from conftest import SMOKE_SWEEP, run_sweep, store

from platform.errors import UsageError
from platform.plan.spec import resolve
from platform.results import cost_ledger, tracking
from platform.results.cost_ledger import Measured
from platform.run.budget import choose, seconds_of
from platform.run.cost_estimate import CostEstimate, last_finished, planned_cost, process_age_s
from platform.run.speed_probe import probe_seconds

FARM = ("deep_raw", "thickness")


def finished_sweep(client, exp_id: str, name: str, profile: str, wall_s: float, trials: int, baselines: int) -> None:
    """A sweep's parent run (FINISHED after ``wall_s``) with its finished trial and baseline runs."""
    time.sleep(0.005)  # start times in ms: each sweep strictly newer than the one before
    params = {"preset": "amnist", "profile": profile} | tracking.flatten("attackers", FARM)
    parent_id, _ = client.start_parent(exp_id, name, params)
    for k in range(trials + baselines):
        role = "trial" if k < trials else "baseline"
        run = client.create_run(exp_id, tags={tracking.TAG_PARENT: parent_id, tracking.TAG_ROLE: role})
        client.set_terminated(run.info.run_id, "FINISHED")
    # start_parent stamps the start time: rewrite both ends so the wall time is exact
    client.set_terminated(parent_id, "FINISHED", end_time=client.get_run(parent_id).info.start_time + int(wall_s * 1000))


def test_the_estimate_is_the_newest_like_sweeps_pace_per_trial(workdir: Path) -> None:
    client = store(workdir)
    exp_id = client.ensure_experiment("putlab-amnist")
    finished_sweep(client, exp_id, "old", "quick", wall_s=3000, trials=9, baselines=6)
    finished_sweep(client, exp_id, "smoke", "smoke", wall_s=60, trials=3, baselines=2)  # another profile: not used
    finished_sweep(client, exp_id, "new", "quick", wall_s=600, trials=9, baselines=6)
    like = {"preset": "amnist", "profile": "quick"} | tracking.flatten("attackers", FARM)
    source = last_finished(client, exp_id, like)
    assert source is not None and (source.name, source.trials, source.wall_s) == ("new", 15, 600.0)
    estimate = CostEstimate(9, 6, FARM, 1, source)
    assert estimate.seconds == 600.0  # 40 s a trial, 15 trials
    assert CostEstimate(18, 12, FARM, 1, source).seconds == 1200.0  # two seeds: twice the trials
    assert estimate.line().endswith("about 10:00 here (sweep new on this store: 15 trials in 10:00)")
    assert "9 trials + 6 baseline trials, 1 checkpoint(s) each, 2 farm attackers per checkpoint" in estimate.line()


def test_a_resumed_sweep_is_priced_by_its_minutes_of_work_not_its_span(workdir: Path) -> None:
    client = store(workdir)
    exp_id = client.ensure_experiment("putlab-amnist")
    finished_sweep(client, exp_id, "resumed", "quick", wall_s=86_400, trials=9, baselines=6)  # a day from start to end
    (parent,) = client.search_runs([exp_id], filter_string="attributes.run_name = 'resumed'")
    client.log_metric(parent.info.run_id, tracking.ACTIVE_MINUTES, 10.0)  # of which it worked 10 minutes
    like = {"preset": "amnist", "profile": "quick"} | tracking.flatten("attackers", FARM)
    source = last_finished(client, exp_id, like)
    assert source is not None and source.wall_s == 600.0


def test_no_like_sweep_means_no_estimate(workdir: Path) -> None:
    client = store(workdir)
    exp_id = client.ensure_experiment("putlab-amnist")
    finished_sweep(client, exp_id, "smoke", "smoke", wall_s=60, trials=3, baselines=2)
    running = client.start_parent(exp_id, "running", {"preset": "amnist", "profile": "quick"}
                                    | tracking.flatten("attackers", FARM))[0]  # not finished: not a price
    assert client.get_run(running).info.status == "RUNNING"
    like = {"preset": "amnist", "profile": "quick"} | tracking.flatten("attackers", FARM)
    assert last_finished(client, exp_id, like) is None
    assert "no finished sweep like it (preset, profile, grid, farm, config, machine)" in CostEstimate(9, 0, FARM, 1, None).line()


LIKE = {"preset": "amnist", "profile": "quick", "config.epochs": "4", "machine": "1 node, 2 CPUs, no GPU"}


def test_a_sweep_in_a_new_store_is_priced_from_the_machines_ledger(workdir: Path) -> None:
    client = store(workdir)  # a new store: nothing in it to price from
    exp_id = client.ensure_experiment("putlab-amnist")
    spec = resolve("amnist", "quick", [])
    assert planned_cost(client, exp_id, spec, 9, 6, FARM, LIKE).source is None
    cost_ledger.record(LIKE, Measured("amnist-quick-1", 15, 1500.0))
    cost_ledger.record(LIKE | {"config.epochs": "8"}, Measured("amnist-quick-2", 15, 3000.0))  # another config
    cost_ledger.ledger_path().open("a").write("not a ledger line\n{\"like\": 3}\n")  # skipped, not fatal
    estimate = planned_cost(client, exp_id, spec, 9, 6, FARM, LIKE)
    assert estimate.seconds == 1500.0 and estimate.line().endswith(
        "about 25:00 here (sweep amnist-quick-1 on this machine: 15 trials in 25:00)")
    assert planned_cost(client, exp_id, spec, 18, 6, FARM, LIKE).seconds == 2400.0  # 100 s a trial
    assert planned_cost(client, exp_id, spec, 9, 6, FARM, LIKE | {"machine": "1 node, 16 CPUs, no GPU"}).source is None


def test_an_unwritable_ledger_warns_and_costs_nothing_else(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv(cost_ledger.LEDGER_ENV, str(tmp_path / "file" / "ledger.jsonl"))  # under a file: no folder
    cost_ledger.record(LIKE, Measured("amnist-quick-1", 15, 1500.0))
    assert "is not kept for the next estimate" in capsys.readouterr().err
    assert cost_ledger.newest(LIKE) is None


@pytest.mark.parametrize(("text", "seconds"), [("10m", 600), ("90s", 90), ("1h30m", 5400), ("1.5m", 90), (" 2h ", 7200)])
def test_a_budget_reads_as_a_user_writes_it(text: str, seconds: float) -> None:
    assert seconds_of(text) == seconds


@pytest.mark.parametrize("text", ["", "10", "ten minutes", "10m10h", "0m", "-5m", "1e400s"])
def test_a_budget_that_is_not_a_duration_is_one_line(text: str) -> None:
    with pytest.raises(UsageError, match=r"^--budget (takes a duration|must be a positive duration)"):
        seconds_of(text)


def priced(seconds: float | None) -> CostEstimate | None:
    """A profile's price of ``seconds`` (None: no finished sweep prices it)."""
    return None if seconds is None else CostEstimate(4, 6, FARM, 1, Measured("s", 10, seconds))


def test_the_budget_runs_the_profile_with_the_most_work_that_fits() -> None:
    prices = {"smoke": priced(65), "fast": priced(1299), "quick": priced(1528), "paper": priced(None)}
    choice = choose(prices, 1800, None)
    assert choice.profile == "quick" and choice.line.startswith("budget 30:00: profile quick, about 25:28 here")
    assert "not yet timed here: paper" in choice.line
    assert choose(prices, 600, None).profile == "smoke"
    assert choose(prices, 600, "paper").profile == "paper"  # asked for, and nothing says it will not fit
    with pytest.raises(UsageError, match=r"^--profile fast takes about 21:39 here .*, over --budget 10:00: "
                                         r"quick about 25:28, fast about 21:39, smoke about 1:05; not yet timed here: paper"):
        choose(prices, 600, "fast")
    with pytest.raises(UsageError, match=r"^no profile is known to fit --budget 0:30 on this machine: "):
        choose(prices, 30, None)


@pytest.mark.usefixtures("smoke_sweep")
def test_the_shared_sweep_prices_a_sweep_like_it_in_a_new_store(tmp_path: Path) -> None:
    """The session's smoke sweep finished and kept its cost in the ledger: the same sweep into a new store, given a
    budget it cannot meet, is refused in one line quoting that price, before it runs anything."""
    out = run_sweep(tmp_path, *SMOKE_SWEEP, "--budget", "1s", timeout=120)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr[-3000:]
    # the shared sweep's price, or that of another test's sweep like it that finished since (the ledger's newest)
    assert re.match(r"error: --profile smoke takes about \d+:\d\d here \(sweep amnist-smoke-\S+ on this machine: "
                    r"\d+ trials in \d+:\d\d; this machine \d+ % (slower|faster) now than then\), over --budget 0:01",
                    out.stderr), out.stderr
    assert "trials 0/" not in out.stdout  # nothing ran


def test_comparison_trials_copied_from_an_earlier_sweep_are_not_priced_as_run(workdir: Path) -> None:
    client = store(workdir)
    exp_id = client.ensure_experiment("putlab-amnist")
    finished_sweep(client, exp_id, "second", "quick", wall_s=600, trials=9, baselines=6)
    (parent,) = client.search_runs([exp_id], filter_string="attributes.run_name = 'second'")
    for run in client.baseline_runs(exp_id, parent.info.run_id)[:4]:  # 4 of its 6 copied, not run
        client.set_tag(run.info.run_id, tracking.TAG_REUSED_FROM, "an-earlier-run")
    like = {"preset": "amnist", "profile": "quick"} | tracking.flatten("attackers", FARM)
    source = last_finished(client, exp_id, like)
    assert source is not None and (source.trials, source.wall_s) == (11, 600.0)


def test_a_commands_start_up_is_priced_once_not_per_trial() -> None:
    source = Measured("s", 10, 600.0, "this machine", startup_s=15.0)  # 60 s a trial after a 15 s start
    assert CostEstimate(4, 0, FARM, 1, source).seconds == 15.0 + 240.0
    assert 0.0 < process_age_s() < 24 * 3600  # this test process's age, from /proc


def test_the_price_is_scaled_by_the_machines_speed_now_against_then(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cost_ledger.LEDGER_ENV, str(workdir / "ledger.jsonl"))  # the session's ledger is shared
    then = Measured("s", 10, 600.0, "this machine", startup_s=15.0, probe_s=0.2)
    slower, faster = CostEstimate(4, 0, FARM, 1, then, probe_s=0.3), CostEstimate(4, 0, FARM, 1, then, probe_s=0.15)
    assert slower.seconds == pytest.approx((15.0 + 240.0) * 1.5) and faster.seconds == pytest.approx(255.0 * 0.75)
    assert slower.line().endswith("about 6:22 here (sweep s on this machine: 10 trials in 10:00; this machine 50 % "
                                  "slower now than then)")
    assert faster.line().endswith("; this machine 25 % faster now than then)")
    untimed = replace(then, probe_s=0.0)  # a sweep recorded before probes were kept: priced as it ran
    assert CostEstimate(4, 0, FARM, 1, untimed, probe_s=0.3).seconds == 255.0
    cost_ledger.record(LIKE, then)
    assert cost_ledger.newest(LIKE) == then  # the ledger keeps the speed it ran at
    client = store(workdir)
    exp_id = client.ensure_experiment("putlab-amnist")
    finished_sweep(client, exp_id, "timed", "quick", wall_s=600, trials=9, baselines=6)
    (parent,) = client.search_runs([exp_id], filter_string="attributes.run_name = 'timed'")
    client.log_metric(parent.info.run_id, tracking.PROBE_SECONDS, 0.25)
    like = {"preset": "amnist", "profile": "quick"} | tracking.flatten("attackers", FARM)
    source = last_finished(client, exp_id, like)
    assert source is not None and source.probe_s == 0.25
    priced = planned_cost(client, exp_id, resolve("amnist", "quick", []), 9, 6, FARM, like)
    assert priced.probe_s == probe_seconds() and priced.seconds == pytest.approx(600.0 * probe_seconds() / 0.25)


def test_the_probe_times_real_work_once_and_leaves_the_threads_as_they_were() -> None:
    torch.set_num_threads(1)
    probe_seconds.cache_clear()
    first = probe_seconds()
    assert 0.0 < first < 30.0 and probe_seconds() == first and torch.get_num_threads() == 1

"""Comparison-grid trials reused from the store (platform.run.grid_reuse): their content key changes with everything
their result depends on, a stored result is copied only for its own key, once, and a second smoke sweep into the
same store reuses every comparison trial (end to end on the sweep test_interrupts stops at each later phase and
resumes) while one with another data seed or farm reuses none. So are the trials of a sweep's own grid search of
putlab's own mechanisms, from trials only."""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import REPO
from stores import RawStore

from core.code_version import source_hash
from platform.errors import UsageError
from platform.plan import resume_options
from platform.plan.comparison_grid import comparison_grid_spec
from platform.plan.content_key import GridKey, code_version, hashed
from platform.plan.spec import SweepSpec, resolve
from platform.results import tracking
from platform.results.comparison_grid import ComparisonGrid
from platform.run.grid_reuse import own_key, reuse_grid, trial_configs
from platform.sweep import parse_args, plan_sweep
from search_spaces import presets

NOISE = ComparisonGrid(presets()["noise"])
FARM = ("thickness",)
PRIVACY = presets()["amnist"].farm.privacy
KEY = GridKey("noise", FARM, PRIVACY, "cpu", code="code 1")
NEEDED = tuple(axis.metric for axis in presets()["amnist"].front.axes)
EXAMPLE = REPO / "examples" / "gaussian_noise" / "preset.py"


def noise_grid(*overrides: str) -> SweepSpec:
    """The noise grid beside an amnist smoke sweep with ``overrides`` (what the sweep runs beside its own)."""
    return comparison_grid_spec(resolve("amnist", "smoke", list(overrides)), NOISE)


def test_equal_inputs_give_equal_keys_and_every_input_of_the_result_changes_it() -> None:
    config = trial_configs(noise_grid())[0]
    assert KEY.of(config) == GridKey("noise", FARM, PRIVACY, "cpu", code="code 1").of(dict(config))
    assert KEY.of(config | {"threads": 7}) == KEY.of(config)  # how many cores ran it, not what it computed
    restored = {k: list(v) if isinstance(v, tuple) else v for k, v in config.items()}  # Tune's state is JSON
    assert restored != config and KEY.of(restored) == KEY.of(config)  # a resumed sweep's trial: the same key
    changed = {
        "farm attackers": replace(KEY, attackers=("thickness", "yeom")).of(config),
        "farm order": replace(KEY, attackers=("yeom", "thickness")).of(config),
        "privacy attackers": replace(KEY, privacy_attackers=("deep",)).of(config),
        "data seed": KEY.of(config | {"seed": config["seed"] + 1}),
        "attack budget": KEY.of(config | {"attack_epochs": config["attack_epochs"] + 1}),
        "attack patience": KEY.of(config | {"attack_patience": config["attack_patience"] + 1}),
        "subset size": KEY.of(config | {"n_train": config["n_train"] * 2}),
        "grid point": KEY.of(trial_configs(noise_grid())[1]),
        "grid preset": replace(KEY, grid="stroke-redraw").of(config),
        "device": replace(KEY, device="gpu").of(config),
        "code version": replace(KEY, code="code 2").of(config),
    }
    assert KEY.of(config) not in changed.values() and len(set(changed.values())) == len(changed), changed


def test_the_sweeps_seed_and_budget_reach_the_grids_keys() -> None:
    keys = {overrides: {KEY.of(c) for c in trial_configs(noise_grid(*overrides))}
            for overrides in [(), ("seed=1",), ("attack_epochs=2",), ("lam=0",)]}
    assert keys[()] == keys[("lam=0",)]  # the sweep's own axis is not the grid's
    assert not keys[()] & keys[("seed=1",)] and not keys[()] & keys[("attack_epochs=2",)]


def test_the_code_version_hashes_the_python_source_once_per_process(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    first = source_hash(tmp_path, ("pkg",))
    (tmp_path / "pkg" / "notes.txt").write_text("not code")
    assert source_hash(tmp_path, ("pkg",)) == first
    (tmp_path / "pkg" / "a.py").write_text("x = 2\n")
    assert source_hash(tmp_path, ("pkg",)) != first
    assert code_version() is code_version() and code_version().startswith("torch ")
    assert GridKey("noise", FARM, PRIVACY, "cpu").code == code_version()


def add_parent(client: RawStore, exp_id: str, sweep: str) -> str:
    parent_id, _ = client.start_parent(exp_id, sweep, {"preset": "amnist"})
    return parent_id


def add_result(client: RawStore, exp_id: str, parent_id: str, config: dict, key: str, metrics: dict[str, float]) -> str:
    """A finished noise trial of sweep ``parent_id`` as the trial logger and farm leave it."""
    run = client.create_run(exp_id, run_name=f"sigma={config['sigma']}", tags={
        "mlflow.parentRunId": parent_id, tracking.TAG_PARENT: parent_id, tracking.TAG_TRIAL: f"t{config['sigma']}",
        tracking.TAG_ROLE: "baseline", tracking.TAG_BASELINE: "noise", tracking.TAG_CONTENT_KEY: key,
        "putlab.strongest_attacker": "thickness"})
    client.log_params(run.info.run_id, config)
    client.log_metrics(run.info.run_id, {"epoch": 0.0}, step=0)
    client.log_metrics(run.info.run_id, metrics, step=1)
    client.set_terminated(run.info.run_id, "FINISHED")
    return run.info.run_id


def test_a_stored_result_is_copied_once_and_only_where_its_key_matches(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    grid = noise_grid()
    configs = trial_configs(grid)
    first = add_parent(client, exp_id, "sweep-1")
    metrics = [dict.fromkeys(NEEDED, 0.5 + i / 10) | {"attack/thickness/accuracy": 0.6 + i / 10} for i in range(2)]
    sources = [add_result(client, exp_id, first, c, KEY.of(c), m) for c, m in zip(configs, metrics, strict=True)]
    add_result(client, exp_id, first, configs[1] | {"seed": 5}, "some other key", metrics[1])

    second = add_parent(client, exp_id, "sweep-2")
    reused = reuse_grid(client, exp_id, second, grid, KEY, NEEDED)
    assert (reused.reused, reused.trials, reused.sweeps) == (2, 0, ("sweep-1",))
    assert reused.line() == ("noise comparison grid: 2 of 2 trials reused from sweep sweep-1; 0 to run "
                             "(--no-reuse runs them again)")
    copies = {r.data.tags[tracking.TAG_REUSED_FROM]: r for r in client.baseline_runs(exp_id, second, "noise")}
    assert sorted(r.info.run_name for r in copies.values()) == ["sigma=0", "sigma=1"]  # as the grid names its trials
    for source_id in sources:
        source = client.get_run(source_id)
        copy = copies[source_id]
        assert copy.info.status == "FINISHED" and copy.data.metrics == source.data.metrics
        assert copy.data.params == source.data.params
        assert copy.data.tags[tracking.TAG_REUSED_FROM] == source_id
        assert copy.data.tags[tracking.TAG_REUSED_SWEEP] == "sweep-1"
        assert copy.data.tags[tracking.TAG_REUSED_ARTIFACTS] == source.info.artifact_uri
        assert copy.data.tags[tracking.TAG_PARENT] == second and tracking.TAG_TRIAL not in copy.data.tags
        assert copy.data.tags["putlab.strongest_attacker"] == "thickness"
        assert [m.step for m in client.get_metric_history(copy.info.run_id, "epoch")] == [0]

    # a resumed sweep keeps its copies and copies nothing twice
    again = reuse_grid(client, exp_id, second, grid, KEY, NEEDED)
    assert (again.reused, again.trials) == (2, 0) and len(client.baseline_runs(exp_id, second)) == 2

    # another farm or data seed, --no-reuse: nothing is reused and the grid runs as it would have
    third = add_parent(client, exp_id, "sweep-3")
    for other, key, lookup in [(grid, replace(KEY, attackers=("thickness", "yeom")), "looked up"),
                               (noise_grid("seed=1"), KEY, "looked up"), (grid, KEY, "--no-reuse")]:
        none = reuse_grid(client, exp_id, third, other, key, NEEDED, lookup)
        assert (none.reused, none.left) == (0, other), key
    assert not client.baseline_runs(exp_id, third)
    assert reuse_grid(client, exp_id, third, grid, KEY, NEEDED, "--no-reuse").line().endswith("; 2 to run (--no-reuse)")


def test_another_presets_sweep_in_the_store_lends_its_comparison_trials_and_this_experiments_come_first(
        tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    other_exp = client.ensure_experiment("putlab-pose-prototype")
    exp_id = client.ensure_experiment("putlab-anchored")
    grid = noise_grid()
    configs = trial_configs(grid)
    metrics = dict.fromkeys(NEEDED, 0.5) | {"attack/thickness/accuracy": 0.6}
    elsewhere = add_parent(client, other_exp, "pose-sweep")
    lent = add_result(client, other_exp, elsewhere, configs[0], KEY.of(configs[0]), metrics)
    time.sleep(0.01)  # newer than the run lent from the other experiment
    newer_elsewhere = add_result(client, other_exp, elsewhere, configs[1], KEY.of(configs[1]), metrics)
    here = add_parent(client, exp_id, "anchored-sweep")
    own = add_result(client, exp_id, here, configs[1], KEY.of(configs[1]), metrics)

    sweep = add_parent(client, exp_id, "anchored-sweep-2")
    reused = reuse_grid(client, exp_id, sweep, grid, KEY, NEEDED)
    assert (reused.reused, reused.trials) == (2, 0)
    assert reused.sweeps == ("anchored-sweep", "pose-sweep")
    copies = {r.data.tags[tracking.TAG_REUSED_FROM]: r for r in client.baseline_runs(exp_id, sweep, "noise")}
    assert set(copies) == {lent, own} and newer_elsewhere not in copies  # this experiment's own result first
    assert all(copy.info.experiment_id == exp_id for copy in copies.values())  # copied into this sweep's experiment


def test_a_result_without_every_front_axis_is_not_reused_and_the_rest_of_the_grid_runs(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    grid = noise_grid()
    configs = trial_configs(grid)
    first = add_parent(client, exp_id, "sweep-1")
    add_result(client, exp_id, first, configs[0], KEY.of(configs[0]), dict.fromkeys(NEEDED, 0.5))
    add_result(client, exp_id, first, configs[1], KEY.of(configs[1]), dict.fromkeys(NEEDED[:-1], 0.5))
    reused = reuse_grid(client, exp_id, add_parent(client, exp_id, "sweep-2"), grid, KEY, NEEDED)
    assert (reused.reused, trial_configs(reused.left)) == (1, [configs[1]])


def test_a_resume_keeps_the_recorded_reuse_and_refuses_the_contrary_flag() -> None:
    params = {"preset": "amnist", "profile": "smoke", "search": "grid", "planned_trials": "1", "attackers": '["thickness"]',
              "noise_baseline": "True"}
    grids = ComparisonGrid.all(presets()["amnist"])
    off = resume_options.Recorded.read(params | {"reuse": "False"}, grids)
    assert resume_options.restored(parse_args(["amnist", "--resume"]), off).no_reuse is True
    on = resume_options.Recorded.read(params | {"reuse": "True"}, grids)
    assert resume_options.restored(parse_args(["amnist", "--resume"]), on).no_reuse is False
    with pytest.raises(UsageError, match=r"^--no-reuse contradicts the sweep's recorded reuse of stored trials"):
        resume_options.check_given(parse_args(["amnist", "--resume", "--no-reuse"]), on, resolve("amnist", "smoke", []),
                                   ("thickness",), None)
    assert parse_args(["amnist", "--no-reuse"]).no_reuse and not parse_args(["amnist"]).no_reuse


AMNIST_KEY = GridKey("amnist", FARM, PRIVACY, "cpu", code="code 1")


def add_trial(client: RawStore, exp_id: str, parent_id: str, config: dict, key: str, checkpoint: Path,
              role: str = "trial") -> str:
    """A finished trial of sweep ``parent_id``'s own grid (or, with ``role`` baseline, a comparison trial) with every
    front axis and its ``checkpoint`` folder, as the trial logger and farm leave it."""
    checkpoint.mkdir(parents=True, exist_ok=True)
    run = client.create_run(exp_id, run_name=f"lam={config['lam']}", tags={
        "mlflow.parentRunId": parent_id, tracking.TAG_PARENT: parent_id, tracking.TAG_TRIAL: f"t{config['lam']}",
        tracking.TAG_ROLE: role, tracking.TAG_CONTENT_KEY: key, tracking.TAG_CHECKPOINT: str(checkpoint)})
    client.log_params(run.info.run_id, config)
    client.log_metrics(run.info.run_id, dict.fromkeys(NEEDED, 0.7), step=1)
    client.set_terminated(run.info.run_id, "FINISHED")
    return run.info.run_id


def test_a_sweeps_own_trial_is_copied_from_a_trial_of_its_key_only(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.ensure_experiment("putlab-amnist")
    grid = resolve("amnist", "smoke", [])
    configs = trial_configs(grid)
    assert len(configs) == 3
    first = add_parent(client, exp_id, "sweep-1")
    gone = tmp_path / "runs" / "gone"
    add_trial(client, exp_id, first, configs[0], AMNIST_KEY.of(configs[0]), gone)
    gone.rmdir()  # its checkpoint deleted since: not reused (nothing to serve or draw a curve from)
    source = add_trial(client, exp_id, first, configs[0], AMNIST_KEY.of(configs[0]), tmp_path / "runs" / "0")
    add_trial(client, exp_id, first, configs[1], AMNIST_KEY.of(configs[1]), tmp_path / "runs" / "1", role="baseline")
    add_trial(client, exp_id, first, configs[2], replace(AMNIST_KEY, attackers=("yeom",)).of(configs[2]),
              tmp_path / "runs" / "2")  # another farm
    time.sleep(0.005)
    add_trial(client, exp_id, first, configs[0], AMNIST_KEY.of(configs[0]), gone)  # the newest, but its checkpoint is gone
    gone.rmdir()

    second = add_parent(client, exp_id, "sweep-2")
    own = reuse_grid(client, exp_id, second, grid, AMNIST_KEY, NEEDED, role="trial")
    assert (own.reused, trial_configs(own.left)) == (1, configs[1:])
    assert own.line() == ("amnist own grid: 1 of 3 trials reused from sweep sweep-1; 2 to run "
                          "(--no-reuse runs them again)")
    [copy] = client.child_runs(exp_id, second)
    assert copy.data.tags[tracking.TAG_REUSED_FROM] == source and tracking.artifact_run(copy) == source
    assert copy.info.run_name == "alpha=1 lam=0 adv_steps=1"  # as this sweep names it (the source: "lam=0.0")
    assert copy.data.metrics == client.get_run(source).data.metrics and not client.baseline_runs(exp_id, second)
    assert reuse_grid(client, exp_id, second, grid, AMNIST_KEY, NEEDED, "its Tune run continues", "trial").reused == 1
    assert len(client.child_runs(exp_id, second)) == 1  # a resume copies nothing twice


def test_only_a_grid_search_of_putlabs_own_mechanism_keys_its_trials(tmp_path: Path) -> None:
    store = ["--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}", "--storage", str(tmp_path / "runs")]
    plan = plan_sweep(parse_args(["amnist", "--profile", "smoke", *store]))
    key = own_key(plan, {"cpu": 1, "gpu": 0})
    assert key is not None and key.grid == "amnist" and key.attackers == plan.attackers
    assert own_key(replace(plan, search="optuna"), {"cpu": 1}) is None  # its points are suggested as it goes
    example = plan_sweep(parse_args(["--preset-file", str(EXAMPLE), "--profile", "smoke", *store]))
    assert not hashed(example.spec.preset.mechanism) and own_key(example, {"cpu": 1}) is None
    assert hashed(plan.spec.preset.mechanism) and not hashed(add_trial)

"""The session's shared smoke sweep: read only by the tests that share it, and a writable copy for the tests that write."""
from __future__ import annotations

from pathlib import Path

from conftest import SharedSweep, copy_sweep, store, tree_changes, tree_digest


def trial_runs(workdir: Path) -> list:
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-amnist")
    return client.search_runs([exp.experiment_id], filter_string="tags.`putlab.role` = 'trial'")


def test_a_write_to_the_store_is_caught_and_reading_it_is_not(smoke_sweep: SharedSweep, tmp_path: Path) -> None:
    # the guard the shared sweep's fixture applies after the session, on a copy: reading changes nothing, a logged
    # metric changes the store, a new file is named
    copy = copy_sweep(smoke_sweep, tmp_path / "copy")
    digest = tree_digest(copy)
    runs = trial_runs(copy)
    store(copy).get_metric_history(runs[0].info.run_id, "attack/max/accuracy")
    assert tree_changes(copy, digest) == []
    store(copy).log_metric(runs[0].info.run_id, "written/by_a_test", 1.0)
    (copy / "reports" / "extra.html").write_text("<p>")
    assert tree_changes(copy, digest) == ["mlflow.db", "reports/extra.html"]


def test_a_copy_points_at_its_own_files_and_leaves_the_shared_sweep_alone(smoke_sweep: SharedSweep,
                                                                         tmp_path: Path) -> None:
    before = tree_digest(smoke_sweep.folder)
    copy = copy_sweep(smoke_sweep, tmp_path / "copy")
    runs = trial_runs(copy)
    assert len(runs) == 3
    for run in runs:
        assert run.info.artifact_uri.startswith(copy.as_uri()) or run.info.artifact_uri.startswith(str(copy))
        checkpoint = Path(run.data.tags["putlab.checkpoint"])
        assert checkpoint.is_relative_to(copy) and (checkpoint / "state.pt").exists()
    store(copy).log_metric(runs[0].info.run_id, "written/by_a_test", 1.0)
    assert tree_changes(smoke_sweep.folder, before) == []

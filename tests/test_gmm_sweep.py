"""The gmm preset end to end: information metrics per step, the information-plane figures on parent and trials."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from conftest import run_sweep, store

from trainables.gmm.figures import plot_information_plane


def test_gmm_smoke_sweep_logs_trajectories_and_the_bound_plot(workdir: Path) -> None:
    out = run_sweep(workdir, "gmm", "--profile", "smoke", "--set", "report_every=20")
    assert out.returncode == 0, out.stderr[-3000:]
    client = store(workdir)
    exp = client.get_experiment_by_name("putlab-gmm")
    runs = client.search_runs([exp.experiment_id])
    (parent,) = [r for r in runs if r.data.tags.get("putlab.role") == "sweep"]
    children = [r for r in runs if r.data.tags.get("putlab.role") == "trial"]
    assert len(children) == 2
    assert "front/information_plane.png" in {a.path for a in client.list_artifacts(parent.info.run_id, "front")}
    for child in children:
        history = client.get_metric_history(child.info.run_id, "leakage/i_sq")
        assert sorted(m.step for m in history) == [1, 2, 3]  # reports at filter steps 20, 40 and the final 60
        assert "information_plane.png" in {a.path for a in client.list_artifacts(child.info.run_id)}


def test_information_plane_plot_needs_the_information_metrics(tmp_path: Path) -> None:
    table = pd.DataFrame({"run_id": ["a", "b"], "status": ["FINISHED"] * 2, "k": [0.4, 0.0], "alpha": [0.1, 0.9],
                          "leakage/i_uxq": [0.1, 0.3], "leakage/i_sq": [0.05, 0.4], "leakage/bound_k": [0.19, 0.69]})
    path = plot_information_plane(table, {"a": table.loc[[0], ["leakage/i_uxq", "leakage/i_sq"]]}, tmp_path / "p.png")
    assert path is not None and path.stat().st_size > 10_000
    assert plot_information_plane(table.drop(columns="leakage/bound_k"), {}, tmp_path / "q.png") is None
    assert not (tmp_path / "q.png").exists()

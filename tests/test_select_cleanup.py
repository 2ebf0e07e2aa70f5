"""A registration that fails after the checkpoint was copied leaves no copy behind (real sqlite store and artifacts)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from mlflow.exceptions import MlflowException
from stores import RawStore

from platform.select import Choice, register
from search_spaces import presets
from serve.points import POINT_DIR


def test_a_failed_registration_removes_its_checkpoint_copy(tmp_path: Path) -> None:
    client = RawStore(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp = client.create_experiment("select-cleanup", artifact_location=(tmp_path / "artifacts").as_uri())
    run_id = client.create_run(exp).info.run_id
    checkpoint = tmp_path / "checkpoint_000000"
    checkpoint.mkdir()
    (checkpoint / "state.pt").write_bytes(b"weights")
    row = pd.Series({"run_id": run_id, "trial_id": "t0", "name": "alpha=1 lam=1", "utility/accuracy": 0.9})
    with pytest.raises(MlflowException):  # MLflow refuses the name only when the version is registered
        register(client, "a/b", presets()["amnist"], Choice(row, "test"), str(checkpoint), {"alpha": 1.0})
    assert client.list_artifacts(run_id, POINT_DIR) == []

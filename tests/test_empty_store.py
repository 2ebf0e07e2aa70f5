"""A new sqlite store is a copy of the installed MLflow's empty schema (platform.results.empty_store): the same
tables, indexes and schema revision as the store MLflow builds itself, never written over a file already there, and
MLflow's own build where the template cannot be kept."""
from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from platform.results import empty_store
from platform.results.store import Store


def schema(db: Path) -> tuple[list[list[str]], list[str]]:
    """Every table's and index's SQL, its clauses sorted (MLflow's own builds list a table's constraints in an order
    that changes with Python's hash seed), and the schema revision MLflow's migrations reached."""
    with sqlite3.connect(db) as con:
        sql = sorted(sorted(part.strip() for part in row[0].split(", \n"))
                     for row in con.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"))
        revision = [row[0] for row in con.execute("SELECT version_num FROM alembic_version")]
    return sql, revision


def experiments(uri: str) -> list[tuple[str, str, str]]:
    return [(e.experiment_id, e.name, e.artifact_location) for e in MlflowClient(uri).search_experiments()]


def test_a_store_from_the_template_is_the_store_mlflow_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.chdir(tmp_path)
    own, copied = tmp_path / "own.db", tmp_path / "copied.db"
    MlflowClient(f"sqlite:///{own}").search_experiments()  # MLflow's migrations, as without the template
    Store.open(f"sqlite:///{copied}")
    assert empty_store.template_path().is_file()
    assert schema(copied) == schema(own) and len(schema(own)[0]) > 50 and schema(own)[1]
    # the Default experiment is MLflow's, added by the process that opens the store, not the template's
    assert experiments(f"sqlite:///{copied}") == experiments(f"sqlite:///{own}") == [
        ("0", "Default", (tmp_path / "mlruns" / "0").as_uri().replace("file://", ""))]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_a_file_already_there_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    db = tmp_path / "mlflow.db"
    db.write_bytes(b"someone else's")
    empty_store.create_store(db)
    assert db.read_bytes() == b"someone else's"


def test_without_a_place_for_the_template_mlflow_builds_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "a-file"))  # the template's folder cannot be made
    store = Store.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    assert store.new_experiment("works", None, {}) and not empty_store.template_path().exists()

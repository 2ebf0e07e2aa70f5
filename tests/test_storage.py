"""Tune storage as a folder or a URI: locations keep a URI's scheme and query, and a file:// URI is read through
pyarrow exactly like a bucket would be (the multi-node test runs a whole sweep on one)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from platform.run import storage


@pytest.mark.parametrize("root, fs_path, expected", [
    ("s3://bucket/runs?region=eu-west-1", "bucket/runs/sweep/trial/checkpoint_000001",
     "s3://bucket/runs/sweep/trial/checkpoint_000001?region=eu-west-1"),
    ("file:///mnt/shared/runs", "/mnt/shared/runs/sweep/trial/checkpoint_000001",
     "file:///mnt/shared/runs/sweep/trial/checkpoint_000001"),
    ("/mnt/shared/runs", "/mnt/shared/runs/sweep/trial/checkpoint_000001", "/mnt/shared/runs/sweep/trial/checkpoint_000001"),
])
def test_a_checkpoint_location_keeps_the_storage_scheme_and_query(root: str, fs_path: str, expected: str) -> None:
    location = storage.location(root, fs_path)
    assert location == expected
    trial = storage.parent(location)
    assert storage.join(trial, "checkpoint_000001") == expected and storage.parent(storage.join(trial, "x")) == trial


def test_a_file_uri_is_read_through_pyarrow(tmp_path: Path) -> None:
    for name, age in (("amnist-smoke-1", 200), ("amnist-smoke-2", 100), ("gmm-smoke-1", 0)):
        (tmp_path / name / "checkpoint_000000").mkdir(parents=True)
        (tmp_path / name / "tuner.pkl").write_text("state")
        os.utime(tmp_path / name / "tuner.pkl", (1e9 - age, 1e9 - age))
    (tmp_path / "amnist-smoke-1" / "checkpoint_000000" / "state.pt").write_bytes(b"weights")
    root = tmp_path.as_uri()
    assert storage.resolve(root) == root and storage.local_path(root) == tmp_path
    assert storage.newest(root, "amnist-", "tuner.pkl") == "amnist-smoke-2"
    checkpoint = storage.join(root, "amnist-smoke-1", "checkpoint_000000")
    assert storage.exists(checkpoint, directory=True) and storage.exists(storage.join(checkpoint, "state.pt"))
    assert not storage.exists(storage.join(checkpoint, "missing.pt"))
    assert storage.read_text(storage.join(storage.parent(checkpoint), "tuner.pkl")) == "state"
    storage.download(checkpoint, tmp_path / "copy")
    assert (tmp_path / "copy" / "state.pt").read_bytes() == b"weights"


def test_a_relative_folder_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert storage.resolve("putlab_runs") == str(tmp_path / "putlab_runs") and not storage.is_uri("putlab_runs")

"""The store gateway: a stop signal during a store call lands when the call returns, never inside it."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

from platform.results.store import Store
from platform.run.interrupts import EXIT_INTERRUPTED, SweepEnding


def test_a_stop_during_a_store_write_lands_after_the_write_and_the_sweep_still_ends(tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = store.ensure_experiment("putlab-stop")
    parent_id, _ = store.start_parent(exp_id, "stopped", {})
    real = MlflowClient.log_batch

    def signalled_mid_write(self: MlflowClient, *args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signal.SIGTERM)  # its handler runs here, between this line and the write
        return real(self, *args, **kwargs)

    monkeypatch.setattr(MlflowClient, "log_batch", signalled_mid_write)
    started = time.monotonic()
    with pytest.raises(SystemExit) as ended, SweepEnding() as ending:
        ending.attach(store, exp_id, parent_id, ["resume"])
        store.log_metrics(parent_id, {"utility/accuracy": 0.75}, step=3)
        pytest.fail("the stop never came")
    monkeypatch.undo()
    assert ended.value.code == EXIT_INTERRUPTED and time.monotonic() - started < 10  # no wait on a held sqlite lock
    again = Store(store.tracking_uri)
    assert [(m.step, m.value) for m in again.history(parent_id, "utility/accuracy")] == [(3, 0.75)]  # the write landed
    assert again.run(parent_id).info.status == "KILLED"  # and the sweep's ending wrote after it

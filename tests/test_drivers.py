"""Sweeps left RUNNING by a driver killed outright are ended KILLED by the next command on the host
(platform/results/drivers.py), and only those: a live driver's, another host's and a finished one's are left alone."""
from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest
from stores import RawStore

from platform.results import drivers, tracking


def dead_pid() -> int:
    """The PID of a process that has ended (and been reaped)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_process_is_told_apart_from_a_later_one_with_its_pid() -> None:
    me = drivers.process_start(os.getpid())
    assert me  # Linux: the start in clock ticks since boot
    assert drivers.process_start(dead_pid()) is None
    host = socket.gethostname()
    assert not drivers.driver_gone(drivers.this_driver())
    assert drivers.driver_gone(f"{host} {dead_pid()} 12345")
    assert drivers.driver_gone(f"{host} {os.getpid()} {int(me) + 1}")  # this PID, another process: the driver is gone
    assert not drivers.driver_gone(f"another-{host} {dead_pid()} 12345")  # another host's processes are not seen here
    assert not drivers.driver_gone("") and not drivers.driver_gone(f"{host} pid 1")


def sweep(client: RawStore, exp_id: str, name: str, driver: str, status: str = "RUNNING") -> str:
    """A parent run of sweep ``name`` driven by ``driver``, with a running trial, a running baseline and a finished
    trial; returns its id."""
    parent = client.create_run(exp_id, run_name=name, tags={tracking.TAG_SWEEP: name, tracking.TAG_ROLE: "sweep",
                                                             drivers.TAG_DRIVER: driver}).info.run_id
    for role, end in (("trial", None), ("baseline", None), ("trial", "FINISHED")):
        child = client.create_run(exp_id, tags={tracking.TAG_PARENT: parent, tracking.TAG_ROLE: role}).info.run_id
        if end:
            client.set_terminated(child, end)
    if status != "RUNNING":
        client.set_terminated(parent, status)
    return parent


def statuses(client: RawStore, exp_id: str, parent: str) -> list[str]:
    children = [*client.child_runs(exp_id, parent), *client.baseline_runs(exp_id, parent)]
    return [client.get_run(parent).info.status, *sorted(r.info.status for r in children)]


def test_the_next_command_ends_only_the_sweeps_whose_driver_is_gone(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    client = RawStore(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = client.create_experiment("putlab-amnist")
    host = socket.gethostname()
    orphan = sweep(client, exp_id, "orphan", f"{host} {dead_pid()} 12345")
    live = sweep(client, exp_id, "live", drivers.this_driver())
    elsewhere = sweep(client, exp_id, "elsewhere", f"another-{host} {dead_pid()} 12345")
    finished = sweep(client, exp_id, "finished", f"{host} {dead_pid()} 12345", status="FINISHED")

    assert drivers.sweep_of(client, "live") == (exp_id, live)  # what report, select, attack and compare call
    assert statuses(client, exp_id, orphan) == ["KILLED", "FINISHED", "KILLED", "KILLED"]
    assert "was gone" in client.get_run(orphan).data.tags[drivers.TAG_ENDED]
    assert capsys.readouterr().out.splitlines() == [
        "sweep orphan was left running by a driver that is gone (pid "
        f"{client.get_run(orphan).data.tags[drivers.TAG_DRIVER].split()[1]}): marked KILLED; --resume continues it"]
    for untouched in (live, elsewhere):
        assert statuses(client, exp_id, untouched) == ["RUNNING", "FINISHED", "RUNNING", "RUNNING"]
    assert statuses(client, exp_id, finished)[0] == "FINISHED"
    assert drivers.end_orphans(client, exp_id) == []  # once

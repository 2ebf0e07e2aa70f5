"""Whose sweep is it: the driver process a sweep's parent run names, and sweeps left RUNNING by a driver that is gone.

A sweep command tags its parent run with its driver (:data:`TAG_DRIVER`: host, PID and the process's start). A driver
stopped outright (SIGKILL, the out-of-memory killer, a lost terminal) cannot end its run, which would stay RUNNING for
good. The next putlab command on that host that opens the sweep's experiment finds such runs, checks that their driver
is gone (no process with that PID, or another one started since), and ends them KILLED with every unfinished trial,
tagging why (:data:`TAG_ENDED`). A driver on another host is never judged: this host cannot see its processes.
"""
from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from platform.results import tracking
from platform.results.store import Store

TAG_DRIVER = "putlab.driver"  # "<host> <pid> <start>" of the command driving the sweep now (or last)
TAG_ENDED = "putlab.ended"  # why a sweep was ended by another command than its own
UNFINISHED = ("RUNNING", "SCHEDULED")


def process_start(pid: int) -> str | None:
    """What tells process ``pid`` from a later one with the same PID (Linux: its start in clock ticks since boot; ""
    where the system says only that it exists); None when there is no such process."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[19]  # field 22, starttime (fields 3.. follow the name)
        except (OSError, IndexError):
            return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # another user's process: it exists
        pass
    return ""


def this_driver() -> str:
    """The :data:`TAG_DRIVER` value of this process."""
    return f"{socket.gethostname()} {os.getpid()} {process_start(os.getpid()) or '-'}"


def driver_gone(tag: str) -> bool:
    """Whether the driver a :data:`TAG_DRIVER` value names ran on this host and is gone; False when it may live (or
    ran elsewhere, or the value is not one this module wrote)."""
    host, _, rest = tag.partition(" ")
    pid, _, start = rest.partition(" ")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    now = process_start(int(pid))
    return now is None or (start not in ("", "-") and now not in ("", start))


def end_sweep(store: Store, exp_id: str, parent_id: str, status: str) -> None:
    """End the parent run with ``status`` and every child run (trials and baselines) still running with KILLED."""
    for run in [*store.child_runs(exp_id, parent_id), *store.baseline_runs(exp_id, parent_id)]:
        if run.info.status in UNFINISHED:
            store.end(run.info.run_id, "KILLED")
    store.end(parent_id, status)


def end_orphans(store: Store, exp_id: str) -> list[str]:
    """End KILLED every sweep of the experiment left RUNNING by a driver of this host that is gone (one line each on
    stdout); returns their names."""
    sweeps = store.runs([exp_id], where=f"tags.`{tracking.TAG_ROLE}` = 'sweep' and "
                                                        "attributes.status = 'RUNNING'")
    ended = []
    for run in sweeps:
        tag = run.data.tags.get(TAG_DRIVER, "")
        if not driver_gone(tag):
            continue
        name = run.data.tags.get(tracking.TAG_SWEEP, run.info.run_name)
        store.set_tag(run.info.run_id, TAG_ENDED, f"its driver ({tag}) was gone when another command looked on "
                                                   f"{time.strftime('%Y-%m-%d %H:%M:%S')}; marked KILLED")
        end_sweep(store, exp_id, run.info.run_id, "KILLED")
        print(f"sweep {name} was left running by a driver that is gone (pid {tag.split()[1]}): marked KILLED; "
              "--resume continues it", flush=True)
        ended.append(name)
    return ended


def sweep_of(store: Store, target: str) -> tuple[str, str]:
    """:meth:`~platform.results.store.Store.find_sweep`, after ending the experiment's sweeps whose driver is gone
    (:func:`end_orphans`), so the command reads them as they are: KILLED, not running."""
    exp_id, parent_id = store.find_sweep(target)
    end_orphans(store, exp_id)
    return exp_id, parent_id

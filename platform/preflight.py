"""Checks that run before Ray starts or anything is stored: options, tracking URI, storage, Ray address, resources.

Each check raises :class:`~platform.errors.UsageError` with one line naming the problem, so a bad command line
costs seconds, never a half-made sweep.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import os
import socket
import stat
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import grpc

from platform import storage as tune_storage
from platform.errors import UsageError

TRACKING_SCHEMES = ("sqlite", "http", "https", "postgresql", "mysql", "mssql", "databricks")
MAX_SAMPLES = 100_000
MAX_FAILURES = 100
RAY_CONNECT_TIMEOUT_S = 5.0
POSTGRES_EXTRA = "pip install -e '.[postgres]'"


def check_sweep_options(args: argparse.Namespace) -> None:
    """Type, finiteness and range of ``platform.sweep``'s numeric options."""
    if args.samples is not None and not 1 <= args.samples <= MAX_SAMPLES:
        raise UsageError(f"--samples must be in [1, {MAX_SAMPLES}] (got {args.samples})")
    if args.gpus_per_trial is not None:
        gpus = args.gpus_per_trial
        if not math.isfinite(gpus) or gpus < 0:
            raise UsageError(f"--gpus-per-trial must be a finite number >= 0 (got {gpus})")
        if gpus > 1 and gpus != int(gpus):
            raise UsageError(f"--gpus-per-trial above 1 must be a whole number of GPUs (got {gpus})")
    if args.max_concurrent is not None and args.max_concurrent < 1:
        raise UsageError(f"--max-concurrent must be >= 1 (got {args.max_concurrent})")
    if not 0 <= args.max_failures <= MAX_FAILURES:
        raise UsageError(f"--max-failures must be in [0, {MAX_FAILURES}] (got {args.max_failures})")


def read_only(path: Path) -> bool:
    """True when ``path`` cannot be written: no write bit for anyone (which root ignores), or access denied."""
    return not path.stat().st_mode & 0o222 or not os.access(path, os.W_OK)


def check_writable_dir(path: Path, what: str) -> None:
    """``path`` (or, if missing, its nearest existing parent) is a folder this process can create files in."""
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{what} {path} is not a folder ({existing} is a file)")
    if read_only(existing):
        raise UsageError(f"{what} {path} is not writable ({existing} is read-only)")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise UsageError(f"{what} {path} is not writable: {exc.strerror or exc}") from None


def check_tracking_uri(uri: str) -> None:
    """A tracking URI MLflow can write to: a known scheme; for sqlite, a file (not a folder) in a writable folder."""
    scheme = urlparse(uri).scheme.split("+")[0]
    if scheme not in TRACKING_SCHEMES:
        raise UsageError(f"unsupported MLflow tracking URI {uri!r}: use sqlite:///<path>, http(s)://<server> "
                         f"or a database URI ({', '.join(TRACKING_SCHEMES)})")
    if scheme == "postgresql":
        check_postgres_driver(uri)
    if scheme != "sqlite":
        return
    if not uri.startswith("sqlite:///") or not uri.removeprefix("sqlite:///"):
        raise UsageError(f"MLflow tracking URI {uri!r} needs a file: sqlite:///<relative path> or sqlite:////<absolute path>")
    db = Path(uri.removeprefix("sqlite:///")).expanduser()
    if db.is_dir():
        raise UsageError(f"MLflow tracking store {db} is a folder, not an sqlite file")
    if db.exists() and read_only(db):
        raise UsageError(f"MLflow tracking store {db} is read-only")
    check_writable_dir(db.parent, "the folder of MLflow tracking store")


def check_postgres_driver(uri: str) -> None:
    """The Python driver a ``postgresql[+driver]://`` URI names is installed (psycopg, from the ``postgres`` extra)."""
    scheme = urlparse(uri).scheme
    driver = scheme.partition("+")[2] or "psycopg2"  # SQLAlchemy's default for a bare postgresql://; its module's name
    if importlib.util.find_spec(driver) is None:
        hint = "" if driver == "psycopg" else " and write the URI as postgresql+psycopg://..."
        raise UsageError(f"the MLflow tracking URI needs the PostgreSQL driver {driver}, which is not installed: "
                         f"{POSTGRES_EXTRA}{hint}")


def check_storage(storage: str) -> None:
    """Tune's storage is a folder this process can write (or create), or a URI whose file system pyarrow can open."""
    local = tune_storage.local_path(storage)  # opens a URI's file system, or says in one line why it cannot
    if local is not None:
        check_writable_dir(local, "--storage")


def check_ray_address(address: str, timeout: float = RAY_CONNECT_TIMEOUT_S) -> None:
    """A Ray cluster address (``host:port`` or ``ray://host:port``) accepts connections and answers as a gRPC server
    (as Ray's GCS and client server do) within ``timeout`` seconds each.

    ``ray.init`` itself retries an unreachable address for minutes; this says so in one line at once. ``auto`` is
    left to Ray, which fails at once when no cluster was started on this machine."""
    if address == "auto":
        return
    target = address.removeprefix("ray://")
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit() or "/" in target:
        raise UsageError(f"Ray address {address!r} is not host:port, ray://host:port or auto "
                         "(the GCS address, e.g. 10.0.0.5:6379, not the dashboard's http:// address)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise UsageError(f"Ray cluster at {address} is unreachable: {exc.strerror or exc}") from None
    if os.environ.get("RAY_USE_TLS", "0").lower() in ("0", "false", ""):  # a plain gRPC channel cannot speak TLS
        # The port answers; Ray's GCS (and its client server) speak gRPC, so a channel becomes ready within moments.
        # Anything else listening there (a dashboard, a silent socket) would leave ray.init retrying for minutes.
        channel = grpc.insecure_channel(f"{host}:{port}")
        try:
            grpc.channel_ready_future(channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise UsageError(f"{address} accepts connections but does not answer as a Ray cluster within {timeout:g} s "
                             "(give the head's GCS port, 6379 unless it was started with --port)") from None
        finally:
            channel.close()


def check_trusted(path: Path) -> None:
    """Refuse to load state from ``path`` when someone else could have planted it (resume unpickles Tune's state)."""
    info = path.stat()
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise UsageError(f"refusing to resume from {path}: it is owned by uid {info.st_uid}, not by you "
                         f"(uid {os.geteuid()}); resuming loads pickled state, so the storage path must be yours")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UsageError(f"refusing to resume from {path}: it is writable by group or others "
                         f"(mode {stat.filemode(info.st_mode)}); resuming loads pickled state, chmod go-w it first")


def check_resume_source(storage: Path, sweep_dir: Path, state_file: Path) -> None:
    """The storage folder, the sweep's folder and its Tune state are all owned by us and writable only by us."""
    for path in (storage, sweep_dir, state_file):
        check_trusted(path)


def check_resources(per_trial: dict[str, float], cluster: dict[str, float]) -> None:
    """A trial's CPUs and GPUs fit on the cluster (otherwise Tune waits for them forever)."""
    for key, option in (("CPU", "cpus per trial (the profile's)"), ("GPU", "--gpus-per-trial")):
        wanted, have = per_trial.get(key.lower(), 0), cluster.get(key, 0)
        if wanted > have:
            raise UsageError(f"{option} is {wanted:g} but the Ray cluster has {have:g} {key}(s)")

"""Checks that run before Ray starts or anything is stored: options, tracking URI, storage, Ray address, resources.

Each check raises :class:`~platform.errors.UsageError` with one line naming the problem, so a bad command line
costs seconds, never a half-made sweep.
"""
from __future__ import annotations

import math
import os
import socket
import stat
from pathlib import Path

import grpc

from core import tracking_uri
from platform.errors import UsageError
from platform.plan.options import SweepOptions
from platform.plan.spec import MAX_GRID_POINTS, SweepSpec
from platform.run import storage as tune_storage

MAX_SAMPLES = 100_000
MAX_FAILURES = 100
MAX_SEEDS = 1_000
CONFIRM_TRIALS = 1_000  # a sweep planning more trials than this runs only with --yes
MAX_TRIALS = MAX_GRID_POINTS  # nor more than this at all
SWEEP_TEXT_OPTIONS = ("profile", "preset_file", "attackers", "tracking_uri", "experiment", "storage", "address")
RAY_CONNECT_TIMEOUT_S = 5.0


def check_not_empty(args: object, *options: str) -> None:
    """Each of ``options`` (a command's parsed options), when given, is more than blanks: ``--experiment ''`` is refused, not read
    as "the default"."""
    for option in options:
        value = getattr(args, option)
        if value is not None and not str(value).strip():
            raise UsageError(f"--{option.replace('_', '-')} is empty: give a value or leave the option out")


def check_sweep_options(args: SweepOptions) -> None:
    """Type, finiteness and range of ``platform.sweep``'s numeric options; none of its text options empty."""
    check_not_empty(args, *SWEEP_TEXT_OPTIONS)
    if not 1 <= args.seeds <= MAX_SEEDS:
        raise UsageError(f"--seeds must be in [1, {MAX_SEEDS}] (got {args.seeds})")
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


def check_sweep_size(spec: SweepSpec, search: str, samples: int | None, confirmed: bool) -> None:
    """The sweep plans at most MAX_TRIALS trials, and more than CONFIRM_TRIALS only when ``confirmed`` (``--yes``);
    a grid's size is bounded from its axes before any of its points is built."""
    if search == "grid":
        planned = spec.size_bound() if spec.size_bound() > MAX_TRIALS else len(spec.grid_points())
    else:
        planned = samples or spec.preset.profiles[spec.profile].optuna_samples
    narrow = "narrow --seeds or the --set lists" if search == "grid" else "lower --samples"
    if planned > MAX_TRIALS:
        raise UsageError(f"the sweep plans {planned} trials, more than {MAX_TRIALS}: {narrow}")
    if planned > CONFIRM_TRIALS and not confirmed:
        raise UsageError(f"the sweep plans {planned} trials, more than {CONFIRM_TRIALS}: add --yes to run them all, "
                         f"or {narrow}")


def check_writable_dir(path: Path, what: str) -> None:
    """``path`` (or, if missing, its nearest existing parent) is a folder this process can create files in."""
    try:
        tracking_uri.check_writable_dir(path, what)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def check_out_file(path: Path, what: str = "--out") -> None:
    """``path`` can be written as a file: not a folder, not read-only, in an existing folder this process can write."""
    if path.is_dir():
        raise UsageError(f"{what} {path} is a folder: give a file path")
    if not path.parent.is_dir():
        raise UsageError(f"{what} {path}: folder {path.parent} does not exist" if not path.parent.exists()
                         else f"{what} {path}: {path.parent} is not a folder")
    if path.exists() and tracking_uri.read_only(path):
        raise UsageError(f"{what} {path} is read-only")
    check_writable_dir(path.parent, what)


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

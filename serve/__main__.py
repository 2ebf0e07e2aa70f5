"""``python -m serve``: the release service on a local Ray, on a chosen port, until Ctrl-C.

For clusters use ``serve deploy serve/serve_config.yaml`` or the RayService in ``k8s/``; this is the local path.
"""
from __future__ import annotations

import argparse
import logging
import socket
import sys
import threading
import urllib.request
from pathlib import Path

import ray
from ray import serve

from core.commands import python_module
from core.messages import first_line
from core.quiet import silence, silence_serve
from core.tracking_uri import check_tracking_uri
from serve.app import build_app
from serve.auth import API_KEY_ENV, configured_key
from serve.points import Registry, UnknownModelsError, check_models
from serve.validation import Limits


def check_options(args: argparse.Namespace) -> None:
    """ValueError with one line for an option the service could not run with (before Ray starts)."""
    if not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be in [1, 65535] (got {args.port})")
    if args.num_cpus is not None and args.num_cpus < 1:
        raise ValueError(f"--num-cpus must be >= 1: a replica needs one CPU (got {args.num_cpus})")
    if args.models is not None and not args.models.strip():
        raise ValueError("--models is empty: name registered models, or leave the option out to serve them all")
    Limits(args.max_body_bytes, args.max_batch, args.read_timeout_s)  # raises on a limit out of range
    configured_key()  # raises on a key too short to protect anything
    with socket.socket() as probe:
        try:
            probe.bind((args.host, args.port))
        except OSError as exc:
            raise ValueError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None


def main(argv: list[str] | None = None) -> int:
    """Start Ray and Serve locally, deploy the service, block until interrupted."""
    p = argparse.ArgumentParser(prog="python -m serve", description=__doc__.splitlines()[0])
    p.add_argument("--tracking-uri", default=f"sqlite:///{Path.cwd() / 'mlflow.db'}", help="MLflow tracking URI")
    p.add_argument("--models", help="comma-separated registered models (name or name/version); default: all")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs for the local Ray (default: all)")
    p.add_argument("--max-batch", type=int, default=Limits.max_batch, help="most samples per request")
    p.add_argument("--max-body-bytes", type=int, default=Limits.max_body_bytes, help="largest request body")
    p.add_argument("--read-timeout-s", type=float, default=Limits.read_timeout_s,
                   help=f"seconds a request body may take to arrive, else 408 (default {Limits.read_timeout_s:g})")
    args = p.parse_args(argv)
    models = tuple(m.strip() for m in (args.models or "").split(",") if m.strip())
    try:
        check_options(args)
        check_tracking_uri(args.tracking_uri, create=False)  # a folder or a missing file: at once, not MLflow's retries
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        if args.tracking_uri.startswith(("http://", "https://")):  # fail fast instead of the client's retries
            urllib.request.urlopen(args.tracking_uri.rstrip("/") + "/health", timeout=5).read()
        points = check_models(Registry(args.tracking_uri), models, "--models")
    except UnknownModelsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - an unreachable or unusable store (any backend): say so before starting Ray
        print(f"error: MLflow tracking store {args.tracking_uri} is unusable: {first_line(exc)}", file=sys.stderr)
        return 2
    if not points:
        print(f"no registered operating point yet: {python_module('platform.select', '<sweep>', '--max-attack', '0.6')}"
              " registers one",
              flush=True)
    silence()
    silence_serve()
    # A new local Ray even when a `ray start` node runs on this machine (plain ray.init() would join it); the
    # replicas inherit this process's environment: MLflow credentials and the API key.
    ray.init(address="local", num_cpus=args.num_cpus, include_dashboard=False, logging_level=logging.WARNING)
    serve.start(http_options={"host": args.host, "port": args.port})
    app = build_app({"tracking_uri": args.tracking_uri, "models": ",".join(models), "max_batch": args.max_batch,
                     "max_body_bytes": args.max_body_bytes, "read_timeout_s": args.read_timeout_s})
    serve.run(app, name="putlab", route_prefix="/")
    auth = (f"Authorization: Bearer ${API_KEY_ENV} required" if configured_key()
            else f"no API key: set {API_KEY_ENV} to require one")
    print(f"serving on http://{args.host}:{args.port}  (GET /points, POST /points/<name>/<version>/release; {auth})",
          flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        serve.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

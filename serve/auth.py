"""Bearer-token authentication of the release service: with an API key in ``PUTLAB_SERVE_API_KEY``, every route but
``/health`` (left open for liveness and readiness probes) needs ``Authorization: Bearer <key>``, else 401.

The key is read from the environment of each replica (on Kubernetes, from a Secret); ``require`` makes a replica refuse
to start without one, so a deployment that must be protected is never served open by mistake.
"""
from __future__ import annotations

import os
import secrets

API_KEY_ENV = "PUTLAB_SERVE_API_KEY"
OPEN_PATHS = frozenset({"/health"})
MIN_KEY_LENGTH = 16


def configured_key(require: bool = False) -> str | None:
    """The API key of this process (None: authentication off); ValueError with one line for a missing or weak key."""
    key = os.environ.get(API_KEY_ENV, "").strip()
    if not key:
        if require:
            raise ValueError(f"the release service requires an API key but {API_KEY_ENV} is empty or not set")
        return None
    if len(key) < MIN_KEY_LENGTH:
        raise ValueError(f"{API_KEY_ENV} must be at least {MIN_KEY_LENGTH} characters (e.g. openssl rand -hex 32)")
    return key


def authorized(path: str, authorization: str | None, key: str | None) -> bool:
    """Whether a request for ``path`` with this ``Authorization`` header may pass (compared in constant time)."""
    if key is None or path in OPEN_PATHS:
        return True
    scheme, _, token = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(token.strip().encode(), key.encode())

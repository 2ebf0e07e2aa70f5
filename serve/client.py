"""A client of the release service (``serve.app``): its points, and a split's releases fetched in batches.

It speaks the binary protocol (raw float32 samples), sends ``Authorization: Bearer <key>`` when it has a key (the
service's ``PUTLAB_SERVE_API_KEY``), keeps each request within the service's batch and body limits (halving its batch
on a 413, so a service with smaller limits than the defaults is still served), and backs off on 429 and 503 (a busy
service or its ingress), waiting ``Retry-After`` where the answer gives one. Any other refusal is a one-line
:class:`ServiceError`. It needs no Ray: it works against a local ``python -m serve`` as against a RayService.
"""
from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import torch

from serve.app import BINARY, SEED_HEADER
from serve.auth import API_KEY_ENV
from serve.validation import Limits

BUSY = (429, 503)
MAX_WAIT_S = 30.0  # the longest back-off between two tries of one request


class ServiceError(RuntimeError):
    """The service cannot be reached, or refused a request (one line: the status and the service's own message)."""


class ReleaseClient:
    """The service at ``base_url`` (with any route prefix), with an API key or none."""

    def __init__(self, base_url: str, api_key: str | None = None, batch: int = Limits.max_batch,
                 max_body_bytes: int = Limits.max_body_bytes, tries: int = 8, timeout_s: float = 120.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.batch = batch
        self.max_body_bytes = max_body_bytes
        self.tries = tries
        self.timeout_s = timeout_s
        self.sleep = sleep

    def health(self) -> dict[str, Any]:
        """``GET /health`` (open even on a service with a key): a ServiceError where nothing answers."""
        return json.loads(self._send("/health"))

    def points(self) -> list[dict[str, Any]]:
        """The points the service serves (``GET /points``), each with its id, preset and metrics."""
        return json.loads(self._send("/points"))["points"]

    def release(self, point_id: str, x: torch.Tensor, seed: int,
                progress: Callable[[int, int], None] | None = None) -> torch.Tensor:
        """The point's release of every sample of ``x`` ([N, *input shape]); the batch starting at sample ``i`` is
        released with seed ``seed + i``. ``progress(done, total)`` after each batch."""
        x = x.detach().to("cpu", torch.float32).contiguous()
        sample_bytes = 4 * math.prod(x.shape[1:])
        self.batch = max(1, min(self.batch, self.max_body_bytes // sample_bytes))
        out: list[torch.Tensor] = []
        done = 0
        while done < len(x):
            chunk = x[done:done + self.batch]
            released = self._release_batch(point_id, chunk, seed + done)
            if released is None:  # 413: the service's limits are smaller than ours
                if self.batch == 1:
                    raise ServiceError(f"the service refuses even one sample of {sample_bytes} bytes as too large")
                self.batch //= 2
                continue
            out.append(released)
            done += len(chunk)
            if progress is not None:
                progress(done, len(x))
        return torch.cat(out)

    def _release_batch(self, point_id: str, x: torch.Tensor, seed: int) -> torch.Tensor | None:
        """One request's release of ``x``, or None when the service answers 413 (too large)."""
        headers = {"content-type": BINARY, SEED_HEADER: str(seed), "serve_multiplexed_model_id": point_id}
        try:
            body, answer = self._send(f"/points/{point_id}/release", x.numpy().tobytes(), headers, with_headers=True)
        except _TooLarge:
            return None
        shape = [int(n) for n in answer["x-putlab-shape"].split(",")]
        return torch.frombuffer(bytearray(body), dtype=torch.float32).reshape(shape)

    def _send(self, path: str, data: bytes | None = None, headers: dict[str, str] | None = None,
              with_headers: bool = False) -> Any:
        """The body of a GET (no ``data``) or POST of ``path`` (and the answer's headers), retried while the service is
        busy; a ServiceError for anything else it refuses or when it cannot be reached."""
        auth = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        request = urllib.request.Request(self.base_url + path, data=data, headers={**(headers or {}), **auth})
        busy = ""
        for attempt in range(self.tries):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    body = response.read()
                    return (body, response.headers) if with_headers else body
            except urllib.error.HTTPError as err:
                if err.code == 413:
                    raise _TooLarge from None
                busy = f"{self.base_url}{path} answered {err.code}: {_message(err)}"
                busy += f" (the key is read from {API_KEY_ENV})" if err.code == 401 else ""
                if err.code not in BUSY:
                    raise ServiceError(busy) from None
                if attempt + 1 < self.tries:
                    self.sleep(_wait_s(err.headers.get("Retry-After"), attempt))
            except (urllib.error.URLError, OSError) as err:
                reason = getattr(err, "reason", err)
                raise ServiceError(f"cannot reach the release service at {self.base_url}: {reason}") from None
        raise ServiceError(f"{busy} (still busy after {self.tries} tries)")


class _TooLarge(Exception):
    """A 413: the request is over the service's batch or body limit."""


def _message(err: urllib.error.HTTPError) -> str:
    """The service's one-line ``error`` (or the start of whatever else it answered)."""
    text = err.read().decode(errors="replace")
    try:
        return str(json.loads(text)["error"]).splitlines()[0]
    except (ValueError, KeyError, TypeError, IndexError):
        return (text.strip().splitlines() or [str(err.reason)])[0][:200]


def _wait_s(retry_after: str | None, attempt: int) -> float:
    """Seconds to wait before the next try: the answer's ``Retry-After`` (in seconds), else 0.5 s doubled per try."""
    try:
        return min(float(retry_after), MAX_WAIT_S) if retry_after else min(0.5 * 2 ** attempt, MAX_WAIT_S)
    except ValueError:  # an HTTP date: wait as if none were given
        return min(0.5 * 2 ** attempt, MAX_WAIT_S)

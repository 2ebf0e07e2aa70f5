"""A client of the release service (``serve.app``): its points, and a split's releases fetched in batches.

It speaks the binary protocol (raw float32 samples), sends ``Authorization: Bearer <key>`` when it has a key (the
service's ``PUTLAB_SERVE_API_KEY``), keeps each request within the service's batch and body limits (halving its batch
on a 413, so a service with smaller limits than the defaults is still served), and backs off on 429 and 503 (a busy
service or its ingress), waiting ``Retry-After`` where the answer gives one. Any other refusal is a one-line
:class:`ServiceError`. It needs no Ray: it works against a local ``python -m serve`` as against a RayService.

Its base URL passes :func:`service_url` first (http or https, a host, a port in 1–65535, no credentials, no query).
Every request connects within :data:`CONNECT_TIMEOUT_S` seconds and then waits at most :data:`READ_TIMEOUT_S` seconds
for each part of the answer, so a port that accepts connections but never answers costs seconds, not minutes.
"""
from __future__ import annotations

import http.client
import json
import math
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

import torch
from pydantic import BaseModel, ConfigDict

from core.files.source import InputFileError
from core.files.structured import parse_json
from core.messages import first_line
from serve.app import BINARY, SEED_HEADER
from serve.auth import API_KEY_ENV
from serve.validation import Limits

T = TypeVar("T")
BUSY = (429, 503)
MAX_WAIT_S = 30.0  # the longest back-off between two tries of one request
CONNECT_TIMEOUT_S = 5.0  # to open a connection (TCP and TLS): a service on a reachable host accepts within milliseconds
READ_TIMEOUT_S = 30.0  # for each part of an answer: a batch's release takes well under a second (p99 270 ms at 16 clients)


class ServiceError(RuntimeError):
    """The service cannot be reached, or refused a request (one line: the status and the service's own message)."""


def redacted(url: str) -> str:
    """``url`` with any credentials before its host replaced by ``***``."""
    return re.sub(r"^([^/?#]*//)[^/?#]*@", r"\1***@", url)


def service_url(url: str) -> str:
    """``url`` as a release service's base URL (trailing slashes dropped); a one-line ValueError, with any credentials
    redacted, unless it is ASCII, http or https with a host, a port in 1–65535, no credentials, query or fragment."""
    shown = redacted(url)
    if any(not c.isprintable() or c.isspace() for c in url):
        raise ValueError(f"release service URL {shown!r} holds spaces or control characters")
    if not url.isascii():  # http.client sends the host and path as ASCII (the Host header as Latin-1)
        raise ValueError(f"release service URL {shown!r} holds characters outside ASCII: give the host in its ASCII "
                         "(IDNA) form and percent-encode the path")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:  # a port out of range or not a number, a malformed IPv6 host
        raise ValueError(f"release service URL {shown!r} is malformed: {first_line(exc)}") from None
    if parts.scheme not in ("http", "https"):
        got = f"scheme {parts.scheme!r}" if parts.scheme else "no scheme"
        raise ValueError(f"release service URL {shown!r} must start with http:// or https:// ({got})")
    if "@" in parts.netloc:
        raise ValueError(f"release service URL {shown!r} holds credentials: give the API key in {API_KEY_ENV}, "
                         "never in the URL")
    if not parts.hostname:
        raise ValueError(f"release service URL {shown!r} names no host")
    if port == 0:
        raise ValueError(f"release service URL {shown!r} has port 0 (ports are 1–65535)")
    if parts.query or parts.fragment:
        raise ValueError(f"release service URL {shown!r} has a query or fragment; give the service's base URL")
    return url.rstrip("/")


class _TimedConnection(http.client.HTTPConnection):
    """An HTTP connection opened within its ``timeout`` (the connect timeout), then read with READ_TIMEOUT_S."""

    def connect(self) -> None:
        _connect_within(super().connect, self.timeout)
        self.sock.settimeout(READ_TIMEOUT_S)


class _TimedSecureConnection(http.client.HTTPSConnection):
    """:class:`_TimedConnection` over TLS (its handshake within the connect timeout)."""

    def connect(self) -> None:
        _connect_within(super().connect, self.timeout)
        self.sock.settimeout(READ_TIMEOUT_S)


def _connect_within(connect: Callable[[], None], timeout: float | None) -> None:
    """Run ``connect``; its timeout is a ConnectionError saying the connect timeout passed."""
    try:
        connect()
    except TimeoutError:
        raise ConnectionError(f"no connection within the connect timeout of {timeout:g} s") from None


class _Handler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_TimedConnection, req)


class _SecureHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_TimedSecureConnection, req, context=self._context)  # type: ignore[attr-defined]


_OPENER = urllib.request.build_opener(_Handler, _SecureHandler)


class ReleaseClient:
    """The service at ``base_url`` (with any route prefix; checked by :func:`service_url`), with an API key or none."""

    def __init__(self, base_url: str, api_key: str | None = None, batch: int = Limits.max_batch,
                 max_body_bytes: int = Limits.max_body_bytes, tries: int = 8,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.base_url = service_url(base_url)
        self.api_key = api_key
        self.batch = batch
        self.max_body_bytes = max_body_bytes
        self.tries = tries
        self.sleep = sleep

    def health(self) -> dict[str, Any]:
        """``GET /health`` (open even on a service with a key): a ServiceError where nothing answers."""
        return self._answer("/health", dict[str, Any])

    def points(self) -> list[dict[str, Any]]:
        """The points the service serves (``GET /points``), each with its id, preset and metrics."""
        return [p.model_dump() for p in self._answer("/points", _Points).points]

    def _answer(self, path: str, schema: type[T]) -> T:
        """The JSON answer to ``GET path`` validated against ``schema``; a ServiceError for any other answer."""
        try:
            return parse_json(self._send(path).decode("utf-8", errors="replace"), schema, f"the answer of {self.base_url}{path}")
        except InputFileError as exc:
            raise ServiceError(str(exc)) from None

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
        try:
            shape = [int(n) for n in answer["x-putlab-shape"].split(",")]
            return torch.frombuffer(bytearray(body), dtype=torch.float32).reshape(shape)
        except (AttributeError, ValueError, RuntimeError):  # no shape header, or one that does not fit the body
            raise ServiceError(f"{self.base_url} answered a release of {len(body)} bytes whose x-putlab-shape "
                               f"{answer.get('x-putlab-shape')!r:.40} does not describe it") from None

    def _send(self, path: str, data: bytes | None = None, headers: dict[str, str] | None = None,
              with_headers: bool = False) -> Any:
        """The body of a GET (no ``data``) or POST of ``path`` (and the answer's headers), retried while the service is
        busy; a ServiceError for anything else it refuses or when it cannot be reached."""
        auth = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        request = urllib.request.Request(self.base_url + path, data=data, headers={**(headers or {}), **auth})
        busy = ""
        for attempt in range(self.tries):
            try:
                with _OPENER.open(request, timeout=CONNECT_TIMEOUT_S) as response:
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
            except (urllib.error.URLError, OSError, http.client.HTTPException) as err:
                reason = getattr(err, "reason", err)
                if isinstance(reason, TimeoutError):
                    reason = f"no answer within the read timeout of {READ_TIMEOUT_S:g} s"
                raise ServiceError(f"cannot reach the release service at {self.base_url}: "
                                   f"{first_line(reason) if isinstance(reason, BaseException) else reason}") from None
        raise ServiceError(f"{busy} (still busy after {self.tries} tries)")


class _Point(BaseModel):
    """One entry of ``GET /points``: its id, and whatever else the service describes it with."""

    model_config = ConfigDict(extra="allow")
    id: str


class _Points(BaseModel):
    """The answer of ``GET /points``."""

    points: list[_Point]


class _TooLarge(Exception):
    """A 413: the request is over the service's batch or body limit."""


def _message(err: urllib.error.HTTPError) -> str:
    """The service's one-line ``error`` (or the start of whatever else it answered)."""
    try:
        text = err.read().decode(errors="replace")
    except (OSError, http.client.HTTPException):  # the answer's body never came
        return str(err.reason)
    try:
        return first_line(str(json.loads(text)["error"]))
    except (ValueError, KeyError, TypeError, IndexError):
        return (text.strip().splitlines() or [str(err.reason)])[0][:200]


def _wait_s(retry_after: str | None, attempt: int) -> float:
    """Seconds to wait before the next try: the answer's ``Retry-After`` (in seconds), else 0.5 s doubled per try."""
    try:
        return min(float(retry_after), MAX_WAIT_S) if retry_after else min(0.5 * 2 ** attempt, MAX_WAIT_S)
    except ValueError:  # an HTTP date: wait as if none were given
        return min(0.5 * 2 ** attempt, MAX_WAIT_S)

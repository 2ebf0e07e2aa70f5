"""Checks of a release request before it reaches a mechanism: every malformed request is a 4xx with one clear line."""
from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

import numpy as np
import torch

from core.messages import first_line

BOOLEAN = re.compile(rb"\b(true|false)\b")
MAX_BODY_LIMIT = 1 << 30  # the largest --max-body-bytes (1 GiB)
MAX_BATCH_LIMIT = 1 << 20
MAX_READ_TIMEOUT_S = 3600.0
MAX_DEPTH = 16  # nesting of arrays/objects a release request may have (the object, the batch, a sample's dims)
OPENING = np.frombuffer(b"[{", dtype=np.uint8)
CLOSING = np.frombuffer(b"]}", dtype=np.uint8)
MAX_INT_DIGITS = 20  # a JSON integer longer than this cannot be a seed (< 2^63) nor a sane input value


class RequestError(Exception):
    """A request the service refuses: HTTP status and a one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Limits:
    """Request limits of one deployment: body size, batch size, and how long a body may take to arrive."""

    max_body_bytes: int = 8 * 1024 * 1024
    max_batch: int = 256
    read_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if not 1 <= self.max_body_bytes <= MAX_BODY_LIMIT:
            raise ValueError(f"--max-body-bytes must be in [1, {MAX_BODY_LIMIT}] (got {self.max_body_bytes})")
        if not 1 <= self.max_batch <= MAX_BATCH_LIMIT:
            raise ValueError(f"--max-batch must be in [1, {MAX_BATCH_LIMIT}] (got {self.max_batch})")
        if not 0 < self.read_timeout_s <= MAX_READ_TIMEOUT_S:  # also false for NaN
            raise ValueError(f"--read-timeout-s must be in (0, {MAX_READ_TIMEOUT_S:g}] (got {self.read_timeout_s})")


def parse_release(body: bytes, input_shape: tuple[int, ...], value_range: tuple[float, float] | None,
                  limits: Limits) -> tuple[torch.Tensor, int | None]:
    """``{"inputs": [N × input_shape numbers], "seed": int?}`` as a float32 tensor and the seed (None: server picks)."""
    check_size(len(body), limits)
    payload = load_json(body)
    if not isinstance(payload, dict) or "inputs" not in payload:
        raise RequestError(422, 'request body must be a JSON object with "inputs" (and optionally "seed")')
    unknown = sorted(set(payload) - {"inputs", "seed"})
    if unknown:
        # repr: a field name is the client's text, and may hold a newline that would split the one-line error
        raise RequestError(422, f"unknown request field(s): {', '.join(repr(name[:40]) for name in unknown[:5])}")
    inputs = payload["inputs"]
    if not isinstance(inputs, list) or not inputs:
        raise RequestError(422, "inputs must be a non-empty list of samples")
    check_batch(len(inputs), limits)
    try:
        x = torch.tensor(inputs, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise RequestError(422, "inputs must be a rectangular array of numbers, each sample of shape "
                                f"{list(input_shape)}") from None
    if x.shape[1:] != input_shape:
        raise RequestError(422, f"each sample must have shape {list(input_shape)} (got {list(x.shape[1:])})")
    seed = parse_seed(payload.get("seed"))  # first: a boolean seed is refused as the seed, not as the inputs
    if BOOLEAN.search(body):  # torch reads true/false as 1/0; the inputs may hold neither
        raise RequestError(422, "inputs must be numbers, not booleans")
    return check_values(x, value_range).float(), seed


def nesting_depth(body: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in ``body`` (brackets inside strings count too: an upper bound, in one pass)."""
    codes = np.frombuffer(body, dtype=np.uint8)
    steps = np.isin(codes, OPENING).astype(np.int32) - np.isin(codes, CLOSING).astype(np.int32)
    return int(np.cumsum(steps).max(initial=0))


def bounded_int(text: str) -> int:
    """A JSON integer of at most MAX_INT_DIGITS digits (a longer one is refused before Python converts it)."""
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise RequestError(422, f"integer of {len(text.lstrip('-'))} digits is too large (at most {MAX_INT_DIGITS})")
    return int(text)


def load_json(body: bytes) -> object:
    """Parse a JSON body with bounded nesting and integer size; 400 for malformed JSON, 422 for a bound exceeded."""
    if nesting_depth(body) > MAX_DEPTH:
        raise RequestError(422, f"JSON nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(body, parse_int=bounded_int)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RequestError(400, f"request body is not valid JSON: {exc}") from None
    except (RecursionError, ValueError) as exc:
        raise RequestError(400, f"request body is not valid JSON: {first_line(exc)}") from None


def parse_binary(body: bytes, seed: str | None, input_shape: tuple[int, ...], value_range: tuple[float, float] | None,
                 limits: Limits) -> tuple[torch.Tensor, int | None]:
    """Raw little-endian float32 samples of ``input_shape`` (the batch size follows from the length) and a seed header."""
    check_size(len(body), limits)
    sample_bytes = 4 * math.prod(input_shape)
    if not body or len(body) % sample_bytes:
        raise RequestError(422, f"binary body of {len(body)} bytes is not a whole number of float32 samples of shape "
                                f"{list(input_shape)} ({sample_bytes} bytes each)")
    check_batch(len(body) // sample_bytes, limits)
    x = torch.frombuffer(bytearray(body), dtype=torch.float32).reshape(-1, *input_shape)
    number = None
    if seed is not None:
        try:
            number = bounded_int(seed.strip())
        except (ValueError, RequestError):
            raise RequestError(422, f"seed must be a whole number in [0, 2^63) (got {seed[:40]!r})") from None
    return check_values(x, value_range), parse_seed(number)


def check_size(length: int, limits: Limits) -> None:
    """413 for a body over the limit."""
    if length > limits.max_body_bytes:
        raise RequestError(413, f"request body of {length} bytes exceeds the limit of {limits.max_body_bytes}")


def check_batch(n: int, limits: Limits) -> None:
    """413 for a batch over the limit."""
    if n > limits.max_batch:
        raise RequestError(413, f"batch of {n} samples exceeds the limit of {limits.max_batch}")


def parse_seed(seed: object) -> int | None:
    """A whole number in [0, 2^63), or None."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 63):
        raise RequestError(422, f"seed must be a whole number in [0, 2^63) (got {seed!r})")
    return seed


def check_values(x: torch.Tensor, value_range: tuple[float, float] | None) -> torch.Tensor:
    """422 for NaN/inf or values outside the mechanism's input range; ``x`` unchanged otherwise."""
    if not torch.isfinite(x).all():
        raise RequestError(422, "inputs contain NaN or infinite values")
    if value_range is not None and (x.min() < value_range[0] or x.max() > value_range[1]):
        raise RequestError(422, f"inputs must lie in [{value_range[0]:g}, {value_range[1]:g}] "
                                f"(got [{float(x.min()):g}, {float(x.max()):g}])")
    return x


async def read_body(chunks: AsyncIterator[bytes], limit: int, timeout_s: float) -> bytes:
    """The request body, refused with 413 as soon as it grows past ``limit`` (a chunked body has no length up front)
    and with 408 when it has not all arrived within ``timeout_s`` (a body shorter than its Content-Length, a client
    that stalls or trickles: the replica's slot is freed instead of held until the client gives up)."""
    body = bytearray()
    try:
        await asyncio.wait_for(_collect(chunks, limit, body), timeout_s)
    except asyncio.TimeoutError:  # not the builtin TimeoutError before Python 3.11
        raise RequestError(408, f"request body not received within {timeout_s:g} s "
                                f"({len(body)} bytes arrived)") from None
    return bytes(body)


async def _collect(chunks: AsyncIterator[bytes], limit: int, body: bytearray) -> None:
    """Append every chunk to ``body``; 413 once it is longer than ``limit``."""
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise RequestError(413, f"request body exceeds the limit of {limit} bytes")

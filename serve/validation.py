"""Checks of a release request before it reaches a mechanism: every malformed request is a 4xx with one clear line."""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import torch

BOOLEAN = re.compile(rb"\b(true|false)\b")


class RequestError(Exception):
    """A request the service refuses: HTTP status and a one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Limits:
    """Request size limits of one deployment."""

    max_body_bytes: int = 8 * 1024 * 1024
    max_batch: int = 256


def parse_release(body: bytes, input_shape: tuple[int, ...], value_range: tuple[float, float] | None,
                  limits: Limits) -> tuple[torch.Tensor, int | None]:
    """``{"inputs": [N × input_shape numbers], "seed": int?}`` as a float32 tensor and the seed (None: server picks)."""
    check_size(len(body), limits)
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RequestError(400, f"request body is not valid JSON: {exc}") from None
    if not isinstance(payload, dict) or "inputs" not in payload:
        raise RequestError(422, 'request body must be a JSON object with "inputs" (and optionally "seed")')
    unknown = sorted(set(payload) - {"inputs", "seed"})
    if unknown:
        raise RequestError(422, f"unknown request field(s): {', '.join(unknown)}")
    inputs = payload["inputs"]
    if not isinstance(inputs, list) or not inputs:
        raise RequestError(422, "inputs must be a non-empty list of samples")
    check_batch(len(inputs), limits)
    try:
        x = torch.tensor(inputs, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise RequestError(422, f"inputs must be a rectangular array of numbers, each sample of shape {list(input_shape)}") from None
    if x.shape[1:] != input_shape:
        raise RequestError(422, f"each sample must have shape {list(input_shape)} (got {list(x.shape[1:])})")
    if BOOLEAN.search(body):  # torch reads true/false as 1/0; neither field may hold one
        raise RequestError(422, "inputs must be numbers, not booleans")
    return check_values(x, value_range).float(), parse_seed(payload.get("seed"))


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
    if seed is not None:
        try:
            seed = int(seed)
        except ValueError:
            raise RequestError(422, f"seed must be a whole number in [0, 2^63) (got {seed!r})") from None
    return check_values(x, value_range), parse_seed(seed)


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

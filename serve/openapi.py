"""The release service's contract in its OpenAPI spec: both request bodies (JSON and raw float32) and every answer.

FastAPI cannot see a body read from the raw request, so the release route declares it here; clients and property-based
fuzzers then see exactly what the service accepts and which status codes it answers with.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SEED_MAX = 2**63 - 1


class ErrorBody(BaseModel):
    """Every refusal: one line saying what was wrong."""

    error: str


class ReleaseRequest(BaseModel):
    """The JSON request: a batch of samples (nested arrays of numbers, each of the point's input shape) and a seed."""

    model_config = ConfigDict(extra="forbid")
    inputs: list[list[Any]] = Field(min_length=1, description="samples, each a nested array of the point's input shape "
                                                              "(GET /points); values in the mechanism's input range")
    seed: int | None = Field(None, ge=0, le=SEED_MAX, description="noise seed; omitted: the server draws one")


class ReleaseResult(BaseModel):
    """The JSON answer: the released samples and the seed that drew their noise."""

    point: str
    mechanism: str
    seed: int
    shape: list[int]
    outputs: list[Any]


BINARY_BODY = {"schema": {"type": "string", "format": "binary",
                          "description": "little-endian float32 samples of the point's input shape, back to back"}}
SEED_HEADER_PARAM = {"name": "x-putlab-seed", "in": "header", "required": False,
                     "description": "noise seed of a binary request (a whole number in [0, 2^63))",
                     "schema": {"type": "string", "pattern": "^[0-9]{1,19}$"}}
RELEASE_EXTRA = {
    "parameters": [SEED_HEADER_PARAM],
    "requestBody": {"required": True, "content": {"application/json": {"schema": ReleaseRequest.model_json_schema()},
                                                  "application/octet-stream": BINARY_BODY}},
}


def refusal(description: str) -> dict[str, Any]:
    """One documented 4xx answer."""
    return {"model": ErrorBody, "description": description}


UNAUTHORIZED = refusal("the service has an API key and the request lacks it (Authorization: Bearer <key>)")
RELEASE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "released samples: JSON for a JSON request; raw float32 for a binary one "
                         "(headers x-putlab-seed and x-putlab-shape)",
          "content": {"application/json": {"schema": ReleaseResult.model_json_schema()},
                      "application/octet-stream": BINARY_BODY}},
    400: refusal("the body is not valid JSON"),
    401: UNAUTHORIZED,
    404: refusal("no such operating point (GET /points lists them)"),
    408: refusal("the body did not all arrive within the service's read timeout (e.g. shorter than its Content-Length)"),
    409: refusal("the operating point's registered checkpoint cannot be loaded"),
    413: refusal("the body or the batch exceeds the service's limits"),
    415: refusal("a content type other than application/json or application/octet-stream"),
    422: refusal("a well-formed request with invalid content: shape, range, NaN, seed, unknown fields, nesting"),
}

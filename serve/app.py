"""The putlab release service: registered operating points on Ray Serve, over HTTP.

  GET  /health                          liveness (always open)
  GET  /points                          servable points (``name/version``) with their metrics and why they were chosen
  POST /points/{name}/{version}/release ``{"inputs": [...], "seed": 7}`` -> the point's released outputs; or, with
       ``Content-Type: application/octet-stream``, raw float32 samples (seed in ``x-putlab-seed``) -> raw float32

Each replica keeps up to four points loaded (``MAX_POINTS_PER_REPLICA``, fixed: Serve's model multiplexing, least
recently used evicted); send the header ``serve_multiplexed_model_id: name/version`` to be routed to a replica that has it.
Every malformed request gets a 4xx with one line; the replica keeps serving. CUDA when the replica has a GPU.
With an API key in ``PUTLAB_SERVE_API_KEY`` every route but ``/health`` needs ``Authorization: Bearer <key>`` (401
otherwise, see ``serve.auth``); ``require_api_key=true`` refuses to serve without one (the Kubernetes manifests set it).

    serve run serve.app:build_app tracking_uri=sqlite:///$PWD/mlflow.db
"""

import asyncio
import secrets
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from ray import serve
from ray.serve import Application
from starlette.exceptions import HTTPException

from core.messages import first_line
from serve.auth import authorized, configured_key
from serve.openapi import RELEASE_EXTRA, RELEASE_RESPONSES, UNAUTHORIZED
from serve.points import PointInfo, Registry, check_models, list_points, load_point
from serve.validation import Limits, RequestError, parse_binary, parse_release, read_body
from trainables.shared.mechanism import pick_device
from trainables.shared.release_map import ReleaseMap

BINARY = "application/octet-stream"  # raw little-endian float32 samples in, the released ones out
SEED_HEADER = "x-putlab-seed"
MAX_POINTS_PER_REPLICA = 4  # operating points a replica keeps loaded (least recently used evicted)

api = FastAPI(title="putlab release service")


@api.middleware("http")
async def _authenticate(request: Request, call_next: Any) -> Response:
    """401 for a request without the replica's API key (when it has one); /health always passes.

    The key is read from the replica's environment here: Serve runs a copy of this app and of the class, so state
    set on ``api`` by ``ReleaseService.__init__`` would not be the state this middleware sees."""
    root, path = request.scope.get("root_path", ""), request.scope["path"]
    route = (path[len(root):] if root and path.startswith(root) else path) or "/"
    if not authorized(route, request.headers.get("authorization"), configured_key()):
        return JSONResponse({"error": "missing or wrong API key: send the header Authorization: Bearer <key>"},
                            status_code=401, headers={"WWW-Authenticate": "Bearer"})
    return await call_next(request)


@api.exception_handler(RequestError)
async def _refused(_: Request, exc: RequestError) -> JSONResponse:
    """A refusal as one line under ``error``; after a body that stopped arriving (408) the connection is closed too,
    rather than left waiting for the rest of it."""
    return JSONResponse({"error": exc.message}, status_code=exc.status,
                        headers={"Connection": "close"} if exc.status == 408 else None)


@api.exception_handler(HTTPException)
async def _http_error(_: Request, exc: HTTPException) -> JSONResponse:
    """FastAPI's own refusals (unknown route, wrong method) in the same one-line shape."""
    return JSONResponse({"error": first_line(exc.detail)}, status_code=exc.status_code, headers=exc.headers)


@api.exception_handler(RequestValidationError)
async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(part) for part in first.get("loc", ()))
    return JSONResponse({"error": f"{where}: {first.get('msg', 'invalid request')}"}, status_code=422)


def media_type(request: Request) -> str:
    """The request's content type without parameters; JSON when none is given."""
    return request.headers.get("content-type", "").split(";")[0].strip().lower() or "application/json"


@serve.ingress(api)
class ReleaseService:
    """One replica: the registry view, a multiplexed cache of loaded points, and the HTTP routes."""

    def __init__(self, tracking_uri: str, models: tuple[str, ...] = (), limits: Limits = Limits(),
                 require_api_key: bool = False) -> None:
        configured_key(require_api_key)  # a replica without the key it must have, or with a weak one, refuses to start
        self.registry = Registry(tracking_uri)
        self.models = models
        self.limits = limits
        self.device = pick_device()
        self.points = list_points(self.registry, models)

    def _info(self, point_id: str) -> PointInfo:
        """The registry entry of ``point_id`` (the registry is read again once for an id not seen yet)."""
        if point_id not in self.points:
            self.points = list_points(self.registry, self.models)
        if point_id not in self.points:
            raise RequestError(404, f"unknown operating point {point_id!r}; GET /points lists the served ones")
        return self.points[point_id]

    @serve.multiplexed(max_num_models_per_replica=MAX_POINTS_PER_REPLICA)
    async def point(self, point_id: str) -> ReleaseMap:
        """Load a point's release map (kept per replica, least recently used evicted)."""
        info = self.points[point_id]  # release() checked the id
        try:
            return await asyncio.to_thread(load_point, self.registry, info, self.device)
        except Exception as exc:  # noqa: BLE001 - a corrupt or missing registered checkpoint: refuse, keep serving the others
            raise RequestError(409, f"operating point {point_id} cannot be loaded: {first_line(exc)}") from None

    @api.get("/health", responses={200: {"description": "the replica is up"}})
    async def health(self) -> dict[str, Any]:
        return {"status": "ok", "device": str(self.device)}

    @api.get("/points", responses={401: UNAUTHORIZED})
    async def list_served(self) -> dict[str, Any]:
        self.points = list_points(self.registry, self.models)
        return {"points": [info.as_dict() for info in self.points.values()]}

    @api.post("/points/{name}/{version}/release", response_model=None, openapi_extra=RELEASE_EXTRA,
              responses=RELEASE_RESPONSES)
    async def release(self, name: str, version: str, request: Request) -> dict[str, Any] | Response:
        point_id = f"{name}/{version}"
        kind = media_type(request)
        if kind != BINARY and kind != "application/json" and not kind.endswith("+json"):
            raise RequestError(415, f"content type {kind[:80]!r} is not supported: send application/json or {BINARY}")
        length = int(request.headers.get("content-length") or 0)  # the server has checked that it is a number
        if length > self.limits.max_body_bytes:
            raise RequestError(413, f"request body of {length} bytes exceeds the limit of {self.limits.max_body_bytes}")
        self._info(point_id)
        body = await read_body(request.stream(), self.limits.max_body_bytes, self.limits.read_timeout_s)
        release_map = await self.point(point_id)
        binary = kind == BINARY
        if binary:
            x, seed = parse_binary(body, request.headers.get(SEED_HEADER), release_map.input_shape,
                                   release_map.value_range, self.limits)
        else:
            x, seed = parse_release(body, release_map.input_shape, release_map.value_range, self.limits)
        seed = secrets.randbelow(2 ** 63) if seed is None else seed
        out = (await asyncio.to_thread(release_map.release, x, seed)).cpu()
        if binary:
            return Response(out.numpy().tobytes(), media_type=BINARY,
                            headers={SEED_HEADER: str(seed), "x-putlab-shape": ",".join(map(str, out.shape))})
        return {"point": point_id, "mechanism": release_map.mechanism, "seed": seed, "shape": list(out.shape),
                "outputs": out.tolist()}


# applied as a call rather than a class decorator, which type checkers ignore: they see the Deployment it makes
RELEASE_DEPLOYMENT = serve.deployment(max_ongoing_requests=32)(ReleaseService)


def build_app(args: dict[str, str]) -> Application:
    """Application builder for ``serve run serve.app:build_app tracking_uri=... [models=a/1,b] [num_gpus=0.25]
    [require_api_key=true] [read_timeout_s=30]``; a ``models`` entry that names no registered operating point is refused
    (ValueError, one line naming it)."""
    if not args.get("tracking_uri"):
        raise ValueError("serve.app:build_app needs tracking_uri=<MLflow tracking URI>")
    require = str(args.get("require_api_key", "false")).lower()
    if require not in ("true", "false"):
        raise ValueError(f"require_api_key must be true or false (got {require!r})")
    models = tuple(m.strip() for m in str(args.get("models", "")).split(",") if m.strip())
    if models:  # a name that serves nothing is a typo: refused here as by ``python -m serve --models``
        check_models(Registry(args["tracking_uri"]), models, "models=")
    limits = Limits(max_body_bytes=int(args.get("max_body_bytes", Limits.max_body_bytes)),
                    max_batch=int(args.get("max_batch", Limits.max_batch)),
                    read_timeout_s=float(args.get("read_timeout_s", Limits.read_timeout_s)))
    actor = {"num_cpus": float(args.get("num_cpus", 1)), "num_gpus": float(args.get("num_gpus", 0))}
    deployment = RELEASE_DEPLOYMENT.options(num_replicas=int(args.get("num_replicas", 1)), ray_actor_options=actor)
    return deployment.bind(args["tracking_uri"], models, limits, require == "true")

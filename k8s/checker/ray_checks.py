"""Ray's own checks of the configurations inside ray.io manifests, which a cluster would otherwise only
apply at run time: a RayService's Serve config (``ray.serve.schema``; fields Serve does not know are
reported, since Serve silently ignores them) and every runtime environment (``ray.runtime_env``)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import TypeAdapter

from core.files.source import InputFileError
from core.files.structured import parse_yaml_document
from k8s.checker import Document, Problem, problem

ANY: TypeAdapter[Any] = TypeAdapter(Any)


def check(doc: Document) -> Iterator[Problem]:
    """Problems Ray itself would raise (or silently ignore) in the configs of ``doc``."""
    spec = doc.mapping("spec")
    if doc.body.get("kind") == "RayService" and isinstance(spec.get("serveConfigV2"), str):
        for where, message in serve_config_problems(_parsed(spec["serveConfigV2"])):
            yield problem(doc, ["spec", "serveConfigV2"] + where, message)
    if doc.body.get("kind") == "RayJob" and isinstance(spec.get("runtimeEnvYAML"), str):
        for where, message in runtime_env_problems(_parsed(spec["runtimeEnvYAML"])):
            yield problem(doc, ["spec", "runtimeEnvYAML"] + where, message)


def _parsed(text: str) -> Any:
    """The YAML of an embedded config, or None when it does not parse (refs reports that)."""
    try:
        return parse_yaml_document(text, ANY, "embedded YAML")
    except InputFileError:
        return None


def serve_config_problems(config: Any) -> list[tuple[list, str]]:
    """``(path, message)`` for every field Serve does not know and every value its schema rejects."""
    from pydantic import ValidationError
    from ray.serve.schema import DeploymentSchema, ServeApplicationSchema, ServeDeploySchema

    if not isinstance(config, dict):
        return [([], "the Serve config is not a mapping")] if config is not None else []
    found = _unknown(config, ServeDeploySchema, [])
    for i, app in enumerate(config.get("applications") or []):
        if isinstance(app, dict):
            found += _unknown(app, ServeApplicationSchema, ["applications", i])
            for j, deployment in enumerate(app.get("deployments") or []):
                if isinstance(deployment, dict):
                    found += _unknown(deployment, DeploymentSchema, ["applications", i, "deployments", j])
            if isinstance(app.get("runtime_env"), dict):
                found += [(["applications", i, "runtime_env"] + where, message)
                          for where, message in runtime_env_problems(app["runtime_env"])]
    try:
        ServeDeploySchema.model_validate(config)
    except ValidationError as exc:
        found += [(list(error["loc"]), error["msg"]) for error in exc.errors()]
    return found


def _unknown(values: dict, model: Any, where: list) -> list[tuple[list, str]]:
    known = set(model.model_fields) | {f.alias for f in model.model_fields.values() if f.alias}
    unknown = sorted(set(values) - known)
    return [(where + [name], f"unknown field of {model.__name__} (Serve would ignore it)") for name in unknown]


def runtime_env_problems(env: Any) -> list[tuple[list, str]]:
    """``(path, message)`` for runtime-environment fields Ray does not know and values it rejects."""
    from ray.runtime_env import RuntimeEnv

    if not isinstance(env, dict):
        return [([], "the runtime environment is not a mapping")] if env is not None else []
    found = [([name], "unknown runtime_env field") for name in sorted(set(env) - set(RuntimeEnv.known_fields))]
    try:
        RuntimeEnv(**env)
    except (TypeError, ValueError) as exc:
        found.append(([], " ".join(str(exc).split())))
    return found

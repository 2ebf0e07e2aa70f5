"""putlab's rules for its pods, beyond what the schemas require: non-root, no privilege escalation,
no capabilities, CPU and memory requests and limits on every container, and a GPU limit on every
Ray GPU worker group (a GPU image or group without ``nvidia.com/gpu`` would get no GPU)."""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from k8s.checker import Document, Problem, problem

GPU = "nvidia.com/gpu"
RAY_CLUSTER_SPECS = {"RayCluster": ["spec"], "RayJob": ["spec", "rayClusterSpec"], "RayService": ["spec", "rayClusterConfig"]}
_GPU_IMAGE = re.compile(r":[^/]*(-gpu|-cu\d+)")


def check(doc: Document) -> Iterator[Problem]:
    """Every rule broken by ``doc``."""
    for path, pod in pod_specs(doc.body, []):
        yield from _pod_security(doc, path, pod)
        for key in ("initContainers", "containers"):
            for i, container in enumerate(pod.get(key) or []):
                if isinstance(container, dict):
                    yield from _container(doc, path + [key, i], container)
    yield from _gpu_workers(doc)


def pod_specs(node: Any, path: list) -> Iterator[tuple[list, dict]]:
    """``(path, pod spec)`` of every pod spec in a manifest: any mapping with a list of containers."""
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            yield path, node
        for key, value in node.items():
            yield from pod_specs(value, path + [key])
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from pod_specs(value, path + [i])


def _pod_security(doc: Document, path: list, pod: dict) -> Iterator[Problem]:
    pod_ctx = pod.get("securityContext") or {}
    containers = [c for key in ("initContainers", "containers") for c in pod.get(key) or [] if isinstance(c, dict)]
    every_container = all((c.get("securityContext") or {}).get("runAsNonRoot") is True for c in containers)
    if pod_ctx.get("runAsNonRoot") is not True and not every_container:
        yield problem(doc, path + ["securityContext", "runAsNonRoot"],
                      "pod may run as root: set securityContext.runAsNonRoot: true")
    if pod_ctx.get("runAsUser") == 0:
        yield problem(doc, path + ["securityContext", "runAsUser"], "runAsUser 0 is root")


def _container(doc: Document, path: list, container: dict) -> Iterator[Problem]:
    ctx = container.get("securityContext") or {}
    if ctx.get("allowPrivilegeEscalation") is not False:
        yield problem(doc, path + ["securityContext", "allowPrivilegeEscalation"], "set allowPrivilegeEscalation: false")
    if "ALL" not in ((ctx.get("capabilities") or {}).get("drop") or []):
        yield problem(doc, path + ["securityContext", "capabilities", "drop"], "drop ALL capabilities")
    if ctx.get("privileged") is True or ctx.get("runAsUser") == 0:
        yield problem(doc, path + ["securityContext"], "privileged or root container")
    resources = container.get("resources") or {}
    for kind in ("requests", "limits"):
        missing = [r for r in ("cpu", "memory") if r not in (resources.get(kind) or {})]
        if missing:
            yield problem(doc, path + ["resources", kind], f"no {' or '.join(missing)} {kind}")
    requested, limited = (resources.get("requests") or {}).get(GPU), (resources.get("limits") or {}).get(GPU)
    if requested is not None and str(requested) != str(limited):
        yield problem(doc, path + ["resources", "limits", GPU], f"{GPU} must be set in limits (and equal any request)")


def _gpu_workers(doc: Document) -> Iterator[Problem]:
    """A worker group that is meant for GPUs must request them: its Ray container limits nvidia.com/gpu."""
    spec_path = RAY_CLUSTER_SPECS.get(str(doc.body.get("kind")))
    spec: Any = doc.body
    for key in spec_path or []:
        spec = spec.get(key) if isinstance(spec, dict) else None
    if not spec_path or not isinstance(spec, dict):
        return
    for i, group in enumerate(spec.get("workerGroupSpecs") or []):
        if not isinstance(group, dict):
            continue
        containers = (((group.get("template") or {}).get("spec") or {}).get("containers")) or [{}]
        ray = containers[0] if isinstance(containers[0], dict) else {}
        params = group.get("rayStartParams") or {}
        wants_gpu = ("gpu" in str(group.get("groupName", "")).lower() or bool(_GPU_IMAGE.search(str(ray.get("image", ""))))
                     or _positive(params.get("num-gpus")))
        if wants_gpu and not _positive(((ray.get("resources") or {}).get("limits") or {}).get(GPU)):
            where = spec_path + ["workerGroupSpecs", i, "template", "spec", "containers", 0, "resources", "limits", GPU]
            yield problem(doc, where,
                          f"GPU worker group {group.get('groupName')!r} has no {GPU} limit: its pods would get no GPU")


def _positive(value: Any) -> bool:
    try:
        return float(value) > 0
    except (TypeError, ValueError):
        return False

"""Registered operating points: the format ``platform.select`` writes and the service reads, and loading one.

A point is a version of an MLflow registered model whose source is ``runs:/<trial run>/operating_point/<id>``: the trial's
checkpoint files plus ``putlab_point.json`` (preset, mechanism, config, metrics, why it was chosen). Loading one
rebuilds the mechanism's own :class:`~trainables.shared.release_map.ReleaseMap` through its preset, so serving releases
exactly as training and evaluation do.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from mlflow.artifacts import download_artifacts
from mlflow.entities.model_registry import ModelVersion
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient
from pydantic import BaseModel, ConfigDict

from core.files.structured import read_json
from search_spaces import Preset, presets
from search_spaces.plugins import load_preset_file
from trainables.shared.release_map import ReleaseMap

POINT_DIR = "operating_point"
POINT_FILE = "putlab_point.json"
PRESET_TAG = "putlab.preset"


class Registry:
    """The MLflow model registry at ``tracking_uri``: the serving side's one door to MLflow."""

    def __init__(self, tracking_uri: str) -> None:
        self.tracking_uri = tracking_uri
        self._client = MlflowClient(tracking_uri)

    def versions(self, where: str) -> list[ModelVersion]:
        """The registered versions matching MLflow's filter ``where``."""
        return list(self._client.search_model_versions(where))

    def version(self, name: str, version: str) -> ModelVersion | None:
        """Version ``version`` of model ``name``; None where the registry holds none."""
        try:
            return self._client.get_model_version(name, version)
        except MlflowException:
            return None

    def download(self, version: ModelVersion, into: str, file: str = "") -> Path:
        """A registered version's files (or only ``file`` of them) downloaded into ``into``."""
        source = f"{version.source}/{file}" if file else str(version.source)
        return Path(download_artifacts(artifact_uri=source, dst_path=into, tracking_uri=self.tracking_uri))


class PointFile(BaseModel):
    """What ``putlab_point.json`` holds (``platform.select`` writes it): the preset (and its file, for a preset from
    outside putlab), the trial's typed config and metrics, and why it was chosen."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    preset: str
    mechanism: str
    config: dict[str, Any]
    metrics: dict[str, float]
    trial_id: str | float | None  # NaN where the trial's run had no trial id
    run_name: str | float | None
    reason: str
    preset_file: str | None = None


@dataclass(frozen=True)
class PointInfo:
    """What the registry says about one servable version (``point_id`` = ``name/version``)."""

    name: str
    version: str
    preset: str
    mechanism: str
    description: str
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def point_id(self) -> str:
        return f"{self.name}/{self.version}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready description for ``GET /points``."""
        return {"id": self.point_id, "name": self.name, "version": self.version, "preset": self.preset,
                "mechanism": self.mechanism, "description": self.description, "metrics": self.metrics}


def _info(version: Any) -> PointInfo | None:
    """PointInfo of a registry version written by platform.select (None for anything else)."""
    tags = version.tags or {}
    if PRESET_TAG not in tags:
        return None
    metrics = {k.removeprefix("metric."): float(v) for k, v in tags.items() if k.startswith("metric.")}
    return PointInfo(version.name, str(version.version), tags[PRESET_TAG], tags.get("putlab.mechanism", ""),
                     version.description or "", metrics)


def list_points(registry: Registry, models: tuple[str, ...] = ()) -> dict[str, PointInfo]:
    """Servable points by id: every version of ``models`` (``name`` or ``name/version``), or of every putlab model."""
    if models:
        found = []  # a named model that is not (yet) registered serves nothing until it is
        for entry in models:
            name, _, version = entry.partition("/")
            one = registry.version(name, version) if version else None
            found += ([one] if one is not None else []) if version else registry.versions(f"name = '{name}'")
    else:
        found = registry.versions(f"tags.`{PRESET_TAG}` != ''")
    infos = [_info(v) for v in found]
    return {i.point_id: i for i in infos if i is not None}


def unknown_models(models: tuple[str, ...], points: dict[str, PointInfo]) -> list[str]:
    """The entries of ``models`` (``name`` or ``name/version``) that name no point in ``points``."""
    names = {info.name for info in points.values()}
    return [m for m in models if (m not in points if "/" in m else m not in names)]


class UnknownModelsError(ValueError):
    """Named models (``name`` or ``name/version``) that are no registered operating point."""


def check_models(registry: Registry, models: tuple[str, ...], option: str) -> dict[str, PointInfo]:
    """The points ``models`` names (every registered one when it names none); an :class:`UnknownModelsError`, one line
    naming the entries that name no point (and the registered ones, for the user's ``option``), when some do."""
    points = list_points(registry, models)
    unknown = unknown_models(models, points)
    if unknown:
        registered = sorted(list_points(registry))
        shown = ", ".join(registered[:10]) + (f" and {len(registered) - 10} more" if len(registered) > 10 else "")
        raise UnknownModelsError(f"{option} names no registered operating point: {', '.join(unknown)} "
                                 f"(registered: {shown or 'none'})")
    return points


def point_preset(point: PointFile) -> Preset:
    """The preset a point description names (read from its preset file where it came from outside putlab)."""
    if point.preset_file:
        return load_preset_file(point.preset_file)
    known = presets()
    if point.preset not in known:
        raise ValueError(f"the point names preset {point.preset!r}, which is not one of {', '.join(sorted(known))}")
    return known[point.preset]


def read_point(registry: Registry, name: str, version: str) -> PointFile:
    """A registered version's point description (``putlab_point.json`` alone, never its checkpoint); an InputFileError
    (one line) when it is not what ``platform.select`` writes."""
    found = registry.version(name, version)
    if found is None:
        raise LookupError(f"no registered version {name}/{version} in {registry.tracking_uri}")
    with tempfile.TemporaryDirectory() as tmp:
        path = registry.download(found, tmp, POINT_FILE)
        return read_json(path, PointFile, source=f"{name}/{version}'s {POINT_FILE}")


def load_point(registry: Registry, info: PointInfo, device: torch.device) -> ReleaseMap:
    """Download the version's files and rebuild its release map on ``device`` (raises on a corrupt checkpoint)."""
    version = registry.version(info.name, info.version)
    if version is None:
        raise LookupError(f"registered version {info.point_id} is gone from {registry.tracking_uri}")
    with tempfile.TemporaryDirectory() as tmp:
        directory = registry.download(version, tmp)
        point = read_json(directory / POINT_FILE, PointFile, source=f"{info.point_id}'s {POINT_FILE}")
        preset = point_preset(point)
        load_release = preset.load_release
        if load_release is None:
            raise ValueError(f"preset {preset.name!r} of {info.name}/{info.version} has no release map to serve")
        release_map = load_release(point.config, str(directory))
    return release_map.to(device)

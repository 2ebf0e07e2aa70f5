"""Offline check of putlab's Kubernetes manifests, so a typo fails here and not on a cluster.

Core kinds are validated against the Kubernetes schemas of ``kubernetes-validate`` (strict: unknown
fields are errors), ray.io kinds against the openAPIV3Schema of the KubeRay CRDs (vendored in
k8s/crds, or a user's own with ``--crds``) made strict the way the API server's structural pruning
would drop unknown fields. Then putlab's rules (rules), references into the repo
(refs) and Ray's own checks of the Serve config and runtime environments (ray_checks).
One line per problem; exit 1 on problems, 2 on unusable input. Every YAML file is read through
``core.files.structured`` (safe loader, size, alias and nesting limits), so a "billion laughs" file is refused in
one line at once.

    python -m k8s.checker [--crds DIR] [--kubernetes-version 1.30.0] [files...]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from pydantic import TypeAdapter
from referencing import Registry, Resource

from core.files.source import InputFileError
from core.files.structured import read_yaml

REPO = Path(__file__).resolve().parents[2]
MANIFEST_DIR = REPO / "k8s"
DEFAULT_CRDS = MANIFEST_DIR / "crds"
DEFAULT_KUBERNETES_VERSION = "1.30.0"
EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
_K8S_DEFS = "https://kubernetes.io/api/_definitions.json"
_OBJECT_META = {"$ref": f"{_K8S_DEFS}#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
MAPPING: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])  # what every YAML document of a manifest must be


class ManifestError(Exception):
    """Input the check cannot work with (a --crds that is no folder, an unknown Kubernetes version): exit code 2.
    A manifest or CRD file that does not read is an InputFileError, which exits 2 the same way."""


@dataclass(frozen=True)
class Document:
    """One YAML document of a manifest file."""

    file: str
    body: dict

    @property
    def ref(self) -> str:
        return f"{self.body.get('kind', '?')}/{self.mapping('metadata').get('name', '?')}"

    def mapping(self, key: str) -> dict:
        """The mapping at top-level ``key``; {} where it is absent or not a mapping (its schema check reports that)."""
        value = self.body.get(key)
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Problem:
    """One finding: which file, which object, where in it (a JSON path) and what is wrong."""

    file: str
    obj: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.obj}: {self.path}: {self.message}"


def json_path(parts: Any) -> str:
    """``$.spec.workerGroupSpecs[0].template`` from a sequence of keys and indices."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if re.fullmatch(r"[\w-]+", str(part)) else f"[{json.dumps(str(part))}]"
    return out


def problem(doc: Document, parts: Any, message: str) -> Problem:
    """A Problem located in ``doc`` at the JSON path ``parts``."""
    return Problem(doc.file, doc.ref, json_path(parts), message)


def load_documents(path: Path) -> list[Document]:
    """Every non-empty YAML document of ``path``, each a mapping; an InputFileError (one line) for anything else, or
    for a file that holds no document (an empty manifest checks nothing)."""
    source = f"manifest {display(path)}"
    bodies = read_yaml(path, MAPPING, source=source)
    if not bodies:
        raise InputFileError(source, "holds no YAML document")
    return [Document(display(path), body) for body in bodies]


def display(path: Path) -> str:
    """``path`` relative to the repo when inside it, for short and stable messages."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def default_manifests() -> list[Path]:
    """Every YAML file under k8s/ except the vendored CRDs."""
    return sorted(p for p in MANIFEST_DIR.rglob("*.y*ml") if DEFAULT_CRDS not in p.parents)


def load_crd_schemas(crd_dir: Path) -> dict[tuple[str, str], dict]:
    """``(apiVersion, kind) -> openAPIV3Schema`` of every served version of the CRDs in ``crd_dir``.

    Accepts the files as published and ``kubectl get crd ... -o yaml`` output (also a List).
    """
    if not crd_dir.exists():
        raise ManifestError(f"--crds {crd_dir} does not exist: give the folder of the KubeRay CRD YAMLs")
    if not crd_dir.is_dir():
        raise ManifestError(f"--crds {crd_dir} is not a folder: give the folder of the KubeRay CRD YAMLs, not a file")
    schemas: dict[tuple[str, str], dict] = {}
    for path in sorted(p for p in crd_dir.iterdir() if p.suffix in (".yaml", ".yml", ".json")):
        for doc in load_documents(path):
            items = doc.body.get("items", []) if doc.body.get("kind") == "List" else [doc.body]
            for crd in (i for i in items if isinstance(i, dict) and i.get("kind") == "CustomResourceDefinition"):
                spec = crd.get("spec", {})
                for version in spec.get("versions", []):
                    schema = (version.get("schema") or {}).get("openAPIV3Schema")
                    if version.get("served") and schema:
                        schemas[(f"{spec['group']}/{version['name']}", spec["names"]["kind"])] = schema
    if not schemas:
        raise ManifestError(f"no CustomResourceDefinition with a served openAPIV3Schema in {crd_dir}")
    return schemas


def structural(schema: dict) -> dict:
    """The CRD schema as strict JSON Schema: unknown fields rejected wherever the API server prunes them.

    An object with ``properties`` and neither ``additionalProperties`` nor
    ``x-kubernetes-preserve-unknown-fields`` keeps only its declared fields on a cluster, so a
    misspelt field would vanish silently; here it is an error. ``nullable`` allows null,
    ``x-kubernetes-int-or-string`` an integer or a string, an embedded resource its apiVersion, kind
    and metadata. Other ``x-kubernetes-*`` keys (list types, CEL rules) are not evaluated.
    """
    out = {k: v for k, v in schema.items() if not k.startswith("x-kubernetes-")}
    for key in ("properties", "patternProperties"):
        if key in out:
            out[key] = {name: structural(sub) for name, sub in out[key].items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), dict):
            out[key] = structural(out[key])
    for key in ("anyOf", "oneOf", "allOf"):
        if key in out:
            out[key] = [structural(sub) for sub in out[key]]
    if schema.get("x-kubernetes-int-or-string") and "anyOf" not in out:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        out.pop("type", None)
    if schema.get("x-kubernetes-embedded-resource"):
        out.setdefault("properties", {})
        for name in ("apiVersion", "kind"):
            out["properties"].setdefault(name, {"type": "string"})
        out["properties"]["metadata"] = _OBJECT_META
    if "properties" in out and "additionalProperties" not in out and not schema.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    if schema.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    out.pop("nullable", None)
    return out


class SchemaSet:
    """Validators for the manifests' kinds: Kubernetes ``k8s_version`` plus the CRDs in ``crd_dir``."""

    def __init__(self, crd_dir: Path, k8s_version: str) -> None:
        self.crds = load_crd_schemas(crd_dir)
        self.crd_dir = crd_dir
        self.k8s_dir = _k8s_schema_dir(k8s_version)
        self.registry = Resource.from_contents(_read_json(self.k8s_dir / "_definitions.json")) @ Registry()
        self._validators: dict[tuple[str, str], jsonschema.Draft202012Validator | None] = {}

    def validator(self, api_version: str, kind: str) -> jsonschema.Draft202012Validator | None:
        """The strict validator of one kind, or None when neither Kubernetes nor the CRDs define it."""
        if (api_version, kind) not in self._validators:
            self._validators[(api_version, kind)] = self._build(api_version, kind)
        return self._validators[(api_version, kind)]

    def _build(self, api_version: str, kind: str) -> jsonschema.Draft202012Validator | None:
        if (api_version, kind) in self.crds:
            schema = structural(self.crds[(api_version, kind)])
            schema.setdefault("properties", {})["metadata"] = _OBJECT_META
            for name in ("apiVersion", "kind"):
                schema["properties"].setdefault(name, {"type": "string"})
            return jsonschema.Draft202012Validator(schema, registry=self.registry)
        group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
        path = self.k8s_dir / f"{kind.lower()}-{group_version}.json"
        if not path.is_file():
            return None
        return jsonschema.Draft202012Validator(_read_json(path), registry=self.registry)

    def check(self, doc: Document) -> Iterator[Problem]:
        """Schema problems of one document, each unknown field on its own line."""
        api_version, kind = doc.body.get("apiVersion"), doc.body.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            yield problem(doc, [], "apiVersion and kind are required strings")
            return
        validator = self.validator(api_version, kind)
        if validator is None:
            yield problem(doc, ["kind"], f"no schema for {kind} {api_version} in Kubernetes {self.k8s_dir.name.split('-')[0]} "
                                         f"or the CRDs in {display(self.crd_dir)}")
            return
        for error in sorted(validator.iter_errors(doc.body), key=lambda e: (list(map(str, e.absolute_path)), e.message)):
            yield from _explain(doc, error)


def _explain(doc: Document, error: jsonschema.ValidationError) -> Iterator[Problem]:
    """One Problem per unknown field, else the error at its path (the closest branch for anyOf)."""
    where = list(error.absolute_path)
    if error.validator == "additionalProperties" and error.validator_value is False and isinstance(error.instance, dict):
        known = set(error.schema.get("properties", {}))
        for name in sorted(set(error.instance) - known):
            yield problem(doc, where + [name], "unknown field (not in the schema; the API server would reject or drop it)")
        return
    if error.context:
        yield from _explain(doc, jsonschema.exceptions.best_match(error.context))
        return
    yield problem(doc, where, error.message)


def _k8s_schema_dir(version: str) -> Path:
    """kubernetes-validate's strict schemas for the newest supported release not after ``version``."""
    import kubernetes_validate

    wanted = _minor(version.lstrip("v"))
    if wanted is None:
        raise ManifestError(f"--kubernetes-version {version!r} is not a version like 1.30.0")
    root = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    available = sorted((minor, p) for p in root.glob("v*-local-strict") if (minor := _minor(p.name[1:])) is not None)
    if not available or not available[0][0] <= wanted <= available[-1][0]:
        span = f"{available[0][1].name.split('-')[0]}..{available[-1][1].name.split('-')[0]}" if available else "none"
        raise ManifestError(f"Kubernetes {version} is not covered by kubernetes-validate "
                            f"{kubernetes_validate.__version__} ({span})")
    return [p for minor, p in available if minor <= wanted][-1]


def _minor(version: str) -> tuple[int, int] | None:
    """``(major, minor)`` of a version string such as ``1.30.0`` or ``1.30.0-local-strict``."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match[1]), int(match[2])) if match else None


@cache
def _read_json(path: Path) -> dict:
    return json.loads(path.read_text())


def check_files(files: list[Path], crd_dir: Path = DEFAULT_CRDS, k8s_version: str = DEFAULT_KUBERNETES_VERSION,
                schemas: SchemaSet | None = None) -> list[Problem]:
    """Every problem in ``files``: schemas, putlab's rules, references into the repo and between objects.

    ``schemas`` reuses loaded schemas (``crd_dir`` and ``k8s_version`` are then ignored).
    """
    from k8s.checker import ray_checks, refs, rules

    docs = [doc for path in files for doc in load_documents(path)]  # the user's files first: a broken one fails fast
    schemas = schemas or SchemaSet(crd_dir, k8s_version)
    checked = {d.file for d in docs}
    known = docs + [doc for path in default_manifests() if display(path) not in checked for doc in load_documents(path)]
    problems: list[Problem] = []
    for doc in docs:
        problems += schemas.check(doc)
        problems += rules.check(doc)
        problems += refs.check(doc, known)
        problems += ray_checks.check(doc)
    return problems


def main(argv: list[str] | None = None) -> int:
    """CLI: print one line per problem; exit 0 when all valid, 1 on problems, 2 on unusable input."""
    parser = argparse.ArgumentParser(prog="python -m k8s.checker", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="manifests to check (default: every YAML under k8s/ except k8s/crds)")
    parser.add_argument("--crds", type=Path, default=DEFAULT_CRDS, help="directory of KubeRay CRD YAMLs (default: k8s/crds)")
    parser.add_argument("--kubernetes-version", default=DEFAULT_KUBERNETES_VERSION,
                        help="Kubernetes schemas to use (default 1.30.0)")
    args = parser.parse_args(argv)
    files = args.files or default_manifests()
    try:
        problems = check_files(files, args.crds, args.kubernetes_version)
    except (ManifestError, InputFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for found in problems:
        print(found)
    verdict = f"{len(problems)} problem(s)" if problems else "all valid"
    print(f"{len(files)} file(s) checked against Kubernetes {args.kubernetes_version} and the CRDs in "
          f"{display(args.crds)}: {verdict}", file=sys.stderr if problems else sys.stdout)
    return EXIT_PROBLEMS if problems else EXIT_OK

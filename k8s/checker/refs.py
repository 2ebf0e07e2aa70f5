"""What a manifest names must exist: repo modules run with ``python -m`` (and their options), modules
imported by ``python -c``, Serve import paths, repo files, the runtime environment's code and pins
(as in pyproject.toml), Ray images matching rayVersion, and the Secrets, volume claims and Services
that other manifests define."""
from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

from core.files.source import InputFileError
from core.files.structured import parse_yaml_document
from k8s.checker import REPO, Document, Problem, problem
from k8s.checker.ray_checks import ANY

LAYOUT_PACKAGES = ("platform", "core", "trainables", "attacks", "search_spaces", "serve")  # the top-level packages of the layout
REPO_DIRS = ("k8s", "serve", "platform", "trainables", "attacks", "search_spaces", "scripts", "benchmarks", "tests")
_REPO_PATH = re.compile(rf"(?<![\w/.-])((?:{'|'.join(REPO_DIRS)})/[\w./-]*\.\w+)")
_SERVICE_DNS = re.compile(r"(?<![\w.-])([a-z0-9-]+)\.([a-z0-9-]+)\.svc(?:\.cluster\.local)?(?::(\d+))?")
# field -> (kind it names, key holding the name)
_OBJECT_FIELDS = {"secretKeyRef": ("Secret", "name"), "secretRef": ("Secret", "name"), "secret": ("Secret", "secretName"),
                  "persistentVolumeClaim": ("PersistentVolumeClaim", "claimName")}
_PYTHON = re.compile(r"^python(3(\.\d+)?)?$")
_SHELLS = ("sh", "bash")
_RAY_SPECS = {"RayCluster": ["spec"], "RayJob": ["spec", "rayClusterSpec"], "RayService": ["spec", "rayClusterConfig"]}


def check(doc: Document, known: list[Document]) -> Iterator[Problem]:
    """Every dangling reference of ``doc``; ``known`` are all manifests that can define objects."""
    body = doc.body
    for path, argv in _command_lines(body):
        yield from _commands(doc, path, argv)
    if body.get("kind") == "RayJob":
        yield from _ray_job(doc)
    if body.get("kind") == "RayService":
        yield from _ray_service(doc)
    yield from _ray_images(doc)
    for path, text in _strings(body, []):
        for match in _REPO_PATH.finditer(text):
            if not (REPO / match[1]).exists():
                yield problem(doc, path, f"names {match[1]}, which is not in the repo")
    yield from _object_refs(doc, known)


def _strings(node: Any, path: list) -> Iterator[tuple[list, str]]:
    if isinstance(node, str):
        yield path, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(value, path + [key])
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _strings(value, path + [i])


def _command_lines(body: dict) -> Iterator[tuple[list, list[str]]]:
    """``(path, argv)`` of every container's command + args."""
    from k8s.checker.rules import pod_specs

    for pod_path, pod in pod_specs(body, []):
        for key in ("initContainers", "containers"):
            for i, container in enumerate(pod.get(key) or []):
                if isinstance(container, dict):
                    argv = [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]
                    if argv:
                        yield pod_path + [key, i, "command"], argv


def simple_commands(argv: list[str]) -> list[list[str]]:
    """The simple commands an argv runs, looking inside ``sh -c`` / ``bash -c`` scripts."""
    if argv and Path(argv[0]).name in _SHELLS and "-c" in argv[1:-1]:
        lexer = shlex.shlex(argv[argv.index("-c") + 1], posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        commands: list[list[str]] = [[]]
        for token in lexer:
            if set(token) <= set("();<>|&"):
                commands.append([])
            else:
                commands[-1].append(token)
        return [c for command in commands if command for c in simple_commands(command)]
    return [argv]


def _commands(doc: Document, path: list, argv: list[str]) -> Iterator[Problem]:
    """Problems of the Python commands in ``argv``: missing repo modules, unknown options, bad imports."""
    for command in simple_commands(argv):
        if not command or not _PYTHON.match(Path(command[0]).name):
            continue
        args = command[1:]
        while args and args[0].startswith("-") and args[0] not in ("-m", "-c"):
            args = args[1:]
        if len(args) >= 2 and args[0] == "-m":
            yield from _module_run(doc, path, args[1], args[2:])
        elif len(args) >= 2 and args[0] == "-c":
            yield from _python_code(doc, path, args[1])


def _module_run(doc: Document, path: list, module: str, options: list[str]) -> Iterator[Problem]:
    if module.split(".")[0] not in repo_packages():
        return
    source = module_source(module, main=True)
    if source is None:
        yield problem(doc, path, f"python -m {module}: no such module in the repo")
        return
    if "add_argument" not in source:
        return
    for option in options:
        flag = option.split("=")[0]
        if flag.startswith("--") and flag != "--" and f'"{flag}"' not in source and f"'{flag}'" not in source:
            yield problem(doc, path, f"python -m {module} has no option {flag}")


def _python_code(doc: Document, path: list, code: str) -> Iterator[Problem]:
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        yield problem(doc, path, f"python -c code does not parse: {exc.msg}")
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _import(doc, path, alias.name, [])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield from _import(doc, path, node.module, [a.name for a in node.names])


def _import(doc: Document, path: list, module: str, names: list[str]) -> Iterator[Problem]:
    if module.split(".")[0] not in repo_packages():
        return
    source = module_source(module)
    if source is None:
        yield problem(doc, path, f"imports {module}, which is not in the repo")
        return
    defined = top_level_names(source)
    for name in names:
        if name != "*" and name not in defined and module_source(f"{module}.{name}") is None:
            yield problem(doc, path, f"{module} defines no {name}")


def import_path_problem(import_path: str) -> str | None:
    """Why a Serve ``module:attribute`` import path does not resolve in the repo, or None."""
    module, _, attribute = import_path.partition(":")
    if not attribute:
        module, _, attribute = import_path.rpartition(".")
    if module.split(".")[0] not in repo_packages():
        return f"import path {import_path}: {module} is not a module of the repo"
    source = module_source(module)
    if source is None:
        return f"import path {import_path}: no module {module} in the repo (expected {module.replace('.', '/')}.py)"
    if attribute.split(".")[0] not in top_level_names(source):
        return f"import path {import_path}: {module} defines no {attribute}"
    return None


@cache
def repo_packages() -> frozenset[str]:
    """Top-level names that belong to the repo: the design's layout and every package at its root."""
    return frozenset(LAYOUT_PACKAGES) | {p.name for p in REPO.iterdir() if (p / "__init__.py").is_file()}


def module_source(module: str, main: bool = False) -> str | None:
    """Source of a repo module (its ``__main__`` for ``python -m`` of a package), or None when absent."""
    base = REPO.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / ("__main__.py" if main else "__init__.py")):
        if candidate.is_file():
            return candidate.read_text()
    return None


def top_level_names(source: str) -> set[str]:
    """Names a module defines at its top level (functions, classes, assignments, imports)."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _ray_job(doc: Document) -> Iterator[Problem]:
    spec = doc.body.get("spec") or {}
    env = yield from _embedded_yaml(doc, ["spec", "runtimeEnvYAML"], spec.get("runtimeEnvYAML"))
    try:
        argv = shlex.split(str(spec.get("entrypoint", "")))
    except ValueError as exc:
        yield problem(doc, ["spec", "entrypoint"], f"entrypoint does not parse as a shell command: {exc}")
        argv = []
    yield from _commands(doc, ["spec", "entrypoint"], argv)
    runs_repo_code = any(_runs_repo_code(command) for command in simple_commands(argv))
    yield from _runtime_env(doc, ["spec", "runtimeEnvYAML"], env, runs_repo_code)


def _runs_repo_code(command: list[str]) -> bool:
    """Whether a simple command is Python running a repo module (``-m``) or inline code (``-c``)."""
    if not command or not _PYTHON.match(Path(command[0]).name):
        return False
    modules = [arg for flag, arg in pairwise(command) if flag == "-m"]
    return "-c" in command or any(m.split(".")[0] in repo_packages() for m in modules)


def _ray_service(doc: Document) -> Iterator[Problem]:
    where = ["spec", "serveConfigV2"]
    config = yield from _embedded_yaml(doc, where, (doc.body.get("spec") or {}).get("serveConfigV2"))
    if not isinstance(config, dict):
        return
    for i, app in enumerate(config.get("applications") or []):
        if not isinstance(app, dict):
            continue
        import_path = app.get("import_path")
        if not isinstance(import_path, str):
            yield problem(doc, where + ["applications", i, "import_path"], "application without an import_path")
            continue
        why = import_path_problem(import_path)
        if why:
            yield problem(doc, where + ["applications", i, "import_path"], why)
        yield from _runtime_env(doc, where + ["applications", i, "runtime_env"], app.get("runtime_env"), True)


def _embedded_yaml(doc: Document, path: list, text: Any):
    """Parse a YAML string field (runtimeEnvYAML, serveConfigV2); a parse error is a problem."""
    if text is None:
        return None
    try:
        return parse_yaml_document(str(text), ANY, "the field")
    except InputFileError as exc:
        yield problem(doc, path, str(exc))
        return None


def _runtime_env(doc: Document, path: list, env: Any, needs_code: bool) -> Iterator[Problem]:
    """The code must travel with the job (a remote zip as working_dir) and pins must match pyproject.toml."""
    env = env if isinstance(env, dict) else {}
    working_dir = env.get("working_dir")
    if working_dir is None:
        if needs_code:
            yield problem(doc, path + ["working_dir"],
                          "runs putlab code but the runtime environment has no working_dir: the code would not reach the cluster")
    elif not re.match(r"^(https?|s3|gs)://.+\.zip$", str(working_dir)):
        yield problem(doc, path + ["working_dir"],
                      f"working_dir {working_dir!r} is not a remote .zip URI, which a cluster cannot fetch")
    pip = env.get("pip")
    packages = pip.get("packages") if isinstance(pip, dict) else pip
    pins = pyproject_pins()
    for i, requirement in enumerate(packages or []):
        name = _requirement_name(str(requirement))
        where = path + ["pip"] + (["packages"] if isinstance(pip, dict) else []) + [i]
        if name == "ray":
            yield problem(doc, where,
                          "ray comes from the image; installing it in the runtime environment replaces the cluster's Ray")
        elif name in pins and str(requirement).replace(" ", "") != pins[name]:
            yield problem(doc, where,
                          f"{requirement!r} differs from pyproject.toml's pin {pins[name]!r} (torch is pinned exactly)")


@cache
def pyproject_pins() -> dict[str, str]:
    """``name -> requirement`` of pyproject.toml's dependencies that are pinned with ``==``."""
    text = (REPO / "pyproject.toml").read_text()
    block = re.search(r"^dependencies\s*=\s*\[(.*?)^\]", text, re.S | re.M)
    requirements = re.findall(r'"([^"]+)"', block[1]) if block else []
    return {_requirement_name(r): r.replace(" ", "") for r in requirements if "==" in r}


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\[<>=!~;\s]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _ray_images(doc: Document) -> Iterator[Problem]:
    """Ray images must carry the cluster's rayVersion, which must be the Ray that pyproject.toml pins."""
    spec_path = _RAY_SPECS.get(str(doc.body.get("kind")))
    spec: Any = doc.body
    for key in spec_path or []:
        spec = spec.get(key) if isinstance(spec, dict) else None
    if not spec_path or not isinstance(spec, dict):
        return
    version = str(spec.get("rayVersion", ""))
    pinned = pyproject_pins().get("ray", "").partition("==")[2]
    if pinned and version != pinned:
        yield problem(doc, spec_path + ["rayVersion"],
                      f"rayVersion {version!r} is not the Ray pinned in pyproject.toml ({pinned})")
    groups: list[tuple[list[str | int], Any]] = [(["headGroupSpec"], spec.get("headGroupSpec"))]
    groups += [(["workerGroupSpecs", i], group) for i, group in enumerate(spec.get("workerGroupSpecs") or [])]
    for where, group in groups:
        containers = (((group or {}).get("template") or {}).get("spec") or {}).get("containers") or []
        for i, container in enumerate(containers):
            image = str((container or {}).get("image", ""))
            if image.startswith("rayproject/ray") and not image.partition(":")[2].startswith(version):
                where_image = spec_path + where + ["template", "spec", "containers", i, "image"]
                yield problem(doc, where_image, f"image {image} is not Ray {version}")


def _object_refs(doc: Document, known: list[Document]) -> Iterator[Problem]:
    """Secrets, PersistentVolumeClaims and Services a manifest uses must be defined by a manifest."""
    namespace = _identity(doc)[1]
    defined = {_identity(d): d for d in known}
    for path, key, value in _keyed_values(doc.body, []):
        kind, name_key = _OBJECT_FIELDS.get(key, (None, None))
        name = value.get(name_key) if kind and isinstance(value, dict) else None
        if name and (kind, namespace, name) not in defined:
            yield problem(doc, path + [key], f"{kind} {name!r} is not defined by any manifest in namespace {namespace}")
    for path, text in _strings(doc.body, []):
        for match in _SERVICE_DNS.finditer(text):
            service = defined.get(("Service", match[2], match[1]))
            if service is None:
                yield problem(doc, path, f"Service {match[1]!r} in namespace {match[2]} is not defined by any manifest")
            elif match[3] and int(match[3]) not in [p.get("port") for p in (service.body.get("spec") or {}).get("ports") or []]:
                yield problem(doc, path, f"Service {match[1]!r} has no port {match[3]}")


def _identity(doc: Document) -> tuple[Any, str, Any]:
    """``(kind, namespace, name)`` of a manifest's object."""
    meta = doc.mapping("metadata")
    return doc.body.get("kind"), meta.get("namespace", "default"), meta.get("name")


def _keyed_values(node: Any, path: list) -> Iterator[tuple[list, str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield path, key, value
            yield from _keyed_values(value, path + [key])
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _keyed_values(value, path + [i])

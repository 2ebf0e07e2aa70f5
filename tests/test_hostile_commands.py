"""Property-based tests (hypothesis) of the commands that read files and URLs: ``platform.reproduction`` on mutated
snapshots, ``platform.audit`` on random URLs, options and service answers, ``k8s.checker`` on mutated manifests.

Each runs in-process (its ``main``), so hundreds of examples take seconds: never an exception, never exit 0 on an
input an independent parser calls garbage, exit 2 with exactly one ``error:`` line, and no store or folder changed."""
from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import shutil
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
import yaml
from hostile_files import ECO_SI, drop_columns, examples, mutated
from hypothesis import event, given
from hypothesis import strategies as st
from ray_nodes import free_ports
from stores import RawStore

from k8s.checker import main as checker_cli
from platform.audit import main as audit_cli
from platform.papers.snapshot import StudyFile
from platform.reproduction import main as reproduction_cli

REPO = Path(__file__).resolve().parents[1]

EXPECTED_KEYS = set(StudyFile.model_fields)


def run(main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, list[str]]:
    """``main(argv)`` in-process: its exit code and the non-blank lines it wrote to stderr."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, [line for line in err.getvalue().splitlines() if line.strip()]


def digest(folder: Path) -> str:
    """Every file under ``folder`` (names and bytes) hashed: a folder that was only read keeps its digest."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def one_error_line(code: int, lines: list[str], names: str = "") -> None:
    """Exit 2 and exactly one ``error:`` line (naming ``names`` when given)."""
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and names in lines[0], (code, lines)


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An MLflow sqlite store with its tables and nothing in them."""
    folder = tmp_path_factory.mktemp("store")
    RawStore(f"sqlite:///{folder / 'mlflow.db'}").search_experiments()
    return folder


# --- platform.reproduction on mutated snapshots --------------------------------------------------------------------

def is_garbage_study(data: bytes) -> bool:
    """What no study.json may be: not UTF-8 JSON, not an object, or keys the report does not write."""
    try:
        meta = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return True
    return not isinstance(meta, dict) or not set(meta) <= EXPECTED_KEYS


def is_garbage_table(data: bytes, columns: list[str]) -> bool:
    """What no trials.csv may be: empty, binary, not UTF-8, or without a column study.json lists."""
    if b"\0" in data or not data.strip():
        return True
    try:
        header = next(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")), [])
    except (UnicodeDecodeError, csv.Error):
        return True
    return not set(columns) <= set(header)


SNAPSHOT_FILES = {"study.json": (ECO_SI / "study.json").read_bytes(), "trials.csv": (ECO_SI / "trials.csv").read_bytes()}
COLUMNS = json.loads(SNAPSHOT_FILES["study.json"])["columns"]


@st.composite
def broken_snapshot(draw: st.DrawFn) -> tuple[str, bytes]:
    """One snapshot file and what it now holds: random bytes, a mutation of it, a column set stripped from the table,
    or study.json with a key dropped, added or given a random JSON value."""
    name = draw(st.sampled_from(sorted(SNAPSHOT_FILES)))
    original = SNAPSHOT_FILES[name]
    choices = [st.binary(max_size=300), mutated(original)]
    if name == "trials.csv":
        choices.append(st.lists(st.booleans(), min_size=1, max_size=6).map(
            lambda keep: drop_columns(original.decode(), keep).encode()))
    else:
        values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                              lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                            max_size=3), max_leaves=6)
        meta = json.loads(original)
        choices.append(st.tuples(st.sampled_from([*sorted(meta), "extra"]), st.booleans(), values).map(
            lambda change: json.dumps({k: v for k, v in meta.items() if not (change[1] and k == change[0])}
                                      | ({} if change[1] else {change[0]: change[2]})).encode()))
    return name, draw(st.one_of(choices))


@examples(100)
@given(broken=broken_snapshot())
def test_property_reproduction_on_mutated_snapshots(tmp_path: Path, empty_store: Path, broken: tuple[str, bytes]) -> None:
    name, data = broken
    out = tmp_path / "docs"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(ECO_SI, out / "reproduction" / "eco-si")
    (out / "reproduction" / "eco-si" / name).write_bytes(data)
    store, snapshot = digest(empty_store), digest(out / "reproduction")
    code, lines = run(reproduction_cli, ["--tracking-uri", f"sqlite:///{empty_store / 'mlflow.db'}",
                                         "--out", str(out / "reproduction.md")])
    garbage = is_garbage_study(data) if name == "study.json" else is_garbage_table(data, COLUMNS)
    event(f"{name}: {'garbage' if garbage else 'parses'}, exit {code}")
    assert code in (0, 2) and not (garbage and code == 0), (name, data[:200], lines)
    if code == 2:
        one_error_line(code, lines, str(out / "reproduction" / "eco-si"))
        assert not (out / "reproduction.md").exists()  # refused before anything was written
    assert digest(empty_store) == store and digest(out / "reproduction") == snapshot


# --- platform.audit on random URLs, options and answers ------------------------------------------------------------

class _Answers(BaseHTTPRequestHandler):
    """A "release service" answering ``GET /health`` and ``GET /points`` with the bodies the example chose."""

    bodies: ClassVar[dict[str, bytes]] = {}

    def do_GET(self) -> None:
        body = self.bodies.get(self.path, b"")
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def answering() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


CLOSED = f"http://127.0.0.1:{free_ports(1)[0]}"  # nothing listens there: refused at once, no DNS
URLS = st.one_of(
    st.text(max_size=30),
    st.builds(lambda scheme, rest: f"{scheme}{rest}", st.sampled_from(["ftp://", "file://", "http:/", "https//", "", "http://",
                                                                       "HTTP://", "javascript:", "http://user:pw@"]),
              st.text(max_size=20)),
    st.builds(lambda port, tail: f"http://127.0.0.1:{port}{tail}", st.integers(-5, 70_000),
              st.sampled_from(["", "/", "/x?y=1", "#f", " ", "/\n"])),
    *[st.just(CLOSED)] * 4,  # as often as the rest: URLs that pass, to reach the registry and the service
)
OPTIONS = st.fixed_dictionaries({}, optional={
    "--records": st.integers(-3, 10**7).map(str) | st.sampled_from(["x", "1e3", ""]),
    "--attackers": st.text(max_size=12) | st.sampled_from(["", ",", "deep,", "thickness", "yeom", "deep,thickness"]),
    "--batch": st.integers(-2, 10**7).map(str),  # the limit is 2^20
    "--model": st.text(max_size=10),
    "--seed": st.integers(-(2**40), 2**40).map(str),
})
JSON_ANSWERS = st.sampled_from([b"{}", b'{"status": "ok"}', b'{"points": []}', b'{"points": [{"id": "a/1"}]}',
                                b'{"points": [{"id": "a/1"}, {"id": "b/2"}]}', b'{"points": "x"}', b'{"points": [{}]}',
                                b"[]", b"null", b'{"points": [{"id": 5}]}'])


def audit_refuses(empty_store: Path, argv: list[str]) -> str:
    """Run the audit on the empty registry: exit 2 in one line (argparse's own refusal aside), registry untouched;
    the line (or what refused it) for the statistics."""
    before = digest(empty_store)
    try:
        code, lines = run(audit_cli, [*argv, "--tracking-uri", f"sqlite:///{empty_store / 'mlflow.db'}"])
    except SystemExit as exit_:  # argparse: an option that is no integer
        assert exit_.code == 2
        return "argparse refused"
    one_error_line(code, lines)
    assert "pw@" not in lines[0] and digest(empty_store) == before
    return lines[0].split(":")[1][:40]


@examples(150)
@given(url=URLS, options=OPTIONS)
def test_property_audit_on_random_urls_and_options(empty_store: Path, url: str, options: dict[str, str]) -> None:
    """Nothing is served that could be audited, so every run exits 2 in one line, within seconds, the registry
    untouched; a URL the validator refuses is named in the line (its credentials never)."""
    event(audit_refuses(empty_store, [url, *[x for kv in options.items() for x in kv]]))


@examples(100)
@given(health=st.one_of(st.binary(max_size=40), JSON_ANSWERS), points=st.one_of(st.binary(max_size=40), JSON_ANSWERS))
def test_property_audit_on_random_service_answers(empty_store: Path, answering: str, health: bytes, points: bytes) -> None:
    """A service answering anything at all to /health and /points: refused in one line (the registry holds no point)."""
    _Answers.bodies.update({"/health": health, "/points": points})
    event(audit_refuses(empty_store, [answering]))


# --- k8s.checker on mutated manifests ------------------------------------------------------------------------------

CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}
"""
MANIFESTS = {name: (REPO / "k8s" / name).read_bytes() for name in
             ("namespace.yaml", "networkpolicy-serve.yaml", "shared-storage.yaml", "secrets.example.yaml")}


def is_garbage_manifest(data: bytes) -> bool:
    """What PyYAML's safe loader cannot read as one or more mappings (or reads as nothing)."""
    try:
        documents = [d for d in yaml.safe_load_all(data.decode("utf-8-sig")) if d is not None]
    except Exception:  # noqa: BLE001 - whatever PyYAML raises, the file is no manifest
        return True
    return not documents or not all(isinstance(d, dict) for d in documents)


@examples(120)
@given(name=st.sampled_from(sorted(MANIFESTS)), data=st.data())
def test_property_checker_on_mutated_manifests(tmp_path: Path, name: str, data: st.DataObject) -> None:
    """Garbage exits 2 in one line naming the file; a manifest that still reads exits 0 or 1; nothing is written."""
    content = data.draw(st.one_of(st.binary(max_size=300), mutated(MANIFESTS[name])))
    crds = tmp_path / "crds"
    crds.mkdir(exist_ok=True)
    (crds / "widget.yaml").write_text(CRD)
    path = tmp_path / name
    path.write_bytes(content)
    before, repo = digest(tmp_path), digest(REPO / "k8s")
    code, lines = run(checker_cli, ["--crds", str(crds), str(path)])
    garbage = is_garbage_manifest(content)
    event(f"{'garbage' if garbage else 'reads'}, exit {code}")
    if garbage:
        one_error_line(code, lines, f"manifest {path} ")
    else:
        assert code in (0, 1, 2) and (code != 2 or len(lines) == 1), lines
    assert digest(tmp_path) == before and digest(REPO / "k8s") == repo

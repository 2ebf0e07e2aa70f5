"""``python -m platform.audit``: the verdict's rule, the release client's limits and back-off, bad input, and a real
served point audited black-box, honest (passes) and swapped for a weaker mechanism under the same name (fails)."""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pandas as pd
import pytest
import torch
from conftest import REPO, SharedSweep, copy_sweep, store, sweep_env
from ray_nodes import free_ports, temp_root
from serve_client import start_service, stop_service
from stores import RawStore

from platform.audit import main as audit_cli
from platform.errors import UsageError
from platform.results.served_audit import Estimate, passes, recorded, strongest
from platform.select import Choice, register
from search_spaces import presets
from serve import client as client_module
from serve.auth import API_KEY_ENV
from serve.client import CONNECT_TIMEOUT_S, READ_TIMEOUT_S, ReleaseClient, ServiceError

KEY = "audit-test-key-0123456789"
RECORD = Estimate(0.65, 0.6, 0.7)


@pytest.mark.parametrize("low, passed", [(0.5, True), (0.7, True), (0.7000001, False), (0.95, False)])
def test_an_audit_fails_only_when_its_interval_lies_wholly_above_the_record(low: float, passed: bool) -> None:
    assert passes(RECORD, Estimate(low + 0.05, low, low + 0.1)) is passed


def test_a_record_without_an_interval_is_its_own_bound() -> None:
    record = recorded({"metric.attack/max/accuracy": "0.6"}, "attack/max/accuracy")
    assert (record.low, record.high, record.records) == (0.6, 0.6, None)
    assert passes(record, Estimate(0.64, 0.6, 0.68)) and not passes(record, Estimate(0.7, 0.61, 0.79))


def test_the_record_and_the_strongest_attacker_are_read_with_their_intervals() -> None:
    tags = {"metric.attack/max/accuracy": "0.656", "metric.attack/max/accuracy/ci_low": "0.595",
            "metric.attack/max/accuracy/ci_high": "0.712", "metric.attack/max/train_records": "512", "other": "x"}
    assert recorded(tags, "attack/max/accuracy") == Estimate(0.656, 0.595, 0.712, records=512)
    metrics = {"attack/deep/accuracy": 0.6, "attack/deep/accuracy/ci_low": 0.55, "attack/deep/accuracy/ci_high": 0.65,
               "attack/thickness/accuracy": 0.9, "attack/thickness/accuracy/ci_low": 0.86,
               "attack/thickness/accuracy/ci_high": 0.93}
    found = strongest(metrics, ["deep", "thickness", "deep_raw"], 512)
    assert found == Estimate(0.9, 0.86, 0.93, "thickness", 512)
    assert found.text() == "0.9 [0.86, 0.93] (thickness, 512 records)"
    with pytest.raises(UsageError, match="records no attack/max/accuracy"):
        recorded({"metric.utility/accuracy": "0.9"}, "attack/max/accuracy")
    with pytest.raises(UsageError, match="none of the attackers deep_raw could attack"):
        strongest(metrics, ["deep_raw"], 512)


class _Stub(BaseHTTPRequestHandler):
    """A release service that wants the key, is busy once, refuses batches over 3 samples and releases x + 1."""

    busy: ClassVar[list[bool]] = [True]
    seen: ClassVar[list[tuple[int, str]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        x = torch.frombuffer(bytearray(body), dtype=torch.float32).reshape(-1, 2)
        if self.headers.get("authorization") != f"Bearer {KEY}":
            return self._answer(401, json.dumps({"error": "missing or wrong API key"}).encode())
        if self.busy[0]:
            self.busy[0] = False
            return self._answer(429, b"slow down", {"Retry-After": "0"})
        if len(x) > 3:
            return self._answer(413, json.dumps({"error": f"batch of {len(x)} samples exceeds the limit of 3"}).encode())
        self.seen.append((len(x), self.headers["x-putlab-seed"]))
        self._answer(200, (x + 1).numpy().tobytes(), {"x-putlab-shape": f"{len(x)},2"})

    def _answer(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture()
def stub() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_the_client_backs_off_when_busy_halves_its_batch_on_413_and_sends_the_key(stub: str) -> None:
    waits: list[float] = []
    x = torch.arange(20, dtype=torch.float32).reshape(10, 2)
    done: list[int] = []
    client = ReleaseClient(stub, KEY, batch=8, sleep=waits.append)
    out = client.release("p/1", x, seed=100, progress=lambda n, total: done.append(n))
    assert torch.equal(out, x + 1) and waits == [0.0]  # Retry-After: 0, once
    assert _Stub.seen == [(2, "100"), (2, "102"), (2, "104"), (2, "106"), (2, "108")]  # 8 -> 4 -> 2 samples per request
    assert done == [2, 4, 6, 8, 10]
    with pytest.raises(ServiceError, match=f"answered 401: missing or wrong API key \\(the key is read from {API_KEY_ENV}\\)"):
        ReleaseClient(stub, "wrong").release("p/1", x, seed=0)
    (port,) = free_ports(1)
    with pytest.raises(ServiceError, match=f"cannot reach the release service at http://127.0.0.1:{port}"):
        ReleaseClient(f"http://127.0.0.1:{port}").health()


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An sqlite store with the point alpha/1 (a stand-in checkpoint: nothing is served from it)."""
    folder = tmp_path_factory.mktemp("audit-registry")
    client = RawStore(f"sqlite:///{folder / 'mlflow.db'}")
    exp = client.create_experiment("putlab-noise", artifact_location=(folder / "mlruns").as_uri())
    checkpoint = folder / "checkpoint_000001"
    checkpoint.mkdir()
    (checkpoint / "state.pt").write_bytes(b"weights")
    run_id = client.create_run(exp, run_name="trial").info.run_id
    row = pd.Series({"run_id": run_id, "trial_id": "t0", "name": "trial", "attack/max/accuracy": 0.6})
    register(client, "alpha", presets()["noise"], Choice(row, "chosen by trial id"), str(checkpoint), {"sigma": 1.0})
    return f"sqlite:///{folder / 'mlflow.db'}"


@pytest.mark.parametrize("args, error", [
    (["--model", "nope/1"], "--model 'nope/1' names no registered model version in {uri} (registered: alpha)"),
    (["--model", "nope"], "--model 'nope' names no registered model version in {uri} (registered: alpha)"),
    (["--model", "alpha/1"], "cannot reach the release service at {url}: [Errno 111] Connection refused"),
    ([], "cannot reach the release service at {url}: [Errno 111] Connection refused"),
    (["--records", "2"], "--records must be at least 100 (got 2): the attackers choose their configuration on a 20 % "
                         "validation split of them"),
    (["--attackers", ""], "--attackers is empty: give a value or leave the option out"),
    (["--attackers", "deep,,thickness"], "--attackers 'deep,,thickness' has an empty name (give comma-separated attacker "
                                         "names)"),
    (["--model", ""], "--model is empty: give a value or leave the option out"),
])
def test_bad_input_is_one_line_and_exit_2(registry: str, capsys: pytest.CaptureFixture[str], args: list[str],
                                          error: str) -> None:
    url = f"http://127.0.0.1:{free_ports(1)[0]}"
    assert audit_cli([url, "--tracking-uri", registry, *args]) == 2
    assert capsys.readouterr().err.splitlines() == ["error: " + error.format(uri=registry, url=url)]


@pytest.mark.parametrize("url, error", [
    ("not-a-url", "release service URL 'not-a-url' must start with http:// or https:// (no scheme)"),
    ("ftp://files.example.org/putlab", "release service URL 'ftp://files.example.org/putlab' must start with http:// or "
                                       "https:// (scheme 'ftp')"),
    ("http://alice:s3cret@127.0.0.1:8000", "release service URL 'http://***@127.0.0.1:8000' holds credentials: give the "
                                           f"API key in {API_KEY_ENV}, never in the URL"),
    ("http://127.0.0.1:70000", "release service URL 'http://127.0.0.1:70000' is malformed: Port out of range 0-65535"),
    ("http://127.0.0.1:0", "release service URL 'http://127.0.0.1:0' has port 0 (ports are 1–65535)"),
    ("http://:8000", "release service URL 'http://:8000' names no host"),
    ("http://127.0.0.1:8000/?x=1", "release service URL 'http://127.0.0.1:8000/?x=1' has a query or fragment; give the "
                                   "service's base URL"),
    ("http://127.0.0.1:8000/a b", "release service URL 'http://127.0.0.1:8000/a b' holds spaces or control characters"),
    ("", "release service URL '' must start with http:// or https:// (no scheme)"),
    ("http://\u0100", "release service URL 'http://\u0100' holds characters outside ASCII: give the host in its ASCII (IDNA) "
                      "form and percent-encode the path"),
    ("http://127.0.0.1:8000/caf\u00e9", "release service URL 'http://127.0.0.1:8000/caf\u00e9' holds characters outside "
                                       "ASCII: give the host in its ASCII (IDNA) form and percent-encode the path"),
])
def test_a_bad_url_is_refused_at_once_in_one_line(registry: str, capsys: pytest.CaptureFixture[str], url: str,
                                                  error: str) -> None:
    """Before the store is opened or anything sent: no DNS, no connection, the password never printed."""
    started = time.monotonic()
    assert audit_cli([url, "--tracking-uri", registry]) == 2
    assert capsys.readouterr().err.splitlines() == ["error: " + error] and time.monotonic() - started < 2


def test_the_timeouts_are_stated_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        audit_cli(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert f"connects within {CONNECT_TIMEOUT_S:g} s and waits at most {READ_TIMEOUT_S:g} s" in shown
    assert (CONNECT_TIMEOUT_S, READ_TIMEOUT_S) == (5.0, 30.0)


def test_a_service_that_never_answers_is_given_up_after_the_read_timeout(registry: str, capsys: pytest.CaptureFixture[str],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A port that accepts connections and never answers (a listening socket nobody reads): the audit gives up after the
    read timeout, here 1 s (30 s as shipped), in one line; without the timeout it would wait for ever."""
    monkeypatch.setattr(client_module, "READ_TIMEOUT_S", 1.0)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        assert audit_cli([url, "--tracking-uri", registry]) == 2
        waited = time.monotonic() - started
    assert capsys.readouterr().err.splitlines() == [
        f"error: cannot reach the release service at {url}: no answer within the read timeout of 1 s"]
    assert 1.0 <= waited < 10


def test_a_connection_that_never_opens_is_given_up_after_the_connect_timeout(registry: str,
                                                                           capsys: pytest.CaptureFixture[str],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A listening socket whose backlog is full drops new connections' SYNs (as an overloaded or filtered host does):
    the audit gives up after the connect timeout, here 1 s (5 s as shipped)."""
    monkeypatch.setattr(client_module, "CONNECT_TIMEOUT_S", 1.0)
    with socket.socket() as full:
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        fillers = [socket.socket() for _ in range(4)]
        for filler in fillers:
            filler.setblocking(False)
            filler.connect_ex(full.getsockname())
        time.sleep(0.2)
        url = f"http://127.0.0.1:{full.getsockname()[1]}"
        started = time.monotonic()
        try:
            assert audit_cli([url, "--tracking-uri", registry]) == 2
        finally:
            waited = time.monotonic() - started
            for filler in fillers:
                filler.close()
    assert capsys.readouterr().err.splitlines() == [
        f"error: cannot reach the release service at {url}: no connection within the connect timeout of 1 s"]
    assert 1.0 <= waited < 10


class _Serves(BaseHTTPRequestHandler):
    """A service that serves alpha/1 (its health and points only: the audit is refused before any release)."""

    def do_GET(self) -> None:
        body = json.dumps({"status": "ok"} if self.path == "/health" else {"points": [{"id": "alpha/1"}]}).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet."""


def test_a_record_of_too_few_records_is_refused_and_never_tagged(registry: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The registry says the strongest attacker trained on 2 records: an audit on 2 records could not fail (its
    interval spans everything), so it is refused before anything is sent or tagged."""
    client = RawStore(registry)
    client.set_model_version_tag("alpha", "1", "metric.attack/max/train_records", "2")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Serves)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        code = audit_cli([f"http://127.0.0.1:{server.server_address[1]}", "--tracking-uri", registry])
    finally:
        server.shutdown()
        client.delete_model_version_tag("alpha", "1", "metric.attack/max/train_records")
    assert code == 2 and capsys.readouterr().err.splitlines() == [
        "error: the audit would fit its attackers on 2 records, fewer than 100 (their 20 % validation split would decide "
        "nothing): pass --records 100 or more"]
    assert not any(key.startswith("audit") for key in client.get_model_version("alpha", "1").tags)


def audit(url: str, uri: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "platform.audit", url, "--tracking-uri", uri, *args]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow  # two services and two audits: about 4 minutes on 2 busy cores
def test_an_honest_point_passes_and_a_weaker_one_served_under_its_name_fails(noise_sweep: SharedSweep,
                                                                           tmp_path: Path) -> None:
    """The noise preset's smoke sweep (σ = 0 and σ = 1, the session's): σ = 1 is registered as putlab-noise/1 and served
    and audited (passes); then a service whose registry holds σ = 0 (the identity) as putlab-noise/1 is audited against
    the same record (fails)."""
    copy_sweep(noise_sweep, tmp_path)
    with temp_root() as ray_tmp:
        env = sweep_env() | {API_KEY_ENV: KEY, "RAY_TMPDIR": str(ray_tmp)}
        honest, swapped = f"sqlite:///{tmp_path / 'mlflow.db'}", f"sqlite:///{tmp_path / 'swapped.db'}"
        shutil.copy(tmp_path / "mlflow.db", tmp_path / "swapped.db")
        for uri, trial in ((honest, "sigma=1"), (swapped, "sigma=0")):
            chosen = subprocess.run([sys.executable, "-m", "platform.select", "putlab-noise", "--trial", trial,
                                     "--sweep-budget", "--tracking-uri", uri],
                                    cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
            assert chosen.returncode == 0 and "registered putlab-noise version 1" in chosen.stdout, chosen.stderr

        server, base = start_service(tmp_path, env, tracking_uri=honest, log_name="honest.log")
        try:
            keyless = audit(base, honest, {k: v for k, v in env.items() if k != API_KEY_ENV})
            assert keyless.returncode == 2 and "answered 401" in keyless.stderr, keyless.stderr
            passed = audit(base, honest, env)
        finally:
            stop_service(server)
        print(passed.stdout)
        assert passed.returncode == 0 and "audit passed: putlab-noise/1" in passed.stdout, passed.stdout + passed.stderr
        assert "released 768/768 records" in passed.stdout and "cost: 768 records" in passed.stdout
        tags = store(tmp_path).get_model_version("putlab-noise", "1").tags
        assert tags["audit"] == "passed" and tags["audit/records"] == "512 fitted, 256 scored"
        assert tags["audit/recorded"].startswith(tags["metric.attack/max/accuracy"][:4]) and tags["audit/date"]

        server, base = start_service(tmp_path, env, tracking_uri=swapped, log_name="swapped.log")
        try:
            failed = audit(base, honest, env, "--model", "putlab-noise")
        finally:
            stop_service(server)
        print(failed.stdout)
        assert failed.returncode == 1 and "audit FAILED: putlab-noise/1" in failed.stdout, failed.stdout + failed.stderr
        tags = store(tmp_path).get_model_version("putlab-noise", "1").tags
        assert tags["audit"] == "failed" and float(tags["audit/attack_accuracy"].split()[0]) > 0.9


def test_a_broken_point_description_is_named_in_one_line(registry: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The served point's putlab_point.json, read back from the registry, is not what platform.select wrote."""
    (point_file,) = Path(registry.removeprefix("sqlite:///")).parent.rglob("putlab_point.json")
    kept = point_file.read_bytes()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Serves)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for broken, message in [(b"\x00\x01", "is binary (it holds NUL bytes), not text"),
                                (json.dumps(json.loads(kept) | {"config": [1]}).encode(),
                                 "does not match its schema: config: Input should be a valid dictionary")]:
            point_file.write_bytes(broken)
            assert audit_cli([f"http://127.0.0.1:{server.server_address[1]}", "--tracking-uri", registry]) == 2
            assert capsys.readouterr().err.splitlines() == [f"error: alpha/1's putlab_point.json {message}"]
    finally:
        server.shutdown()
        point_file.write_bytes(kept)

"""Choosing operating points and serving them: a real sweep, the real MLflow registry, a real Ray Serve HTTP endpoint, fuzzed."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
import requests
import schemathesis
import torch
from conftest import REPO, SharedSweep, assert_runs_as_printed, copy_sweep, store, sweep_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mlflow.artifacts import download_artifacts
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance, status_code_conformance
from serve_client import call, start_service, stop_service

from core.data import load_amnist
from core.pareto_axis import Axis
from platform.errors import UsageError
from platform.select import choose
from search_spaces import presets
from serve.auth import API_KEY_ENV, authorized, configured_key
from serve.points import POINT_FILE

AXES = [Axis("utility/accuracy", True, 0.0, 1.0), Axis("attack/max/accuracy", False, 1.0, 0.5)]
LIMITS = {"max_batch": 8, "max_body_bytes": 200_000}
READ_TIMEOUT_S = 5  # the fixture's service gives a request body this long to arrive


def select(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "platform.select", "putlab-amnist", "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}",
           "--sweep-budget", *args]  # serving is under test here: the sweep's privacy numbers, not a full-budget attack
    return subprocess.run(cmd, cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=120)


# The tests of the running service: a smoke sweep's copy, its points registered and a Ray Serve endpoint, minutes on 2
# CPUs, so they run under -m slow (CI runs both); choosing points and the key's rules are tested in the default run.
SERVICE = pytest.mark.slow


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, smoke_sweep: SharedSweep):
    """A copy of the session's smoke sweep (its farm one quick attacker: serving is under test, not the attackers), its
    trials registered as points, and the service on a free port (torn down after)."""
    workdir = copy_sweep(smoke_sweep, tmp_path_factory.mktemp("serve"))
    trials = sorted(r.info.run_name for r in store(workdir).search_runs(
        [store(workdir).get_experiment_by_name("putlab-amnist").experiment_id]) if r.data.tags.get("putlab.role") == "trial")
    for trial in trials:
        chosen = select(workdir, "--trial", trial)
        assert chosen.returncode == 0, chosen.stderr
        (workdir / "select.out").write_text(chosen.stdout)
    server, base = start_service(workdir, sweep_env(), "--max-batch", str(LIMITS["max_batch"]),
                                 "--max-body-bytes", str(LIMITS["max_body_bytes"]),
                                 "--read-timeout-s", str(READ_TIMEOUT_S))
    yield workdir, base, trials
    stop_service(server)


def test_choose_takes_the_best_utility_under_the_privacy_bound() -> None:
    table = pd.DataFrame({"trial_id": list("abcd"), "name": list("abcd"), "run_id": list("1234"),
                          "status": ["FINISHED", "FINISHED", "FINISHED", "ERROR"],
                          "utility/accuracy": [0.9, 0.8, 0.7, 0.99], "attack/max/accuracy": [0.8, 0.6, 0.55, 0.5]})
    assert choose(table, AXES, max_attack=0.6).row["trial_id"] == "b"  # a leaks too much, d did not finish
    assert choose(table, AXES, max_attack=0.9).row["trial_id"] == "a"
    assert choose(table, AXES, trial="c").row["trial_id"] == "c"
    with pytest.raises(UsageError, match=r"no finished trial has attack/max/accuracy <= 0.5 \(the lowest is 0.5500\)"):
        choose(table, AXES, max_attack=0.5)
    with pytest.raises(UsageError, match="no finished trial 'd'"):
        choose(table, AXES, trial="d")


@SERVICE
def test_registered_versions_carry_config_metrics_and_checkpoint(deployment) -> None:
    workdir, _, trials = deployment
    client = store(workdir)
    versions = sorted(client.search_model_versions("name = 'putlab-amnist'"), key=lambda v: int(v.version))
    assert [str(v.version) for v in versions] == ["1", "2", "3"] and len({v.source for v in versions}) == 3
    for version, trial in zip(versions, trials, strict=True):
        assert version.tags["putlab.preset"] == "amnist" and version.tags["putlab.mechanism"] == "releaser"
        # tagged at six significant digits, the registry's display precision
        assert version.tags["metric.utility/accuracy"] == f"{client.get_run(version.run_id).data.metrics['utility/accuracy']:.6g}"
        assert trial in version.description and "chosen by trial id" in version.description
        files = Path(download_artifacts(artifact_uri=version.source, tracking_uri=client.tracking_uri))
        point = json.loads((files / POINT_FILE).read_text())
        assert (files / "state.pt").stat().st_size > 1000 and point["config"]["lam"] in (0.0, 10.0, 3.0)


@SERVICE
def test_select_refuses_an_impossible_bound_and_an_unknown_sweep(deployment) -> None:
    workdir, _, _ = deployment
    impossible = select(workdir, "--max-attack", "0.01")
    assert impossible.returncode == 2 and "no finished trial has attack/max/accuracy <= 0.01" in impossible.stderr
    assert len(impossible.stderr.strip().splitlines()) == 1
    unknown = subprocess.run([sys.executable, "-m", "platform.select", "no-such-sweep", "--max-attack", "0.6",
                              "--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}"],
                             cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and "'no-such-sweep' is neither" in unknown.stderr
    assert len(store(workdir).search_model_versions("name = 'putlab-amnist'")) == 3  # nothing registered by a refusal


@SERVICE
def test_served_release_equals_the_offline_transform(deployment) -> None:
    workdir, base, trials = deployment
    client = store(workdir)
    _, test, _ = load_amnist(n_train=64, n_test=5, seed=0)
    x = test.x[:3]
    status, listed = call(f"{base}/points")
    assert status == 200 and {p["id"] for p in listed["points"]} == {f"putlab-amnist/{i + 1}" for i in range(len(trials))}
    outputs, configs = {}, []
    for version in client.search_model_versions("name = 'putlab-amnist'"):
        status, answer = call(f"{base}/points/putlab-amnist/{version.version}/release", {"inputs": x.tolist(), "seed": 11})
        assert status == 200, answer
        assert answer["shape"] == [3, 1, 28, 28] and answer["seed"] == 11 and answer["mechanism"] == "releaser"
        files = Path(download_artifacts(artifact_uri=version.source, tracking_uri=client.tracking_uri))
        config = json.loads((files / POINT_FILE).read_text())["config"]
        configs.append(json.dumps(config, sort_keys=True))
        offline = presets()["amnist"].load_release(config, str(files)).release(x, seed=11)
        served = torch.tensor(answer["outputs"], dtype=torch.float32)
        assert torch.allclose(served, offline, atol=1e-6), (served - offline).abs().max()
        outputs[str(version.version)] = served
        raw = urllib.request.Request(f"{base}/points/putlab-amnist/{version.version}/release", data=x.numpy().tobytes(),
                                     headers={"content-type": "application/octet-stream", "x-putlab-seed": "11"})
        with urllib.request.urlopen(raw, timeout=120) as response:
            assert response.headers["x-putlab-shape"] == "3,1,28,28" and response.headers["x-putlab-seed"] == "11"
            binary = torch.frombuffer(bytearray(response.read()), dtype=torch.float32).reshape(3, 1, 28, 28)
        assert torch.equal(binary, served)  # the binary protocol releases exactly what the JSON one does
    # every point serves its own checkpoint (each equals its own offline transform above; after a one-epoch smoke game
    # the releases themselves may still coincide, so the points are told apart by the configs they were built from)
    assert len(set(configs)) == len(outputs)
    again = call(f"{base}/points/putlab-amnist/1/release", {"inputs": x.tolist(), "seed": 12})[1]
    assert not torch.allclose(torch.tensor(again["outputs"]), outputs["1"])  # another seed, another noise draw


SAMPLE = [[[0.5] * 28] * 28]


@pytest.mark.parametrize("body, status, message", [
    (b"{", 400, "not valid JSON"),
    ([1, 2], 422, 'JSON object with "inputs"'),
    ({"input": [SAMPLE]}, 422, 'JSON object with "inputs"'),
    ({"inputs": [SAMPLE], "extra": 1}, 422, "unknown request field(s): 'extra'"),
    ({"inputs": []}, 422, "non-empty list"),
    ({"inputs": [[[[0.5] * 28] * 27]]}, 422, "shape [1, 28, 28] (got [1, 27, 28])"),
    ({"inputs": [[[0.5] * 28] * 28, [[0.5] * 27] * 28]}, 422, "rectangular array of numbers"),
    ({"inputs": [[[["a"] * 28] * 28]]}, 422, "rectangular array of numbers"),
    ({"inputs": [[[[True] * 28] * 28]]}, 422, "not booleans"),
    ({"inputs": [[[[2.0] * 28] * 28]]}, 422, "must lie in [0, 1]"),
    ({"inputs": [SAMPLE], "seed": -1}, 422, "seed must be a whole number"),
    ({"inputs": [SAMPLE], "seed": "7"}, 422, "seed must be a whole number"),
    ({"inputs": [SAMPLE], "seed": True}, 422, "seed must be a whole number in [0, 2^63) (got True)"),
    ({"inputs": [SAMPLE] * 9}, 413, "batch of 9 samples exceeds the limit of 8"),
    (b" " * 250_000 + b"{}", 413, "exceeds the limit of 200000"),
    (b"[" * 100_000 + b"]" * 100_000, 422, "JSON nested deeper than 16 levels"),
    (b'{"inputs": [[[[0.5]]]], "seed": ' + b"7" * 5000 + b"}", 422, "integer of 5000 digits is too large"),
    (b'{"inputs": [[[[1' + b"0" * 400 + b']]]]}', 422, "integer of 401 digits is too large"),
])
@SERVICE
def test_malformed_requests_get_a_4xx_and_the_service_keeps_answering(deployment, body, status, message) -> None:
    _, base, _ = deployment
    got, answer = call(f"{base}/points/putlab-amnist/1/release", body)
    assert got == status and message in answer["error"], answer
    assert "\n" not in answer["error"]
    assert call(f"{base}/health")[0] == 200
    assert call(f"{base}/points/putlab-amnist/1/release", {"inputs": [SAMPLE], "seed": 1})[0] == 200


@pytest.mark.parametrize("body, seed, message", [
    (b"\x00" * (4 * 784 + 1), None, "not a whole number of float32 samples"),
    (b"", None, "not a whole number of float32 samples"),
    (torch.full((1, 1, 28, 28), float("nan")).numpy().tobytes(), None, "NaN or infinite"),
    (torch.full((1, 1, 28, 28), -1.0).numpy().tobytes(), None, "must lie in [0, 1]"),
    (torch.zeros(9, 1, 28, 28).numpy().tobytes(), None, "batch of 9 samples exceeds the limit of 8"),
    (torch.zeros(1, 1, 28, 28).numpy().tobytes(), "seven", "seed must be a whole number"),
])
@SERVICE
def test_malformed_binary_requests_get_a_4xx(deployment, body: bytes, seed: str | None, message: str) -> None:
    _, base, _ = deployment
    headers = {"content-type": "application/octet-stream"} | ({"x-putlab-seed": seed} if seed else {})
    request = urllib.request.Request(f"{base}/points/putlab-amnist/1/release", data=body, headers=headers)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=120)
    answer = json.loads(refused.value.read())
    assert refused.value.code in (413, 422) and message in answer["error"], answer
    assert call(f"{base}/health")[0] == 200


@SERVICE
def test_nan_input_of_the_right_shape_is_refused(deployment) -> None:
    _, base, _ = deployment
    row = b"[" + b",".join([b"0.5"] * 27 + [b"NaN"]) + b"]"
    body = b'{"inputs": [[[' + b",".join([row] * 28) + b"]]]}"
    got, answer = call(f"{base}/points/putlab-amnist/1/release", body)
    assert got == 422 and answer["error"] == "inputs contain NaN or infinite values"


@SERVICE
def test_unknown_and_corrupt_points_are_refused_and_the_others_still_served(deployment) -> None:
    workdir, base, trials = deployment
    got, answer = call(f"{base}/points/putlab-amnist/99/release", {"inputs": [SAMPLE]})
    assert got == 404 and "unknown operating point 'putlab-amnist/99'" in answer["error"]
    chosen = select(workdir, "--trial", trials[0], "--name", "putlab-broken")
    assert chosen.returncode == 0, chosen.stderr
    (version,) = store(workdir).search_model_versions("name = 'putlab-broken'")
    run = store(workdir).get_run(version.run_id)
    artifact_dir = Path(run.info.artifact_uri.removeprefix("file://")) / version.source.split(f"{version.run_id}/", 1)[1]
    (artifact_dir / "state.pt").write_bytes(b"\x00truncated")
    got, answer = call(f"{base}/points/putlab-broken/1/release", {"inputs": [SAMPLE]})
    assert got == 409 and "cannot be loaded" in answer["error"] and "state.pt" in answer["error"]
    assert call(f"{base}/points/putlab-amnist/2/release", {"inputs": [SAMPLE], "seed": 3})[0] == 200


def test_serve_refuses_an_unreachable_store_in_one_line() -> None:
    out = subprocess.run([sys.executable, "-m", "serve", "--tracking-uri", "http://127.0.0.1:9/"], cwd=REPO, env=sweep_env(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.strip().startswith("error: MLflow tracking store http://127.0.0.1:9/ is unusable")
    assert len(out.stderr.strip().splitlines()) == 1


def test_serve_refuses_a_short_api_key_in_one_line() -> None:
    out = subprocess.run([sys.executable, "-m", "serve"], cwd=REPO, env=sweep_env() | {API_KEY_ENV: "short"},
                         capture_output=True, text=True, timeout=120)
    expected = f"error: {API_KEY_ENV} must be at least 16 characters (e.g. openssl rand -hex 32)"
    assert out.returncode == 2 and out.stderr.strip() == expected


@SERVICE
def test_api_key_guards_every_route_but_health(deployment) -> None:
    """A service started with an API key in its environment: 401 without it or with a wrong one, 200 with it."""
    workdir, _, _ = deployment
    key = "k" * 8 + "-0123456789abcdef"
    server, base = start_service(workdir, sweep_env() | {API_KEY_ENV: key}, log_name="serve-keyed.log")
    try:
        release, body = f"{base}/points/putlab-amnist/1/release", {"inputs": [SAMPLE], "seed": 1}
        for headers in ({}, {"authorization": "Bearer wrong-0123456789abcdef"}, {"authorization": key},
                        {"authorization": f"Basic {key}"}, {"authorization": f"Bearer {key}x"}):
            targets = ((f"{base}/points", None), (release, body), (f"{base}/nowhere", None), (f"{base}/openapi.json", None))
            for url, data in targets:
                status, answer = call(url, data, headers)
                assert status == 401 and answer["error"].startswith("missing or wrong API key"), (url, headers, answer)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(release, data=b"{}", timeout=60)
        assert refused.value.headers["www-authenticate"] == "Bearer"
        assert call(f"{base}/health")[0] == 200  # probes need no key
        good = {"authorization": f"Bearer {key}"}
        status, listed = call(f"{base}/points", headers=good)
        assert status == 200 and "putlab-amnist/1" in {p["id"] for p in listed["points"]}
        status, answer = call(release, body, good)
        assert status == 200 and answer["shape"] == [1, 1, 28, 28] and answer["seed"] == 1
    finally:
        stop_service(server)
    assert "Authorization: Bearer $PUTLAB_SERVE_API_KEY required" in (workdir / "serve-keyed.log").read_text()


@SERVICE
def test_a_chunked_body_over_the_limit_is_refused_while_it_is_read(deployment) -> None:
    _, base, _ = deployment
    chunks = (b" " * 50_000 for _ in range(100))  # 5 MB in chunks, no Content-Length: the limit is 200,000
    request = urllib.request.Request(f"{base}/points/putlab-amnist/1/release", data=chunks,
                                     headers={"content-type": "application/json", "transfer-encoding": "chunked"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=120)
    assert refused.value.code == 413 and "exceeds the limit of 200000 bytes" in json.loads(refused.value.read())["error"]


def raw_request(base: str, head: bytes, body: bytes, wait_s: float) -> tuple[bytes, bool, float]:
    """Send ``head`` and ``body`` on a raw socket and read until the server closes it (at most ``wait_s``): (what
    came back, whether the server closed the connection, seconds it took)."""
    host, port = base.removeprefix("http://").split(":")
    started, answer, closed = time.monotonic(), b"", False
    with socket.create_connection((host, int(port)), timeout=wait_s) as conn:
        conn.sendall(head + body)
        try:
            while chunk := conn.recv(65536):
                answer += chunk
            closed = True
        except TimeoutError:
            pass
    return answer, closed, time.monotonic() - started


@SERVICE
def test_a_body_shorter_than_its_content_length_frees_the_worker_within_the_read_timeout(deployment) -> None:
    """A client that declares 1,000 bytes, sends 12 and waits: a 408 after the read timeout and the connection
    closed, not a slot held until the client gives up; the service keeps answering."""
    _, base, _ = deployment
    head = (b"POST /points/putlab-amnist/1/release HTTP/1.1\r\nHost: putlab\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n")
    answer, closed, took = raw_request(base, head, b'{"inputs": [', wait_s=READ_TIMEOUT_S + 55)
    assert answer.startswith(b"HTTP/1.1 408 ") and closed, answer[:300]
    assert b"request body not received within 5 s (12 bytes arrived)" in answer
    assert READ_TIMEOUT_S - 1 < took < READ_TIMEOUT_S + 15, took
    assert call(f"{base}/points/putlab-amnist/1/release", {"inputs": [SAMPLE], "seed": 1})[0] == 200


@pytest.mark.parametrize("path, method, status", [("/nowhere", "GET", 404), ("/points/putlab-amnist/1/release", "GET", 405)])
@SERVICE
def test_framework_refusals_are_one_line_too(deployment, path: str, method: str, status: int) -> None:
    _, base, _ = deployment
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(f"{base}{path}", method=method), timeout=60)
    assert refused.value.code == status and "\n" not in json.loads(refused.value.read())["error"]


@SERVICE
def test_unsupported_content_type_is_415(deployment) -> None:
    _, base, _ = deployment
    request = urllib.request.Request(f"{base}/points/putlab-amnist/1/release", data=b"inputs=1",
                                     headers={"content-type": "application/x-www-form-urlencoded"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 415 and "application/octet-stream" in json.loads(refused.value.read())["error"]


# Property-based fuzzing from the service's own OpenAPI spec (schemathesis), bounded in time: every generated
# request, conforming or not, gets a documented answer (status, content type, body schema), never a 5xx, and every
# refusal is one line under "error"; the service keeps answering.

FUZZ_BUDGET_S = 50.0
FUZZ_CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def cases(base: str) -> st.SearchStrategy:
    """Positive and negative cases of every operation; release cases both on a real point and on random ids."""
    schema = schemathesis.openapi.from_url(f"{base}/openapi.json")
    strategies = []
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategies.append(operation.as_strategy(generation_mode=mode))
            if "{name}" in operation.path:
                strategies.append(operation.as_strategy(generation_mode=mode,
                                                        path_parameters={"name": "putlab-amnist", "version": "1"}))
    return st.one_of(strategies)


@SERVICE
def test_every_fuzzed_request_gets_a_documented_answer(deployment) -> None:
    _, base, _ = deployment
    session = requests.Session()
    started, made, statuses = time.monotonic(), [0], {}

    @settings(max_examples=600, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(case=cases(base))
    def fuzz(case) -> None:
        if time.monotonic() - started > FUZZ_BUDGET_S:
            return
        response = case.call(base_url=base, session=session, timeout=60)
        made[0] += 1
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        case.validate_response(response, checks=FUZZ_CHECKS)
        if response.status_code >= 400:
            error = response.json()["error"]
            assert isinstance(error, str) and error and "\n" not in error, response.text

    fuzz()
    print(f"fuzzed {made[0]} requests in {time.monotonic() - started:.0f} s; statuses {dict(sorted(statuses.items()))}")
    assert made[0] >= 100
    assert session.get(f"{base}/health", timeout=30).status_code == 200


@SERVICE
def test_printed_serve_command_runs_as_printed(deployment) -> None:
    """The `serve it:` line of platform.select, pasted from the repository root into a shell without the venv."""
    workdir, _, _ = deployment
    line = next(line for line in (workdir / "select.out").read_text().splitlines() if line.startswith("serve it: "))
    assert_runs_as_printed(line.removeprefix("serve it: "), "--help", expect="usage: python -m serve")


def test_api_key_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    assert configured_key() is None and authorized("/points", None, None)  # no key: open, as on a laptop
    with pytest.raises(ValueError, match=f"requires an API key but {API_KEY_ENV} is empty or not set"):
        configured_key(require=True)  # what a replica with require_api_key=true says, and refuses to start
    monkeypatch.setenv(API_KEY_ENV, "  0123456789abcdef  ")
    assert configured_key(require=True) == "0123456789abcdef"
    assert authorized("/health", None, "0123456789abcdef")
    assert authorized("/points", "bearer 0123456789abcdef", "0123456789abcdef")
    assert not authorized("/points", "Bearer 0123456789abcdeg", "0123456789abcdef")

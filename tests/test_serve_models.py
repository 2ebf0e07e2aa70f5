"""The release service's model filter (``--models`` / ``models=``) on a real registry: several registered models,
points registered by ``platform.select.register``, one registered model that is no putlab point."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import sweep_env
from ray_nodes import free_ports
from serve_client import call, start_service, stop_service
from stores import RawStore

from platform.select import Choice, register
from search_spaces import presets
from serve.__main__ import main as serve_cli
from serve.app import build_app
from serve.points import Registry, list_points, unknown_models

REGISTERED = ["alpha/1", "alpha/2", "beta/1"]  # the putlab points of the store; "plain/1" is registered but no point


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An sqlite store with points alpha/1, alpha/2, beta/1 and the registered model plain (no putlab point)."""
    folder = tmp_path_factory.mktemp("models")
    client = RawStore(f"sqlite:///{folder / 'mlflow.db'}")
    exp = client.create_experiment("putlab-amnist", artifact_location=(folder / "mlruns").as_uri())
    checkpoint = folder / "checkpoint_000001"
    checkpoint.mkdir()
    (checkpoint / "state.pt").write_bytes(b"weights")
    for i, model in enumerate(["alpha", "alpha", "beta"]):
        run_id = client.create_run(exp, run_name=f"trial {i}").info.run_id
        row = pd.Series({"run_id": run_id, "trial_id": f"t{i}", "name": f"trial {i}", "utility/fresh_accuracy": 0.9 - i / 10,
                         "attack/max/accuracy": 0.6})
        register(client, model, presets()["amnist"], Choice(row, "chosen by trial id"), str(checkpoint), {"lam": float(i)})
    client.create_registered_model("plain")
    client.create_model_version("plain", source=checkpoint.as_uri())
    return folder / "mlflow.db"


@pytest.mark.parametrize("models, served", [
    ((), REGISTERED),
    (("alpha",), ["alpha/1", "alpha/2"]),
    (("alpha/2",), ["alpha/2"]),
    (("beta", "alpha/1"), ["alpha/1", "beta/1"]),
    (("alpha/2", "alpha"), ["alpha/1", "alpha/2"]),
    (("plain",), []),  # registered, but not by platform.select: never served
    (("gamma", "alpha/9"), []),
])
def test_the_filter_lists_exactly_the_named_points(registry: Path, models: tuple[str, ...], served: list[str]) -> None:
    points = list_points(Registry(f"sqlite:///{registry}"), models)
    assert sorted(points) == served
    assert all(points[p].preset == "amnist" and points[p].metrics["attack/max/accuracy"] == 0.6 for p in points)


def test_unknown_models_are_the_entries_that_name_no_point(registry: Path) -> None:
    models = ("alpha", "alpha/2", "alpha/3", "beta/1", "plain", "gamma", "beta/x")
    points = list_points(Registry(f"sqlite:///{registry}"), models)
    assert unknown_models(models, points) == ["alpha/3", "plain", "gamma", "beta/x"]


def test_build_app_binds_the_named_models(registry: Path) -> None:
    app = build_app({"tracking_uri": f"sqlite:///{registry}", "models": " alpha/2, beta ,"})
    assert app._bound_deployment.init_args[:2] == (f"sqlite:///{registry}", ("alpha/2", "beta"))  # Ray's bound args
    assert build_app({"tracking_uri": f"sqlite:///{registry}"})._bound_deployment.init_args[1] == ()  # all of them


UNKNOWN = [("gamma", "gamma"), ("alpha/9", "alpha/9"), ("alpha/2,plain", "plain"), ("beta/x,gamma,alpha", "beta/x, gamma")]


@pytest.mark.parametrize("models, unknown", UNKNOWN, ids=[m for m, _ in UNKNOWN])
def test_build_app_and_the_cli_refuse_unknown_models_naming_them(registry: Path, capsys, models: str,
                                                                 unknown: str) -> None:
    listed = f"names no registered operating point: {unknown} (registered: {', '.join(REGISTERED)})"
    with pytest.raises(ValueError) as refused:
        build_app({"tracking_uri": f"sqlite:///{registry}", "models": models})
    assert str(refused.value) == f"models= {listed}"
    (port,) = free_ports(1)
    assert serve_cli(["--tracking-uri", f"sqlite:///{registry}", "--models", models, "--port", str(port)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"error: --models {listed}"]


@pytest.mark.slow  # a real Serve endpoint: about 20 s
def test_the_service_serves_exactly_the_named_points(registry: Path, tmp_path: Path) -> None:
    """``python -m serve --models alpha/2,beta`` on a local Ray (about 30 s)."""
    server, base = start_service(tmp_path, sweep_env(), "--models", "alpha/2,beta", tracking_uri=f"sqlite:///{registry}")
    try:
        status, listed = call(f"{base}/points")
        assert status == 200 and sorted(p["id"] for p in listed["points"]) == ["alpha/2", "beta/1"]
        status, answer = call(f"{base}/points/alpha/1/release", {"inputs": [[[[0.5] * 28] * 28]], "seed": 1})
        assert status == 404 and "unknown operating point 'alpha/1'" in answer["error"]  # registered, not named
    finally:
        stop_service(server)

"""The KubeRay and MLflow manifests validate offline, and the validator catches what a cluster would
reject or silently drop: wrong types, unknown and missing fields, GPU workers without GPUs, and
modules, options, imports and objects that do not exist."""
from __future__ import annotations

import copy
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from conftest import REPO, sweep_env
from hostile_files import billion_laughs

from k8s.checker import DEFAULT_CRDS, SchemaSet, check_files, default_manifests
from k8s.checker import main as checker_cli

RAYJOB = REPO / "k8s" / "rayjob-sweep-amnist.yaml"
RAYCLUSTER = REPO / "k8s" / "raycluster-gpu.yaml"
MLFLOW = REPO / "k8s" / "mlflow.yaml"


@pytest.fixture(scope="module")
def schemas() -> SchemaSet:
    return SchemaSet(DEFAULT_CRDS, "1.30.0")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "k8s.checker", *args], cwd=REPO, env=sweep_env(),
                          capture_output=True, text=True, timeout=120)


def mutated(tmp_path: Path, source: Path, change: Callable[[list[dict]], None]) -> Path:
    """A copy of ``source`` in tmp_path with ``change`` applied to its documents."""
    docs = list(yaml.safe_load_all(source.read_text()))
    change(docs)
    out = tmp_path / source.name
    out.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return out


def test_repo_manifests_validate_through_the_cli():
    result = cli()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all valid" in result.stdout
    names = {p.name for p in default_manifests()}
    assert {"raycluster-gpu.yaml", "rayjob-sweep-amnist.yaml", "rayservice-putlab.yaml", "mlflow.yaml",
            "networkpolicy-mlflow.yaml", "networkpolicy-serve.yaml", "networkpolicy-postgres.yaml"} <= names
    assert not any(p.parent.name == "crds" for p in default_manifests())


def _worker(docs: list[dict]) -> dict:
    return docs[0]["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]


def _entrypoint(old: str, new: str) -> Callable[[list[dict]], None]:
    def change(docs: list[dict]) -> None:
        assert old in docs[0]["spec"]["entrypoint"]
        docs[0]["spec"]["entrypoint"] = docs[0]["spec"]["entrypoint"].replace(old, new)
    return change


def _drop_gpu(docs: list[dict]) -> None:
    resources = docs[0]["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"]
    for kind in ("requests", "limits"):
        del resources[kind]["nvidia.com/gpu"]


def _mlflow_container(docs: list[dict]) -> dict:
    return next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]


def _head(docs: list[dict]) -> dict:
    return docs[0]["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]


def _runtime_env(old: str, new: str) -> Callable[[list[dict]], None]:
    def change(docs: list[dict]) -> None:
        docs[0]["spec"]["runtimeEnvYAML"] = docs[0]["spec"]["runtimeEnvYAML"].replace(old, new) if old else new
    return change


def _rename(docs: list[dict]) -> None:
    docs[0]["spec"]["rayClusterSpecs"] = docs[0]["spec"].pop("rayClusterSpec")


WORKER0 = "$.spec.rayClusterSpec.workerGroupSpecs[0]"
MLFLOW0 = "$.spec.template.spec.containers[0]"
CASES = {  # name: (manifest, change, JSON path of the problem, words of its message)
    "wrong type": (RAYJOB, lambda d: _worker(d).update(replicas="two"), f"{WORKER0}.replicas", "'two' is not of type 'integer'"),
    "unknown field": (RAYJOB, _rename, "$.spec.rayClusterSpecs", "unknown field"),
    "missing required field": (RAYJOB, lambda d: d[0]["spec"]["rayClusterSpec"].pop("headGroupSpec"),
                               "$.spec.rayClusterSpec", "'headGroupSpec' is a required property"),
    "rayStartParams must be strings": (RAYJOB, lambda d: _worker(d)["rayStartParams"].update({"num-gpus": 1}),
                                       f"{WORKER0}.rayStartParams.num-gpus", "1 is not of type 'string'"),
    "GPU worker without nvidia.com/gpu": (RAYCLUSTER, _drop_gpu,
                                          '$.spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits["nvidia.com/gpu"]',
                                          "GPU worker group 'gpu' has no nvidia.com/gpu limit"),
    "missing module": (RAYJOB, _entrypoint("-m platform.sweep", "-m platform.sweeps"),
                       "$.spec.entrypoint", "python -m platform.sweeps: no such module in the repo"),
    "unknown option": (RAYJOB, _entrypoint("--tracking-uri", "--tracking_uri"),
                       "$.spec.entrypoint", "python -m platform.sweep has no option --tracking_uri"),
    "missing import": (RAYJOB, _entrypoint("import load_mnist;", "import load_mnist_cached;"),
                       "$.spec.entrypoint", "core.data.mnist defines no load_mnist_cached"),
    "unpinned torch": (RAYJOB, _runtime_env("torch==2.14.1", "torch>=2"),
                       "$.spec.runtimeEnvYAML.pip.packages[0]", "differs from pyproject.toml's pin 'torch==2.14.1'"),
    "runtime_env typo": (RAYJOB, _runtime_env("\npip:", "\npipp:"), "$.spec.runtimeEnvYAML.pipp", "unknown runtime_env field"),
    "code not shipped": (RAYJOB, _runtime_env("", "pip: [torch==2.14.1]\n"), "$.spec.runtimeEnvYAML.working_dir",
                         "no working_dir"),
    "image off rayVersion": (RAYCLUSTER, lambda d: _head(d).update(image="rayproject/ray:2.59.0-py311"),
                             "$.spec.headGroupSpec.template.spec.containers[0].image", "is not Ray 2.60.0"),
    "core kind unknown field": (MLFLOW, lambda d: _mlflow_container(d).update(resource=_mlflow_container(d).pop("resources")),
                                f"{MLFLOW0}.resource", "unknown field"),
    "container may escalate": (MLFLOW, lambda d: _mlflow_container(d)["securityContext"].pop("allowPrivilegeEscalation"),
                               f"{MLFLOW0}.securityContext.allowPrivilegeEscalation", "allowPrivilegeEscalation: false"),
    "undefined Secret": (MLFLOW, lambda d: _mlflow_container(d)["env"][0]["valueFrom"]["secretKeyRef"].update(name="mlflow-pg"),
                         f"{MLFLOW0}.env[0].valueFrom.secretKeyRef", "Secret 'mlflow-pg' is not defined"),
    "NetworkPolicy typo": (REPO / "k8s" / "networkpolicy-mlflow.yaml",
                           lambda d: d[0]["spec"].update(podSelectr=d[0]["spec"].pop("podSelector")),
                           "$.spec.podSelectr", "unknown field"),
    "undefined API-key Secret": (REPO / "k8s" / "rayservice-putlab.yaml",
                                 lambda d: _head([{"spec": d[0]["spec"]["rayClusterConfig"]}])["envFrom"][1]["secretRef"]
                                 .update(name="serve-key"),
                                 "$.spec.rayClusterConfig.headGroupSpec.template.spec.containers[0].envFrom[1].secretRef",
                                 "Secret 'serve-key' is not defined"),
    "wrong Service port": (RAYCLUSTER, lambda d: _head(d)["env"][0].update(value="http://mlflow.putlab.svc:5001"),
                           "$.spec.headGroupSpec.template.spec.containers[0].env[0].value", "Service 'mlflow' has no port 5001"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_broken_manifest_is_caught_at_its_path(case: str, tmp_path: Path, schemas: SchemaSet):
    source, change, path, message = CASES[case]
    assert check_files([source], schemas=schemas) == []  # the change alone is what breaks it
    problems = check_files([mutated(tmp_path, source, change)], schemas=schemas)
    assert any(p.path == path and message in p.message for p in problems), "\n".join(map(str, problems)) or "no problem found"


def test_serve_config_import_path_and_fields(tmp_path: Path, schemas: SchemaSet):
    service = REPO / "k8s" / "rayservice-putlab.yaml"

    def edit(old: str, new: str) -> Callable[[list[dict]], None]:
        def change(docs: list[dict]) -> None:
            assert old in docs[0]["spec"]["serveConfigV2"]
            docs[0]["spec"]["serveConfigV2"] = docs[0]["spec"]["serveConfigV2"].replace(old, new)
        return change

    app = "$.spec.serveConfigV2.applications[0]"
    resolvable = check_files([mutated(tmp_path, service, edit("serve.app:build_app", "platform.sweep:main"))], schemas=schemas)
    assert resolvable == []
    for old, new, path, why in [
        ("serve.app:build_app", "platform.sweep:build_app", f"{app}.import_path", "platform.sweep defines no build_app"),
        ("serve.app:build_app", "serve.no_such_module:build_app", f"{app}.import_path",
         "no module serve.no_such_module in the repo"),
        ("route_prefix: /", "route_prefx: /", f"{app}.route_prefx", "unknown field of ServeApplicationSchema"),
    ]:
        problems = check_files([mutated(tmp_path, service, edit(old, new))], schemas=schemas)
        assert any(p.path == path and why in p.message for p in problems), problems


def test_cli_reports_one_line_per_problem_and_exit_codes(tmp_path: Path):
    broken = mutated(tmp_path, RAYJOB, CASES["unknown field"][1])
    result = cli(str(broken))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [f"{broken}: RayJob/putlab-sweep-amnist: $.spec.rayClusterSpecs: "
                                          "unknown field (not in the schema; the API server would reject or drop it)"]
    missing = cli("--crds", str(tmp_path / "nowhere"), str(RAYJOB))
    assert missing.returncode == 2 and missing.stderr == f"error: --crds {tmp_path / 'nowhere'} does not exist: give the " \
                                                         "folder of the KubeRay CRD YAMLs\n"
    a_file = cli("--crds", str(RAYJOB), str(RAYJOB))
    assert a_file.returncode == 2 and a_file.stderr == f"error: --crds {RAYJOB} is not a folder: give the folder of the " \
                                                       "KubeRay CRD YAMLs, not a file\n"
    (tmp_path / "bad.yaml").write_text("spec: [unclosed\n")
    unreadable = cli(str(tmp_path / "bad.yaml"))
    assert unreadable.returncode == 2 and unreadable.stdout == ""
    assert unreadable.stderr == f"error: manifest {tmp_path / 'bad.yaml'} is not YAML: did not find expected ',' or ']' " \
                                "(line 2, column 1)\n"


def test_user_crds_are_used(tmp_path: Path):
    """--crds takes an operator's own CRDs (kubectl get crd -o yaml, here as a List) instead of the vendored ones."""
    crd = yaml.load((DEFAULT_CRDS / "ray.io_rayjobs.yaml").read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    older = copy.deepcopy(crd)
    v1 = next(v for v in older["spec"]["versions"] if v["name"] == "v1")
    # an operator from before that field
    del v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["submitterPodTemplate"]
    mine = tmp_path / "my-crds"
    mine.mkdir()
    (mine / "crds.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [older]}))
    result = cli("--crds", str(mine), str(RAYJOB), str(RAYCLUSTER))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    unknown = "k8s/rayjob-sweep-amnist.yaml: RayJob/putlab-sweep-amnist: $.spec.submitterPodTemplate: unknown field"
    assert any(line.startswith(unknown) for line in lines)
    no_schema = "k8s/raycluster-gpu.yaml: RayCluster/putlab-cluster: $.kind: no schema for RayCluster ray.io/v1"
    assert any(line.startswith(no_schema) for line in lines)
    shutil.copy(DEFAULT_CRDS / "ray.io_rayjobs.yaml", mine / "crds.yaml")
    assert cli("--crds", str(mine), str(RAYJOB)).returncode == 0


def _docs(name: str) -> list[dict]:
    return list(yaml.safe_load_all((REPO / "k8s" / name).read_text()))


def _pod_labels() -> list[dict]:
    """The labels of every pod template the manifests define (Deployments, StatefulSets, Ray head and worker groups)."""
    found = []

    def walk(node) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("spec"), dict) and isinstance(node["spec"].get("containers"), list):
                found.append((node.get("metadata") or {}).get("labels") or {})
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in default_manifests():
        for doc in yaml.safe_load_all(path.read_text()):
            walk(doc)
    return found


KUBERAY_POD_LABELS = {"ray.io/is-ray-node": "yes"}  # set by the operator on every Ray pod, not in the templates


@pytest.mark.parametrize("name, selects, port", [("networkpolicy-postgres.yaml", "postgres", 5432),
                                                 ("networkpolicy-mlflow.yaml", "mlflow", 5000),
                                                 ("networkpolicy-serve.yaml", "serve", 8000)])
def test_network_policies_select_real_pods_and_admit_only_named_peers(name: str, selects: str, port: int):
    (policy,) = _docs(name)
    assert policy["kind"] == "NetworkPolicy" and policy["spec"]["policyTypes"] == ["Ingress"]
    labels = _pod_labels()
    target = policy["spec"]["podSelector"]["matchLabels"]
    assert selects in target.values() and any(target.items() <= pod.items() for pod in labels), target
    for rule in policy["spec"]["ingress"]:
        assert rule["from"], "an ingress rule without peers admits everyone"
        for peer in rule["from"]:
            if "podSelector" in peer and "namespaceSelector" not in peer:
                wanted = peer["podSelector"]["matchLabels"]
                assert wanted == KUBERAY_POD_LABELS or wanted == {"putlab.io/serve-client": "true"} \
                    or any(wanted.items() <= pod.items() for pod in labels), wanted
    assert any(p["port"] == port for rule in policy["spec"]["ingress"] for p in rule.get("ports", [])), port


def test_authentication_is_on_by_default_in_the_manifests():
    mlflow = next(d for d in _docs("mlflow.yaml") if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]
    script = " ".join(mlflow["command"] + mlflow["args"])
    assert "--app-name=basic-auth" in script and "exec mlflow server" in script
    env = {e["name"]: e for e in mlflow["env"]}
    assert env["MLFLOW_AUTH_ADMIN_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == "mlflow-auth"
    (service,) = _docs("rayservice-putlab.yaml")
    app = yaml.safe_load(service["spec"]["serveConfigV2"])["applications"][0]
    assert app["args"]["require_api_key"] == "true"
    groups = [service["spec"]["rayClusterConfig"]["headGroupSpec"], *service["spec"]["rayClusterConfig"]["workerGroupSpecs"]]
    for group in groups:
        container = group["template"]["spec"]["containers"][0]
        assert {"mlflow-auth", "putlab-serve-api-key"} <= {e["secretRef"]["name"] for e in container["envFrom"]}
    for name in ("raycluster-gpu.yaml", "rayjob-sweep-amnist.yaml", "rayjob-select.yaml"):
        text = (REPO / "k8s" / name).read_text()
        ray_containers = len(re.findall(r"- name: ray-(?:head|worker)$", text, re.M))
        assert text.count("name: mlflow-auth") == ray_containers == 1 + (name != "rayjob-select.yaml"), name


def test_a_billion_laughs_manifest_is_refused_in_one_line_under_a_second(tmp_path: Path, capsys) -> None:
    """Nine levels of nine aliases (9^9 nodes once expanded; last round: a MemoryError after 55 s under a 3 GB cap)."""
    laughs = tmp_path / "laughs.yaml"
    laughs.write_text(billion_laughs())
    started = time.monotonic()
    assert checker_cli([str(laughs)]) == 2
    assert time.monotonic() - started < 1
    assert capsys.readouterr().err.splitlines() == [
        f'error: manifest {laughs} expands to more than 1,000,000 YAML nodes through its aliases (a "billion laughs" file?)']


def test_an_empty_manifest_is_refused(tmp_path: Path, capsys) -> None:
    (tmp_path / "empty.yaml").write_text("# nothing but a comment\n---\n")
    assert checker_cli([str(tmp_path / "empty.yaml")]) == 2
    assert capsys.readouterr().err.splitlines() == [f"error: manifest {tmp_path / 'empty.yaml'} holds no YAML document"]

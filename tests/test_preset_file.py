"""A mechanism from outside putlab: ``--preset-file``, the ``putlab.presets`` entry points, and the shipped example
(examples/gaussian_noise) run through the real sweep, its Ray workers and the whole attack farm."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import matplotlib.image
import pandas as pd
import pytest
import torch
from conftest import REPO, run_sweep, store, sweep_env

from core.plugins import PluginClash, collect, installed
from platform.errors import UsageError
from platform.plan.spec import get_preset, preset_of, resolve
from platform.sweep import main
from search_spaces import SweepTrials
from search_spaces.amnist import PRESET as amnist
from search_spaces.plugins import PRESETS, load_preset_file
from serve.points import Registry, list_points, load_point

EXAMPLE = REPO / "examples" / "gaussian_noise" / "preset.py"


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^preset file .*nowhere\.py does not exist$"):
        resolve(None, None, [], str(tmp_path / "nowhere.py"))


@pytest.mark.parametrize(("source", "expected"), [
    ("X = 1\n", r"must define PRESET = search_spaces\.Preset\(\.\.\.\) \(no PRESET\)$"),
    ("PRESET = {'name': 'x'}\n", r"\(PRESET is a dict\)$"),
    ("import no_such_module_anywhere\n", r"does not import: ModuleNotFoundError: No module named 'no_such_module_anywhere'$"),
    ("raise RuntimeError('first line\\nsecond line')\n", r"does not import: RuntimeError: first line$"),
])
def test_bad_preset_file_is_one_line(tmp_path: Path, source: str, expected: str) -> None:
    path = tmp_path / f"bad_{abs(hash(source))}.py"
    path.write_text(source)
    with pytest.raises(UsageError, match=expected) as caught:
        resolve(None, None, [], str(path))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("given", [["amnist", "--preset-file", str(EXAMPLE)], []], ids=["both", "neither"])
def test_name_and_file_exactly_one(tmp_path: Path, capsys: pytest.CaptureFixture[str], given: list[str]) -> None:
    """In-process through the sweep's own entry point, as tests/test_sweep_cli.py does."""
    code = main([*given, "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}", "--storage", str(tmp_path / "runs")])
    assert code == 2
    assert capsys.readouterr().err == "error: give a preset name or --preset-file PATH (exactly one)\n"
    assert not (tmp_path / "runs").exists()


def test_example_resolves_and_is_found_again_from_the_parent_params() -> None:
    spec = resolve(None, "smoke", ["lam=0,5"], str(EXAMPLE))
    assert spec.preset.name == "gaussian-noise" and spec.grid == {"lam": [0.0, 5.0]}
    assert preset_of({"preset": "gaussian-noise", "preset_file": str(EXAMPLE)}) is spec.preset


def test_mechanism_pickles_by_value_for_workers_without_its_folder() -> None:
    """What Ray ships to a worker: the trainable and the farm's entry point, unpickled where ``mechanism`` does not
    import (PYTHONPATH is the repository only), then a real mechanism built from them."""
    from ray import cloudpickle

    preset = load_preset_file(EXAMPLE)
    blob = cloudpickle.dumps((preset.trainable, preset.checkpoint_inputs, preset.mechanism))
    script = ("import importlib.util, pickle, sys\n"
              "assert importlib.util.find_spec('mechanism') is None\n"
              "trainable, inputs, cls = pickle.loads(sys.stdin.buffer.read())\n"
              "m = cls.create({'lam': 2.0, 'sigma_init': 0.2}); m.build()\n"
              "print(trainable.__name__, type(m).__name__, round(m.noise.log_sigma.exp().mean().item(), 3))\n")
    out = subprocess.run([sys.executable, "-c", script], input=blob, capture_output=True, env=sweep_env(), cwd=REPO,
                         timeout=120)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert out.stdout.decode().split() == ["train_gaussian_noise", "GaussianNoise", "0.2"]


def test_more_noise_with_more_privacy_weight() -> None:
    """One epoch of the example's game at λ = 0 and λ = 30: the privacy term grows σ, which the release must show
    as more distortion (a release ignoring σ, or a privacy term with the wrong sign, fails)."""
    mechanism_class = load_preset_file(EXAMPLE).mechanism
    seen = {}
    for lam in (0.0, 30.0):
        m = mechanism_class.create({"lam": lam, "n_train": 256, "n_test": 128, "batch_size": 32, "width": 8,
                                    "pretrain_epochs": 1}, torch.device("cpu"))
        m.setup()
        m.pretrain()
        m.train_epoch()
        seen[lam] = m.evaluate(attack=False)
    assert seen[30.0]["train/sigma_max"] > 1.5 * seen[0.0]["train/sigma_max"], seen
    assert seen[30.0]["train/sigma_mean"] > seen[0.0]["train/sigma_mean"], seen
    assert seen[30.0]["utility/mse"] > seen[0.0]["utility/mse"], seen


def test_example_contributes_its_own_sweep_figure(tmp_path: Path) -> None:
    """The example's sweep figure, drawn from a trials table and σ histories as publish hands them over."""
    preset = load_preset_file(EXAMPLE)
    (figure,) = preset.presentation.sweep_figures
    table = pd.DataFrame({"run_id": ["a", "b"], "lam": [0.0, 30.0], "status": ["FINISHED"] * 2})
    histories = {"a": pd.DataFrame({"train/sigma_mean": [0.1, 0.1]}, index=[1, 2]),
                 "b": pd.DataFrame({"train/sigma_mean": [0.1, 0.3]}, index=[1, 2])}
    assert preset.presentation.sweep_history == ("train/sigma_mean",)
    assert figure(SweepTrials(table, histories), tmp_path) == [tmp_path / "sigma_by_epoch.png"]
    assert matplotlib.image.imread(tmp_path / "sigma_by_epoch.png").ndim == 3
    no_sigma = {k: v.assign(**{"train/sigma_mean": float("nan")}) for k, v in histories.items()}
    assert figure(SweepTrials(table, no_sigma), tmp_path / "none") == []


def test_published_name_clash_names_both() -> None:
    merged = collect(PRESETS, [("module search_spaces.amnist", amnist),
                               ("entry point mine = pkg:PRESET", replace(amnist, name="mine"))])
    assert set(merged) == {"amnist", "mine"}
    with pytest.raises(PluginClash, match=r"^preset name 'amnist' of entry point dup = pkg:PRESET clashes with the "
                                          r"one of module search_spaces.amnist$"):
        collect(PRESETS, [("module search_spaces.amnist", amnist), ("entry point dup = pkg:PRESET", replace(amnist))])


def test_installed_package_publishes_a_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real distribution installed with pip into a folder on sys.path: its entry point joins the named presets."""
    src = tmp_path / "src"
    (src / "putlab_demo_preset").mkdir(parents=True)
    (src / "putlab_demo_preset" / "__init__.py").write_text(
        "from dataclasses import replace\nfrom search_spaces.amnist import PRESET as AMNIST\n"
        "PRESET = replace(AMNIST, name='amnist-published')\n")
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "putlab-demo-preset"\nversion = "0.1"\n'
        '[project.entry-points."putlab.presets"]\ndemo = "putlab_demo_preset:PRESET"\n'
        '[tool.setuptools]\npackages = ["putlab_demo_preset"]\n')
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index",
                    "--target", str(target), str(src)], check=True, capture_output=True, timeout=120)
    monkeypatch.syspath_prepend(str(target))
    (source, published), = [p for p in installed("putlab.presets") if getattr(p[1], "name", "") == "amnist-published"]
    assert source == "entry point demo = putlab_demo_preset:PRESET of package putlab-demo-preset"
    assert published.mechanism is amnist.mechanism
    assert get_preset("amnist-published") is published


@pytest.mark.slow
def test_example_sweep_runs_the_whole_farm_in_ray_workers(tmp_path: Path) -> None:
    """The README's command: trials in a local Ray's workers, every farm attacker on every checkpoint, the preset
    file kept on the parent run, and the attack command finding the preset again from it."""
    out = run_sweep(tmp_path, "--preset-file", str(EXAMPLE.relative_to(REPO)), "--profile", "smoke", timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    client = store(tmp_path)
    runs = client.search_runs([client.get_experiment_by_name("putlab-gaussian-noise").experiment_id])
    parent = next(r for r in runs if "lam" not in r.data.params)
    assert parent.data.params["preset_file"] == str(EXAMPLE)
    trials = {float(r.data.params["lam"]): r.data.metrics for r in runs if "lam" in r.data.params}
    assert set(trials) == {0.0, 30.0}
    for metrics in trials.values():
        for key in ("attack/deep_raw/accuracy", "attack/thickness/accuracy", "attack/yeom/auc", "attack/rmia/auc",
                    "attack/lira/auc", "attack/deep/accuracy", "attack/max/accuracy", "utility/accuracy"):
            assert key in metrics, (key, sorted(metrics))
    assert trials[30.0]["train/sigma_mean"] > trials[0.0]["train/sigma_mean"]
    assert trials[30.0]["utility/mse"] > trials[0.0]["utility/mse"]
    checkpoints = list((tmp_path / "runs").glob("gaussian-noise-smoke-*/*/checkpoint_*/sigma.png"))
    assert len(checkpoints) == 2
    assert "front/sigma_by_epoch.png" in {a.path for a in client.list_artifacts(parent.info.run_id, "front")}
    again = subprocess.run([sys.executable, "-m", "platform.attack", parent.info.run_id, "--tracking-uri",
                            f"sqlite:///{tmp_path / 'mlflow.db'}"], cwd=REPO, env=sweep_env(), capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    chosen = subprocess.run([sys.executable, "-m", "platform.select", parent.info.run_id, "--max-attack", "1",
                             "--sweep-budget", "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"], cwd=REPO,
                            env=sweep_env(), capture_output=True, text=True, timeout=300)
    assert chosen.returncode == 0, chosen.stdout[-2000:] + chosen.stderr[-2000:]
    registry = Registry(client.tracking_uri)
    (info,) = list_points(registry).values()  # what the release service loads: the preset file, by its stored path
    released = load_point(registry, info, torch.device("cpu")).release(torch.rand(3, 1, 28, 28), seed=5)
    assert released.shape == (3, 1, 28, 28) and released.min() >= 0 and released.max() <= 1

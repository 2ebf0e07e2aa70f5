"""One way to register attackers, data sets and presets (core.plugins): built-ins found in their package, installed
packages' entry points found the same way, and one PluginClash for a name taken twice, whichever the kind."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from attacks.attackers.registry import ATTACKERS, Registry
from core.data.registry import DATASETS, datasets, get_dataset
from core.plugins import PluginClash, collect
from search_spaces import presets
from search_spaces.plugins import PRESETS


def install(tmp_path: Path, name: str, module: str, entry_points: dict[str, tuple[str, str]]) -> Path:
    """A real distribution ``name`` holding ``module``'s text as its package, installed with pip into a folder of its
    own, publishing ``entry_points`` (group -> (entry-point name, target))."""
    src = tmp_path / name / "src"
    package = name.replace("-", "_")
    (src / package).mkdir(parents=True)
    (src / package / "__init__.py").write_text(module)
    groups = "".join(f'[project.entry-points."{group}"]\n{point} = "{target}"\n'
                     for group, (point, target) in entry_points.items())
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "{name}"\nversion = "0.1"\n{groups}[tool.setuptools]\npackages = ["{package}"]\n')
    target = tmp_path / name / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index",
                    "--target", str(target), str(src)], check=True, capture_output=True, timeout=120)
    return target


PLUGIN = """
from dataclasses import replace

from attacks.attackers.knn import SPECS as KNN
from core.data.sets.mnist32 import DATASET as MNIST32

SPECS = (replace(KNN[0], name="knn_plugin"),)
DATASET = replace(MNIST32, name="mnist32_plugin")
"""


def test_installed_attacker_and_data_set_are_found_like_the_built_ins(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    assert "knn_plugin" not in Registry.discover() and "mnist32_plugin" not in datasets()  # the control
    site = install(tmp_path, "putlab-demo-plugins", PLUGIN, {
        "putlab.attackers": ("knn_plugin", "putlab_demo_plugins:SPECS"),
        "putlab.datasets": ("mnist32_plugin", "putlab_demo_plugins:DATASET"),
    })
    monkeypatch.syspath_prepend(str(site))
    registry = Registry.discover()
    assert list(registry)[-1] == "knn_plugin" and registry["knn_plugin"].primary_metric == "accuracy"  # after built-ins
    assert get_dataset("mnist32_plugin").input_shape == get_dataset("mnist32").input_shape


def test_an_installed_attacker_taking_a_built_in_name_is_the_one_clash_error(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    module = "from dataclasses import replace\nfrom attacks.attackers.knn import SPECS as KNN\n" \
             "SPECS = (replace(KNN[0], summary='another knn'),)\n"
    site = install(tmp_path, "putlab-clash-plugin", module,
                   {"putlab.attackers": ("knn", "putlab_clash_plugin:SPECS")})
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(PluginClash, match=r"^attacker name 'knn' of entry point knn = putlab_clash_plugin:SPECS of "
                                          r"package putlab-clash-plugin clashes with the one of module attacks.attackers.knn$"):
        Registry.discover()


def test_every_kind_raises_the_same_error_for_a_taken_name() -> None:
    deep = Registry.discover()["deep"]
    amnist = get_dataset("amnist")
    preset = presets()["amnist"]
    for kind, first, second in ((ATTACKERS, deep, replace(deep, summary="another")),
                                (DATASETS, amnist, replace(amnist, description="another")),
                                (PRESETS, preset, replace(preset, presentation=replace(preset.presentation, title="another")))):
        assert collect(kind, [("module a", first)]) == {kind.name(first): first}
        with pytest.raises(PluginClash, match=rf"^{kind.word} name '{kind.name(first)}' of entry point b clashes "
                                              r"with the one of module a$"):
            collect(kind, [("module a", first), ("entry point b", second)])
        with pytest.raises(ValueError, match=r"^entry point b is a str, not a "):
            collect(kind, [("entry point b", "not a plug-in")])

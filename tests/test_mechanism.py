"""The Mechanism interface as the driver sees it: every preset derives its callables from its mechanism class."""
from __future__ import annotations

import pytest

from search_spaces import presets
from trainables.shared.mechanism import Mechanism
from trainables.shared.tune_loop import KILL_ENV, kill_after_epoch

# preset -> (mechanism label, Tune trainable name, raw baselines, attack farm, served release)
EXPECTED = {
    "amnist": ("releaser", "train_releaser", True, True, True),
    "amnist-privatizer": ("privatizer", "train_privatizer", True, True, True),
    "gmm": ("gmm", "train_gmm_privatizer", False, False, False),
    "cloak-mnist": ("cloak", "train_cloak", True, True, True),
    "eco": ("eco_releaser", "train_eco_releaser", True, True, True),
    "eco-si": ("eco_releaser", "train_eco_releaser", True, True, True),
    "adult-membership": ("membership", "train_membership", False, True, False),
    "adult-dp": ("membership", "train_membership", False, True, False),
    "noise": ("noise", "train_noise", True, True, True),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_preset_callables_come_from_its_mechanism(name: str) -> None:
    preset = presets()[name]
    label, trainable, baselines, farm, serves = EXPECTED[name]
    assert issubclass(preset.mechanism, Mechanism) and preset.mechanism_name == label
    assert preset.trainable.__name__ == trainable
    assert (preset.raw_references is not None, preset.checkpoint_inputs is not None, preset.load_release is not None) == (
        baselines, farm, serves)
    assert preset.validate(dict(preset.base)) == preset.mechanism.config_class.normalise(dict(preset.base))
    assert preset.presentation.checkpoint_figures == preset.mechanism.figures or not preset.mechanism.checkpoints


def test_fault_injection_reads_its_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KILL_ENV, raising=False)
    assert kill_after_epoch() == -1
    monkeypatch.setenv(KILL_ENV, "3")
    assert kill_after_epoch() == 3
    monkeypatch.setenv(KILL_ENV, "three")
    with pytest.raises(ValueError, match=f"^{KILL_ENV} must be an integer epoch"):
        kill_after_epoch()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_trainable_refuses_a_misspelt_key_before_anything_runs(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tune hands the trainable a dict: it is validated once, at the entry, and a typo is refused there in one line
    (not read later as a missing key with a default)."""
    from ray import tune

    preset = presets()[name]
    monkeypatch.setattr(tune, "report", lambda *args, **kwargs: pytest.fail("a trial with a misspelt key reported"))
    monkeypatch.setattr(preset.mechanism, "setup", lambda self: pytest.fail("a trial with a misspelt key loaded data"))
    kind = preset.mechanism.config_class.kind
    with pytest.raises(ValueError, match=f"^seeed: unknown {kind} config key$"):
        preset.trainable({**preset.base, "seeed": 1})


def test_docs_presets_table_names_the_room_that_holds_every_presets_mechanism() -> None:
    """A preset's name need not predict its folder, so docs/presets.md says where each lives: its ``code`` column must
    name the room of ``trainables/`` the preset's mechanism is defined in, for every preset."""
    from conftest import REPO

    rows = [line.split("|")[1:-1] for line in (REPO / "docs" / "presets.md").read_text().splitlines()
            if line.startswith("| `")]
    code = {name.strip(" `"): cells[-1].strip(" `") for cells in rows for name in cells[0].split(",")}
    for name, preset in presets().items():
        room = "/".join(preset.mechanism.__module__.split(".")[:2])
        assert code.get(name) == f"{room}/", (name, code.get(name), room)

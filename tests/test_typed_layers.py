"""Typed where the layers meet: a preset's Pareto axes and objectives name declared metrics, a mechanism declares its
capabilities (and is refused when the declaration and its methods differ), the sweep's command line is one typed
object."""
from __future__ import annotations

from dataclasses import FrozenInstanceError, replace
from pathlib import Path
from typing import ClassVar

import pytest

from core.metric_names import DECLARED, FRESH_ACCURACY, STRONGEST_ATTACK
from core.pareto_axis import Axis
from platform.errors import UsageError
from platform.plan import resume_options
from platform.plan.options import SweepOptions
from platform.plan.spec import resolve
from platform.results.comparison_grid import ComparisonGrid
from platform.sweep import parse_args
from search_spaces import presets
from search_spaces.amnist import PRESET as AMNIST
from trainables.membership.mechanism import Membership
from trainables.releaser.mechanism import Releaser
from trainables.shared.mechanism import Capability

MISSPELT = Axis("utility/fresh_acuracy", higher_is_better=True, bound=0.0, ideal=1.0)


def test_every_preset_names_declared_or_its_mechanisms_metrics() -> None:
    for name, preset in presets().items():
        named = {a.metric for a in preset.front.axes} | {m for m, _ in preset.front.objectives}
        assert named <= DECLARED | set(preset.mechanism.metrics), name
        assert all(isinstance(a, Axis) for a in preset.front.axes), name


def test_an_axis_naming_an_undeclared_metric_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^preset 'amnist': Pareto axis metric 'utility/fresh_acuracy' is neither in "
                                         r"core\.metric_names\.DECLARED nor in Releaser\.metrics$"):
        replace(AMNIST, front=replace(AMNIST.front, axes=(MISSPELT, AMNIST.front.axes[1])))


def test_an_undeclared_optuna_objective_is_refused() -> None:
    with pytest.raises(ValueError, match=r"Optuna objective metric 'attack/dep/accuracy'"):
        replace(AMNIST, front=replace(AMNIST.front, objectives=((FRESH_ACCURACY, "max"), ("attack/dep/accuracy", "min"))))


def test_a_metric_the_mechanism_declares_may_be_an_axis() -> None:
    class Declaring(Releaser):
        metrics: ClassVar[tuple[str, ...]] = ("utility/fresh_acuracy",)

    preset = replace(AMNIST, mechanism=Declaring, front=replace(AMNIST.front, axes=(MISSPELT, AMNIST.front.axes[1])))
    assert preset.front.axes[0] is MISSPELT


def test_an_axis_given_as_a_dict_reads_as_its_axis() -> None:
    given = {"metric": STRONGEST_ATTACK, "higher_is_better": False, "bound": 1.0, "ideal": 0.5}
    front = replace(AMNIST.front, axes=(AMNIST.front.axes[0], given))  # type: ignore[arg-type]
    assert front.axes[1] == Axis(STRONGEST_ATTACK, higher_is_better=False, bound=1.0, ideal=0.5)


def test_a_preset_file_with_a_misspelt_axis_is_one_usage_line(tmp_path: Path) -> None:
    path = tmp_path / "typo_preset.py"
    path.write_text("from dataclasses import replace\nfrom core.pareto_axis import Axis\n"
                    "from search_spaces.amnist import PRESET as A\n"
                    "PRESET = replace(A, name='typo', front=replace(A.front, axes=(Axis('utility/acc', True, 0.0, 1.0),)))\n")
    with pytest.raises(UsageError, match=r"does not import: ValueError: preset 'typo': Pareto axis metric 'utility/acc'"):
        resolve(None, None, [], str(path))


def test_a_capability_declared_without_its_method_is_refused() -> None:
    with pytest.raises(TypeError, match=r"^Claims: capability SERVE \(release_map\) does not implement release_map; "):
        class Claims(Membership):
            capabilities: ClassVar[frozenset[Capability]] = Membership.capabilities | {Capability.SERVE}


def test_a_method_of_a_capability_without_declaring_it_is_refused() -> None:
    with pytest.raises(TypeError, match=r"^Hides: capability SERVE \(release_map\) implements it without declaring it"):
        class Hides(Membership):
            def release_map(self):  # type: ignore[no-untyped-def]
                raise NotImplementedError


def test_a_plugins_raw_baselines_is_read_as_its_raw_references_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"^Old\.raw_baselines is deprecated: name it raw_references$"):
        class Old(Membership):
            capabilities: ClassVar[frozenset[Capability]] = Membership.capabilities | {Capability.RAW_REFERENCE}

            @classmethod
            def raw_baselines(cls, config: dict) -> dict[str, float]:
                return {"attack/deep/accuracy": 0.9}
    assert Old.raw_references({}) == {"attack/deep/accuracy": 0.9}


@pytest.mark.parametrize(("name", "farm", "serves", "audits", "reference"), [
    ("amnist", True, True, True, True), ("gmm", False, False, False, False),
    ("adult-membership", True, False, False, False), ("cloak-mnist", True, True, False, True),
])
def test_the_preset_offers_what_its_mechanism_declares(name: str, farm: bool, serves: bool, audits: bool,
                                                       reference: bool) -> None:
    preset = presets()[name]
    offered = (preset.checkpoint_inputs, preset.load_release, preset.audit_input, preset.raw_references)
    assert tuple(f is not None for f in offered) == (farm, serves, audits, reference)
    declared = preset.mechanism.capabilities
    assert (Capability.FARM in declared, Capability.SERVE in declared) == (farm, serves)


def test_the_command_line_is_one_typed_object_with_what_it_gives() -> None:
    options = parse_args(["amnist", "--profile", "smoke", "--set", "lam=1", "--set", "epochs=2", "--seeds", "1",
                          "--no-comparison-grids", "--no-learning-curve"])
    assert options == SweepOptions(
        preset="amnist", preset_file=None, profile="smoke", overrides=("lam=1", "epochs=2"), search="grid", samples=None,
        seeds=1, attackers=None, tracking_uri=None, experiment=None, storage="putlab_runs", gpus_per_trial=None,
        max_concurrent=None, max_failures=2, address=None, resume=None, config_schema=None, no_comparison_grids=True,
        learning_curve=False, yes=False, verbose=False,
        # --seeds 1 is given though it is the default; --search is not though it has one
        given=frozenset({"preset", "profile", "overrides", "seeds", "no_comparison_grids", "learning_curve"}))
    with pytest.raises(FrozenInstanceError):
        options.seeds = 2  # type: ignore[misc]


def test_the_old_no_baseline_flag_still_works_and_is_hidden(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_args(["amnist", "--no-baseline"]) == parse_args(["amnist", "--no-comparison-grids"])
    assert "--no-baseline is the old name of --no-comparison-grids" in capsys.readouterr().err
    assert not parse_args(["amnist"]).no_comparison_grids
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    shown = capsys.readouterr().out
    assert "--no-comparison-grids" in shown and "--no-baseline" not in shown


def test_a_resume_keeps_the_options_type_with_the_record_in_place() -> None:
    options = parse_args(["gmm", "--resume", "--set", "alpha=0.5", "--seeds", "2"])
    params = {"profile": "smoke", "search": "grid", "planned_trials": "4", "attackers": '["yeom"]'}
    recorded = resume_options.Recorded.read(params, ComparisonGrid.all(presets()["gmm"]))
    restored = resume_options.restored(options, recorded)
    assert isinstance(restored, SweepOptions) and restored.given == options.given
    assert (restored.profile, restored.overrides, restored.seeds, restored.attackers, restored.no_comparison_grids) == (
        "smoke", (), 1, "yeom", True)


def test_a_resume_keeps_the_recorded_learning_curves_and_refuses_the_contrary_flag() -> None:
    params = {"preset": "gmm", "profile": "smoke", "search": "grid", "planned_trials": "4", "attackers": '["yeom"]'}
    grids = ComparisonGrid.all(presets()["gmm"])
    off = resume_options.Recorded.read(params | {"learning_curves": "False"}, grids)
    assert resume_options.restored(parse_args(["gmm", "--resume"]), off).learning_curve is False
    with pytest.raises(UsageError, match=r"^--learning-curve contradicts the sweep's recorded learning curves off"):
        resume_options.check_given(parse_args(["gmm", "--resume", "--learning-curve"]), off, resolve("gmm", "smoke", []),
                                   ("yeom",), None)
    on = resume_options.Recorded.read(params | {"learning_curves": "True"}, grids)
    assert resume_options.restored(parse_args(["gmm", "--resume"]), on).learning_curve is True
    older = resume_options.Recorded.read(params, grids)  # a sweep from before the record: the command line decides
    assert resume_options.restored(parse_args(["gmm", "--resume", "--no-learning-curve"]), older).learning_curve is False


def test_a_preset_file_with_an_old_flat_keyword_says_where_it_went(tmp_path: Path) -> None:
    path = tmp_path / "flat_preset.py"
    path.write_text("from search_spaces import Preset\nfrom search_spaces.amnist import PRESET as A\n"
                    "PRESET = Preset(name='flat', mechanism=A.mechanism, dataset='amnist', base=A.base, "
                    "profiles=A.profiles, default_profile='quick', optuna=A.optuna, label_keys=A.label_keys, "
                    "front=A.front, farm_attackers=('yeom',))\n")
    with pytest.raises(UsageError, match=r"unexpected keyword argument 'farm_attackers' \(farm_attackers is now "
                                         r"farm=Farm\(attackers=\.\.\.\): see docs/extending\.md\)$") as caught:
        resolve(None, None, [], str(path))
    assert "\n" not in str(caught.value)

"""Trial configs: types by annotation, bounds declared once, every problem one line and all of them at once."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO
from pydantic import ValidationError

from attacks.audits.kl_leakage import unbiased_symmetric_kl
from core.config import TrialConfig
from core.config_errors import ConfigError
from trainables.cloak.config import CloakConfig
from trainables.eco_releaser.config import EcoConfig
from trainables.gmm.config import PrivatizerGmmConfig
from trainables.membership.config import MembershipConfig
from trainables.privatizer.config import PrivatizerConfig
from trainables.releaser.config import ReleaserConfig

MODELS = (ReleaserConfig, PrivatizerConfig, PrivatizerGmmConfig, CloakConfig, EcoConfig, MembershipConfig)


def problems(model: type[TrialConfig], config: dict) -> list[str]:
    """The lines ``from_dict`` refuses ``config`` with."""
    with pytest.raises(ConfigError) as refused:
        model.from_dict(config)
    assert isinstance(refused.value, ValueError) and str(refused.value) == "\n".join(refused.value.lines)
    return refused.value.lines


def test_every_problem_is_reported_at_once_one_line_each() -> None:
    assert problems(ReleaserConfig, {"alpha": -1.0, "epochs": 2.5}) == [
        "epochs: must be a whole number (got 2.5)", "alpha: must be > 0 (got -1.0)"]


def test_keyword_construction_refuses_the_same_way() -> None:
    with pytest.raises(ConfigError, match=r"^width: must be in \[1, 1024\] \(got 0\)$"):
        ReleaserConfig(width=0)


def test_types_come_from_the_annotation() -> None:
    cfg = ReleaserConfig.from_dict({"lam": 2, "epochs": 4.0, "squared_error_weight": 3})
    assert cfg.lam == 2.0 and isinstance(cfg.lam, float) and isinstance(cfg.squared_error_weight, float)
    assert cfg.epochs == 4 and isinstance(cfg.epochs, int)  # a float with no fraction is the whole number it names
    assert problems(ReleaserConfig, {"epochs": 2.5, "n_train": 1.5}) == [
        "epochs: must be a whole number (got 2.5)", "n_train: must be a whole number (got 1.5)"]
    assert problems(ReleaserConfig, {"epochs": "2", "lr": "0.1", "download": "true", "dataset": 3}) == [
        "epochs: must be a whole number (got '2')", "lr: must be a number (got '0.1')",
        "download: must be true or false (got 'true')", "dataset: must be a string (got 3)"]


def test_a_bool_is_never_a_number_and_a_number_never_a_bool() -> None:
    assert problems(PrivatizerConfig, {"algorithm": True, "alpha": False, "download": 1}) == [
        "download: must be true or false (got 1)", "alpha: must be a number (got False)",
        "algorithm: must be a whole number (got True)"]


def test_unknown_keys_are_named() -> None:
    assert problems(CloakConfig, {"mechanism": "cloak", "kill_worker_after_epoch": 2}) == [
        "mechanism: unknown cloak config key", "kill_worker_after_epoch: unknown cloak config key"]


@pytest.mark.parametrize("model, field", [(ReleaserConfig, "alpha"), (EcoConfig, "alpha"), (CloakConfig, "T")])
def test_infinity_only_where_a_field_allows_it(model: type[TrialConfig], field: str) -> None:
    assert getattr(model.from_dict({field: math.inf}), field) == math.inf
    assert problems(model, {field: math.nan}) == [f"{field}: must be a number, not NaN (got nan)"]
    assert problems(model, {field: -math.inf}) == [f"{field}: must be > 0 (got -inf)"]


def test_infinity_and_nan_are_refused_elsewhere() -> None:
    assert problems(ReleaserConfig, {"lam": math.inf, "squared_error_weight": math.nan, "epochs": math.inf}) == [
        "epochs: must be a whole number (got inf)", "lam: must be finite (got inf)",
        "squared_error_weight: must be a number, not NaN (got nan)"]
    assert problems(PrivatizerConfig, {"alpha": math.inf}) == ["alpha: must be finite (got inf)"]


def test_bounds_are_shared_and_named_in_the_message() -> None:
    for model in MODELS:
        assert problems(model, {"seed": -1, "threads": 0}) == [
            "seed: must be in [0, 2147483647] (got -1)", "threads: must be in [1, 1024] (got 0)"]
    assert problems(EcoConfig, {"epochs": 10**6, "test_fraction": 1.0}) == [
        "epochs: must be in [1, 10000] (got 1000000)", "test_fraction: must be in (0, 1) (got 1.0)"]


def test_json_schema_carries_bounds_types_and_descriptions() -> None:
    schema = ReleaserConfig.model_json_schema()
    assert schema["additionalProperties"] is False
    epochs, alpha, lr = (schema["properties"][k] for k in ("epochs", "alpha", "lr"))
    assert (epochs["type"], epochs["minimum"], epochs["maximum"]) == ("integer", 1, 10_000) and epochs["description"]
    assert alpha["exclusiveMinimum"] == 0 and "maximum" not in alpha and "α" in alpha["description"]
    assert (lr["exclusiveMinimum"], lr["maximum"]) == (0, 10)
    n_train = schema["properties"]["n_train"]["anyOf"]
    assert {"type": "null"} in n_train and {"type": "integer", "minimum": 1, "maximum": 10_000_000} in n_train
    assert schema["properties"]["attack_search"]["enum"] == ["halving", "full"]
    for model in MODELS:
        assert all(spec.get("description") for spec in model.model_json_schema()["properties"].values()), model


def test_no_dead_fields_and_a_dataset_everywhere() -> None:
    for model in MODELS:
        assert "mechanism" not in model.model_fields and "kill_worker_after_epoch" not in model.model_fields
        assert isinstance(model().dataset, str)


def test_mc_runs_cover_what_the_kl_estimator_accepts() -> None:
    """mc_runs >= p_x + 4 is exactly the estimator's n > p + 2 for the p = p_x + 1 parameters of a fit."""
    p_x = 5
    assert MembershipConfig.from_dict({"p_x": p_x, "mc_runs": p_x + 4}).mc_runs == 9
    assert problems(MembershipConfig, {"p_x": p_x, "mc_runs": p_x + 3}) == [
        "mc_runs: must be >= 9 for the corrected KL estimate of p = 6 parameters (got 8)"]
    draws = np.random.default_rng(0).normal(size=(2, p_x + 4, p_x + 1))
    assert math.isfinite(unbiased_symmetric_kl(draws[0], draws[1]))
    with pytest.raises(ValueError, match="more than p \\+ 2"):
        unbiased_symmetric_kl(draws[0, :-1], draws[1, :-1])


def test_cross_field_checks() -> None:
    assert problems(MembershipConfig, {"lam": 0.0, "n": 5, "mc_runs": 8, "p_x": 5}) == [
        "n: must be > p_x = 5 when lam = 0 (the fit is not unique) (got 5)",
        "mc_runs: must be >= 9 for the corrected KL estimate of p = 6 parameters (got 8)"]
    assert problems(CloakConfig, {"epochs": 3, "suppression_epochs": 3}) == [
        "suppression_epochs: must be in [0, epochs) = [0, 3) (got 3)"]


def test_data_root_must_be_a_folder(tmp_path: Path) -> None:
    missing, afile = tmp_path / "missing", tmp_path / "file"
    afile.write_text("x")
    assert ReleaserConfig(data_root=str(missing), download=True).download  # download creates it
    assert problems(ReleaserConfig, {"data_root": str(missing)}) == [
        f"data_root: {missing} does not exist (create it, set download=true, or leave it empty)"]
    assert problems(EcoConfig, {"data_root": str(afile)}) == [f"data_root: {afile} is not a directory"]
    assert MembershipConfig(data_root=str(tmp_path)).data_root == str(tmp_path)


def test_frozen_and_round_trips_through_its_dict() -> None:
    cfg = CloakConfig(T=math.inf, n_train=100)
    with pytest.raises(ValidationError):
        cfg.lam = 2.0  # type: ignore[misc]
    assert CloakConfig.from_dict(cfg.as_dict()) == cfg and CloakConfig.normalise(cfg.as_dict()) == cfg.as_dict()
    assert hash(cfg) == hash(CloakConfig.from_dict(cfg.as_dict()))


def test_configuration_page_is_generated_from_the_models() -> None:
    out = subprocess.run([sys.executable, "scripts/config_docs.py", "--check"], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr


def test_stored_configs_with_retired_keys_still_load() -> None:
    """A checkpoint or registered point saved before `mechanism` and the fault switch left the configs still restores."""
    from trainables.releaser.mechanism import Releaser

    stored = {**ReleaserConfig().as_dict(), "mechanism": "releaser", "kill_worker_after_epoch": -1}
    assert Releaser.typed(stored) == ReleaserConfig()
    with pytest.raises(ValueError, match="mechanism: unknown releaser config key"):
        ReleaserConfig.from_dict(stored)  # a user's new config is still checked strictly


def test_dataset_names_a_registry_entry_before_anything_loads() -> None:
    """An unknown data set is refused by the config itself; a mechanism built for one set accepts only that one."""
    (line,) = problems(ReleaserConfig, {"dataset": "celebx"})
    assert line.startswith("dataset: unknown data set 'celebx'; known: adult, amnist, celeba, cifar10")
    assert ReleaserConfig.from_dict({"dataset": "cifar10"}).dataset == "cifar10"
    assert problems(CloakConfig, {"dataset": "celeba"}) == ["dataset: must be 'mnist32' (got 'celeba')"]

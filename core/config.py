"""Trial configs as frozen pydantic models: values typed by their annotation, bounds declared once, every problem
reported at once.

A config is the flat dict Ray Tune hands a trial. :class:`TrialConfig` validates it strictly (a whole number for
an ``int`` field, any real number for a ``float`` field, never a bool or a string for a number, NaN never, infinity
only where a field allows it) and turns every problem into one line ``field: what is wrong (got value)``, all of
them in one :class:`~core.config_errors.ConfigError`. The field types and groups below are shared by every mechanism's config.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from typing_extensions import Self  # typing.Self is Python 3.11+

from core.config_errors import ConfigError, int_fields

INT_LIMIT = 10**9  # a count with no tighter bound: at most this many (sizes, draws, records)
FLOAT_LIMIT = 1e9  # a weight or scale with no tighter bound: at most this


def not_nan(value: Any) -> Any:
    """Refuse NaN on a field that allows infinity (its bounds alone would call NaN out of range)."""
    if isinstance(value, float) and math.isnan(value):
        raise ValueError("must be a number, not NaN")
    return value


Seed = Annotated[int, Field(ge=0, le=2**31 - 1, description="Random seed of the trial (data order, initialisation, noise).")]
Threads = Annotated[int, Field(ge=1, le=1_024, description="Torch threads of the trial (the driver sets it from "
                                                                 "the profile's CPUs).")]
Epochs = Annotated[int, Field(ge=1, le=10_000, description="Training epochs of the game.")]
PretrainEpochs = Annotated[int, Field(ge=0, le=10_000)]
BatchSize = Annotated[int, Field(ge=1, le=65_536, description="Mini-batch size.")]
LearningRate = Annotated[float, Field(gt=0, le=10)]
Lr = Annotated[LearningRate, Field(description="Adam step of the networks (and of the farm's attackers).")]
CheckpointEvery = Annotated[int, Field(ge=1, le=1_000_000, description="Checkpoint every this many epochs (and the last).")]
Width = Annotated[int, Field(ge=1, le=1_024)]
Hidden = Annotated[int, Field(ge=1, le=4_096)]
Layers = Annotated[int, Field(ge=1, le=64)]
Steps = Annotated[int, Field(ge=1, le=1_000_000)]
InnerSteps = Annotated[int, Field(ge=1, le=1_000)]
Samples = Annotated[int, Field(ge=100, le=10_000_000)]
Count = Annotated[int, Field(ge=1, le=INT_LIMIT)]
Weight = Annotated[float, Field(ge=0, le=1e6)]
Penalty = Annotated[float, Field(ge=0, le=FLOAT_LIMIT)]  # a finite λ
Unit = Annotated[float, Field(ge=0, le=1)]  # a weight or probability in [0, 1]
PositiveOrInf = Annotated[float, Field(gt=0, allow_inf_nan=True), BeforeValidator(not_nan)]  # > 0, inf meaningful
Alpha = Annotated[PositiveOrInf, Field(description="Order α of the α-mutual information the releaser bounds; inf is "
                                       "the max-divergence end of the range.")]
AdvSteps = Annotated[int, Field(ge=1, le=1_000, description="Adversary updates k per releaser update.")]
PrivacyWeight = Annotated[float, Field(ge=0, le=FLOAT_LIMIT, description="Weight λ of the α-MI privacy term against "
                                                                        "the distortion.")]
NoiseChannels = Annotated[int, Field(ge=0, le=256, description="Uniform noise channels joined at the 7×7 "
                                                                       "bottleneck (0: deterministic).")]
TrainSize = Annotated[int, Field(ge=1, le=10_000_000)]


def as_tuple(value: Any) -> Any:
    """A list (as JSON, YAML and MLflow params give it) as the tuple a frozen config holds."""
    return tuple(value) if isinstance(value, list) else value


def registered_dataset(name: str) -> str:
    """A data-set name the registry knows (core/data/registry.py), else its one-line error listing the known ones."""
    from core.data.registry import get_dataset  # core.data is the same layer; imported here to keep configs light

    get_dataset(name)
    return name


Dataset = Annotated[str, AfterValidator(registered_dataset),
                    Field(description="Registry name of the trial's data set (docs/data.md); the image mechanisms take "
                                      "any registered image set with classes for S and U.")]


# Keys configs no longer have; configs stored before they went (checkpoints, registered points) still load.
RETIRED_KEYS = frozenset({"mechanism", "kill_worker_after_epoch"})


def without_retired(config: dict[str, Any], model: type[TrialConfig] | None = None) -> dict[str, Any]:
    """A stored config without :data:`RETIRED_KEYS` and ``model``'s own ``retired_keys`` (a user's new config is
    validated with them refused)."""
    retired = RETIRED_KEYS | (model.retired_keys if model is not None else frozenset())
    return {k: v for k, v in config.items() if k not in retired}


class TrialConfig(BaseModel):
    """Base of every trial config: frozen, unknown keys refused, strict types, cross-field checks in :meth:`problems`."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid", allow_inf_nan=False)
    kind: ClassVar[str] = "trial"  # names the config in messages ("unknown releaser config key")
    retired_keys: ClassVar[frozenset[str]] = frozenset()  # this kind's keys that went: stored configs still load

    seed: Seed = 0
    threads: Threads = 1

    def __init__(self, **values: Any) -> None:
        """Keyword construction, with the same one-line-per-problem :class:`ConfigError` as :meth:`from_dict`."""
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise ConfigError(type(self), exc) from None

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> Self:
        """Build from a Tune config; ConfigError (a ValueError) with one line per problem."""
        try:
            return cls.model_validate(config)
        except ValidationError as exc:
            raise ConfigError(cls, exc) from None

    @classmethod
    def of(cls, config: TrialConfig) -> Self:
        """This group's settings in a validated config: the config itself when it has the group, else the group's
        defaults with the config's seed (an attacker of a mechanism whose config has no budget gets the default one)."""
        if isinstance(config, cls):
            return config
        return cls(seed=config.seed, threads=config.threads)

    @classmethod
    def normalise(cls, config: dict[str, Any]) -> dict[str, Any]:
        """Validate ``config`` and return it with every value in its field's type (2 -> 2.0 for a float)."""
        return cls.from_dict(config).as_dict()

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (for MLflow params and checkpoints)."""
        return self.model_dump()

    def problems(self) -> Iterator[str]:
        """Lines from :func:`problem` for checks that read several fields (each group extends this)."""
        return iter(())

    @model_validator(mode="before")
    @classmethod
    def whole_floats(cls, data: Any) -> Any:
        """A float with no fraction (2.0, 1e3) is the whole number it names for an ``int`` field (Tune and JSON write them)."""
        if not isinstance(data, dict):
            return data
        ints = int_fields(cls)
        return {k: int(v) if k in ints and isinstance(v, float) and math.isfinite(v) and v.is_integer() else v
                for k, v in data.items()}

    @model_validator(mode="after")
    def cross_checks(self) -> Self:
        """Run :meth:`problems` once every field is valid on its own; all lines raised together."""
        lines = list(self.problems())
        if lines:
            raise ValueError("\n".join(lines))
        return self


class LocalData(TrialConfig):
    """A data folder: set, it must be a folder (missing only where the config downloads into it)."""

    data_root: str = Field("", description="Data folder; empty = the default location.")

    def problems(self) -> Iterator[str]:
        """``data_root`` is a folder, or missing where ``download`` fills it."""
        yield from super().problems()
        if not self.data_root:
            return
        path = Path(self.data_root).expanduser()
        if path.exists() and not path.is_dir():
            yield f"data_root: {self.data_root} is not a directory"
        elif not path.exists() and not getattr(self, "download", False):
            yield f"data_root: {self.data_root} does not exist (create it, set download=true, or leave it empty)"


class ImageData(LocalData):
    """Subsets and download of an image data set (AMNIST, MNIST)."""

    n_train: Annotated[TrainSize | None, Field(description="Training images used (None: all).")] = None
    n_test: Annotated[TrainSize | None, Field(description="Test images used (None: all).")] = None
    download: bool = Field(False, description="Download the data into data_root when missing.")
    samples_in_figure: int = Field(8, ge=0, le=64, description="Images shown in each checkpoint's figure.")


class Training(TrialConfig):
    """The game's training schedule: epochs, batch size and the learning rate."""

    epochs: Epochs = 3
    batch_size: BatchSize = 128
    lr: Lr = 1e-3


class Checkpointing(TrialConfig):
    """How often a trial writes a checkpoint the attack farm then attacks."""

    checkpoint_every: CheckpointEvery = 1


class AttackBudget(TrialConfig):
    """How hard each learned attacker is trained and tuned (docs/attacks.md#the-tuned-family-of-each-attacker): the
    family of configurations (widths × learning rates × augmentation), its epoch cap, patience and search, with the
    trial's seed. One class: a trial config's group of ``attack_*`` keys, and what every learned attacker
    (core/classifier.py) is given, the validated config itself."""

    attack_epochs: int = Field(60, ge=1, le=10_000, description="Each learned attacker's epoch cap; early stopping "
                                                                 "usually ends it sooner.")
    attack_patience: int = Field(10, ge=1, le=10_000, description="Epochs without a validation gain before an "
                                                                   "attacker stops.")
    attack_search: Literal["halving", "full"] = Field("halving", description="halving: successive halving over the "
                                                      "attacker configurations; full: every one trains to convergence.")
    attack_rung_epochs: int = Field(4, ge=1, le=10_000, description="Epochs of each rung of the halving search.")
    attack_lrs: Annotated[tuple[Lr, ...], BeforeValidator(as_tuple), Field(
        min_length=1, max_length=8, description="The Adam steps the attacker family tries (each with every width and "
                                                "augmentation setting).")] = (1e-3, 3e-4)
    attack_width_factors: Annotated[tuple[Annotated[float, Field(gt=0, le=64)], ...], BeforeValidator(as_tuple), Field(
        min_length=1, max_length=8, description="The attacker family's capacities, as multiples of each attacker's base "
                                                "width (e.g. SmallCNN's 16 channels).")] = (1.0, 2.0)
    attack_augment: Annotated[tuple[bool, ...], BeforeValidator(as_tuple), Field(
        min_length=1, max_length=2, description="Whether the family's members train with data augmentation (random "
                                                "shifts for images, feature jitter otherwise): each setting listed.")] = (
        False, True)
    attack_batch_size: BatchSize = Field(64, description="Mini-batch size of the learned attackers.")
    attack_val_fraction: float = Field(0.2, gt=0, lt=1, description="Share of an attacker's training records held "
                                                                    "out (seeded) to choose and early-stop on.")

    def budget_key(self) -> tuple[tuple[str, Any], ...]:
        """(name, value) of every setting a tuned fit depends on (the budget and the seed, not the rest of the trial
        config): equal keys, equal fits (core/classifier.py stores fits under it)."""
        return tuple((name, getattr(self, name)) for name in ("seed", *BUDGET_KEYS))


class AttackerRecords(TrialConfig):
    """How many records' releases the image attackers (and the data user's classifiers) train on (docs/attacks.md)."""

    attack_records: Annotated[TrainSize | None, Field(
        description="Records whose releases the learned attackers and the data user's classifiers train on: the game's "
                    "training split, then training records the game never saw (a release map is a forward pass, so a "
                    "real attacker releases all it holds); None: the game's training split only.")] = None

    def problems(self) -> Iterator[str]:
        """At least the game's own training split, where the config fixes its size."""
        yield from super().problems()
        n_train = getattr(self, "n_train", None)
        if self.attack_records is not None and n_train is not None and self.attack_records < n_train:
            yield (f"attack_records: must be at least n_train ({n_train}), the records the game trained on "
                   f"(got {self.attack_records})")


class MembershipAttacks(TrialConfig):
    """Settings of the farm's membership-inference attacks (docs/membership.md)."""

    mia_references: int = Field(2, ge=1, le=1_000, description="Reference models per network for the farm's RMIA and LiRA.")
    rmia_offline_a: Unit = Field(0.3, description="RMIA's offline correction a.")


class MembershipCanaries(TrialConfig):
    """Canaries planted to audit membership on mislabelled records (docs/membership.md#canaries): a group of the image
    mechanisms whose networks the farm attacks (the releaser and the privatizer)."""

    canaries: int = Field(0, ge=0, le=100_000, description="Records planted per trial, and as many held out: each "
                                                           "relabelled to another class of S and of U, drawn from "
                                                           "training records outside n_train; the membership attackers "
                                                           "also report their metrics on these 2N records alone.")


BUDGET_KEYS = tuple(name for name in AttackBudget.model_fields if name not in TrialConfig.model_fields)



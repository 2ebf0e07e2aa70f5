"""The one interface every privacy mechanism implements; the Tune loop, the attack farm and serving drive it.

A mechanism is a game played epoch by epoch: :meth:`Mechanism.setup` loads its data and builds its networks,
:meth:`~Mechanism.pretrain` pretrains a fresh run, each :meth:`~Mechanism.train_epoch` plays one epoch and
:meth:`~Mechanism.evaluate` measures the result (running its own fresh attackers when ``attack`` is true, on checkpoint
epochs only). :meth:`~Mechanism.state` / :meth:`~Mechanism.load_state` are all a checkpoint holds beside its epoch and
config, so one loop (:func:`trainables.shared.tune_loop.run_trial`) reports, checkpoints and resumes every mechanism.

Mechanisms that are not epoch games fit the same shape: the Gaussian-mixture privatizer's "epochs" are its blocks of
``report_every`` filter steps (one report each, as its information-plane trajectory), and a membership point is one
epoch (the model is fitted in ``train_epoch`` and measured in ``evaluate``). A mechanism with nothing to resume sets
``checkpoints = False``.

A minimal mechanism::

    class Identity(Mechanism[IdentityConfig]):
        name = "identity"
        config_class = IdentityConfig

        def build(self) -> None:
            self.scale = torch.nn.Parameter(torch.ones(1, device=self.device))

        def train_epoch(self) -> dict[str, float]:
            return {"train/loss": 0.0}

        def evaluate(self, attack: bool) -> dict[str, float]:
            return {"utility/accuracy": 1.0}

        def state(self) -> dict:
            return {"scale": self.scale.detach()}

        def load_state(self, state: dict) -> None:
            self.scale.data.copy_(state["scale"])

        @classmethod
        def data_counts(cls, config: dict) -> dict[str, int]:
            return {"samples": cls.typed(config).n}
"""
from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

import torch

from core.config import TrialConfig, without_retired
from core.messages import first_line

if TYPE_CHECKING:
    from attacks.base import AttackInput, CheckpointInputs
    from trainables.shared.release_map import ReleaseMap

C = TypeVar("C", bound=TrialConfig)  # the mechanism's typed trial config
M = TypeVar("M", bound="Mechanism")

STATE_FILE = "state.pt"  # every checkpoint: {"models": Mechanism.state(), "epoch": epochs done, "config": the config}
# ... and beside it {"epoch": epochs done} as JSON: the step a checkpoint belongs to, read without loading its state
# (Tune's result.json can lose the lines of a trial's first worker when the trial is restored elsewhere)
EPOCH_FILE = "epoch.json"


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be read back (corrupt, truncated or from another config)."""


def pick_device() -> torch.device:
    """CUDA when Ray gave this trial a GPU (or one is visible), else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def read_checkpoint(directory: str | Path) -> tuple[dict, int]:
    """The mechanism state and epoch saved in ``directory``, or a one-line :class:`CheckpointError`."""
    path = Path(directory) / STATE_FILE
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
        return blob["models"], int(blob["epoch"])
    except Exception as exc:  # any failure to read back is the same problem for the user
        raise CheckpointError(first_line(f"cannot restore checkpoint {path}: {type(exc).__name__}: {exc}")) from exc


class Capability(Enum):
    """What a mechanism gives beyond its game, each through the method named by its value: the driver, the attack farm
    and serving read a mechanism's declared :attr:`Mechanism.capabilities`, never its methods."""

    FARM = "farm_inputs"  # the attack farm attacks its checkpoints
    SERVE = "release_map"  # its release can be served
    AUDIT = "audit_input"  # a served point of it can be audited black-box
    RAW_REFERENCE = "raw_references"  # raw-data reference points, logged on the sweep's parent run


class Mechanism(ABC, Generic[C]):
    """One privacy mechanism: its game (setup, pretrain, epochs, evaluation), its checkpoint state, and what the
    attack farm, the release service and the sweep driver need from it."""

    name: ClassVar[str]  # the mechanism's label on runs, operating points and served maps, e.g. "releaser"
    config_class: ClassVar[type[TrialConfig]]  # the class of C: from_dict(dict) -> C, normalise(dict) -> dict, as_dict()
    trainable_name: ClassVar[str]  # the Tune trainable's name (it names the trials' directories)
    figures: ClassVar[tuple[str, ...]] = ()  # PNGs write_figures puts next to each checkpoint
    checkpoints: ClassVar[bool] = True  # False: never checkpointed, so never resumed (nothing to resume from)
    # registry attackers evaluate(attack=True) fits itself at every checkpoint, logged under their own names: the farm
    # leaves them out (a second fit on another release draw would overwrite the trial's reading at the same step)
    trial_attackers: ClassVar[frozenset[str]] = frozenset()
    # metrics it reports that a preset may put on a Pareto axis or an Optuna objective beyond core.metric_names.DECLARED
    metrics: ClassVar[tuple[str, ...]] = ()
    capabilities: ClassVar[frozenset[Capability]] = frozenset()  # each one's method it implements (checked when defined)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse a class whose :attr:`capabilities` and implemented methods differ (a one-line TypeError); a plug-in's
        ``raw_baselines`` (the name before ``raw_references``) is read as ``raw_references``, with a deprecation warning."""
        super().__init_subclass__(**kwargs)
        if "raw_baselines" in cls.__dict__ and "raw_references" not in cls.__dict__:
            warnings.warn(f"{cls.__name__}.raw_baselines is deprecated: name it raw_references", DeprecationWarning,
                          stacklevel=2)
            cls.raw_references = cls.__dict__["raw_baselines"]  # type: ignore[method-assign]
        for capability in Capability:
            implemented, declared = _implements(cls, capability.value), capability in cls.capabilities
            if implemented != declared:
                missing = f"does not implement {capability.value}" if declared else "implements it without declaring it"
                raise TypeError(f"{cls.__name__}: capability {capability.name} ({capability.value}) {missing}; "
                                f"a mechanism declares its capabilities in Mechanism.capabilities")

    def __init__(self, cfg: C, device: torch.device) -> None:
        self.cfg = cfg
        self.device = device
        self.epoch = 0  # epochs done: set by the loop, or by restore() from a checkpoint
        self.checkpoint_dir: str | None = None  # where the loaded checkpoint lies (the farm caches references there)
        self.pretrain_metrics: dict[str, float] = {}  # what pretrain() reports, logged with the first epoch

    # --- the game -------------------------------------------------------------------------------------------------
    def setup(self) -> None:
        """Load the data and build the networks (default: networks only)."""
        self.build()

    @abstractmethod
    def build(self) -> None:
        """Fresh networks and optimisers on ``self.device``, seeded by the config (all serving needs)."""

    def pretrain(self) -> None:
        """Pretrain a fresh run's players before the game (not called when resuming)."""

    def begin(self, start: int) -> None:
        """Called once before epoch ``start + 1`` of this run (0: fresh, after pretrain; else after load_state)."""

    @property
    def epochs(self) -> int:
        """How many epochs the run has in all."""
        epochs = getattr(self.cfg, "epochs", None)
        if epochs is None:
            raise NotImplementedError(f"{type(self).__name__}'s config has no epochs: the mechanism must override epochs")
        return int(epochs)

    def checkpoint_epoch(self, epoch: int) -> bool:
        """Whether epoch ``epoch`` (1-based) checkpoints and attacks: every ``checkpoint_every``-th and the last."""
        every = int(getattr(self.cfg, "checkpoint_every", 0))
        return epoch == self.epochs or (every > 0 and epoch % every == 0)

    @abstractmethod
    def train_epoch(self) -> dict[str, float]:
        """Play one epoch; the mean training losses as ``train/...`` metrics."""

    @abstractmethod
    def evaluate(self, attack: bool) -> dict[str, float]:
        """Utility and leakage after the epoch; with ``attack``, also the mechanism's own fresh attackers."""

    # --- checkpoints ----------------------------------------------------------------------------------------------
    @abstractmethod
    def state(self) -> dict:
        """Everything needed to resume (tensors and plain values: saved with torch.save, read with weights_only)."""

    @abstractmethod
    def load_state(self, state: dict) -> None:
        """Restore from :meth:`state`."""

    def load_checkpoint(self, state: dict, epoch: int, source: str | Path) -> None:
        """:meth:`load_state` of a checkpoint read from ``source`` at ``epoch`` (a one-line CheckpointError if unfit)."""
        try:
            self.load_state(state)
        except Exception as exc:  # a state of another config or mechanism: the same problem for the user
            raise CheckpointError(first_line(f"cannot restore checkpoint {Path(source) / STATE_FILE}: "
                                             f"{type(exc).__name__}: {exc}")) from exc
        self.epoch, self.checkpoint_dir = epoch, str(source)

    def write_figures(self, directory: Path, epoch: int) -> None:
        """Write :attr:`figures` into the checkpoint ``directory`` of epoch ``epoch`` (default: none)."""

    # --- the farm, serving and the driver -------------------------------------------------------------------------
    def farm_inputs(self) -> CheckpointInputs:
        """What the attack farm attacks in this (restored) checkpoint: released splits and trained networks."""
        raise NotImplementedError(f"the {self.name} mechanism gives the attack farm nothing to attack")

    def release_map(self) -> ReleaseMap:
        """This (restored) mechanism's release as a served map."""
        raise NotImplementedError(f"the {self.name} mechanism has no release to serve")

    @classmethod
    def audit_input(cls, config: dict, records: int) -> AttackInput:
        """Unreleased records an outside attacker holds, for a black-box audit of the served map: ``records`` records
        the game never trained on to fit attackers on, and the test split to score them on (release both, then attack)."""
        raise NotImplementedError(f"the {cls.name} mechanism names no records to audit its served release with")

    @classmethod
    def raw_references(cls, config: dict) -> dict[str, float]:
        """Reference points on unreleased data, logged on the sweep's parent run (default: none)."""
        return {}

    @classmethod
    @abstractmethod
    def data_counts(cls, config: dict) -> dict[str, int]:
        """Sizes of the data a trial with this config uses; raises early (ValueError) when there is none."""

    # --- construction ---------------------------------------------------------------------------------------------
    @classmethod
    def typed(cls, config: dict) -> C:
        """The config dict (as a trial, the farm or serving received it: stored configs may carry retired keys) as
        this mechanism's typed config (a one-line ValueError on bad values)."""
        # config_class is C's class (a ClassVar cannot name the type variable)
        return cast(C, cls.config_class.from_dict(without_retired(config, cls.config_class)))

    @classmethod
    def create(cls: type[M], config: dict, device: torch.device | None = None, threads: bool = True) -> M:
        """A mechanism for ``config`` on ``device`` (default: :func:`pick_device`); with ``threads``, torch's threads
        are set from the config (a trial or farm worker owns its process; a server does not)."""
        cfg = cls.typed(config)
        if threads:
            torch.set_num_threads(cfg.threads)
        return cls(cfg, device or pick_device())

    @classmethod
    def restore(cls: type[M], config: dict, checkpoint_dir: str, device: torch.device | None = None,
                data: bool = True) -> M:
        """The mechanism saved in ``checkpoint_dir`` (set up with its data, or only built when ``data`` is false)."""
        mechanism = cls.create(config, device, threads=data)
        if data:
            mechanism.setup()
        else:
            mechanism.build()
        mechanism.load_checkpoint(*read_checkpoint(checkpoint_dir), checkpoint_dir)
        return mechanism

    @classmethod
    def checkpoint_inputs(cls, config: dict, checkpoint_dir: str) -> CheckpointInputs:
        """The farm's entry point: :meth:`farm_inputs` of the mechanism restored from ``checkpoint_dir``, with the
        validated config its attackers are built from."""
        mechanism = cls.restore(config, checkpoint_dir)
        return replace(mechanism.farm_inputs(), config=mechanism.cfg)

    @classmethod
    def load_release(cls, config: dict, checkpoint_dir: str) -> ReleaseMap:
        """Serving's entry point: :meth:`release_map` of the networks restored (on CPU, without data)."""
        return cls.restore(config, checkpoint_dir, torch.device("cpu"), data=False).release_map()

    @classmethod
    def validate(cls, config: dict) -> dict[str, Any]:
        """The driver's check of one grid point: the config with typed values, or a one-line ValueError."""
        return cls.config_class.normalise(config)


def _implements(cls: type[Mechanism], method: str) -> bool:
    """Whether ``cls`` has its own ``method`` rather than the interface's default."""
    def plain(owner: type) -> Any:
        found = getattr(owner, method)
        return getattr(found, "__func__", found)

    return plain(cls) is not plain(Mechanism)

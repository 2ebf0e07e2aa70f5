"""Membership leakage of a model (ridge regression, logistic, DP-SGD logistic, or the tanh network) on Adult as a
Mechanism (docs/mechanisms.md#membership-models).

One point = one configuration (n, λ, p_x, σ, model): PCA Adult to p_x features, train on n members drawn from the
training file, then measure utility (balanced test accuracy and test loss), Yeom's loss-threshold attack (members vs
as many held-out non-members) and the KL leakage ρ_KL as Farokhi & Kaafar define it: per record, Monte Carlo over
random training sets drawn from the pool (the training file) with and without it. A point reports once; its
checkpoint is the model, for the farm's RMIA and LiRA. Worker-side code: never imports ``platform.*``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np
import torch

from attacks.attackers.membership import YeomAttacker
from attacks.audits.kl_leakage import KlLeakage, unbiased_symmetric_kl
from attacks.base import AttackInput, CheckpointInputs, MembershipTarget, ReferenceData
from core.data import get_dataset
from core.data.adult_files import AdultData, pca, project
from core.data.sets.adult import adult_records
from core.metric_names import UTILITY_ACCURACY
from core.metrics import balanced_accuracy
from core.reference_models import reference_cache_dir
from trainables.membership import canary_audit, models
from trainables.membership.config import MembershipConfig
from trainables.membership.models import ModelSpec, PointRecipe
from trainables.shared.mechanism import Capability, Mechanism


def load_records(dataset: str, data_root: str) -> AdultData:
    """A config's data set from the registry: Adult's encoded files, every column (the models read sex too)."""
    return adult_records(get_dataset(dataset).load(data_root))


@lru_cache(maxsize=4)
def _adult_with_axes(dataset: str, data_root: str) -> tuple[AdultData, np.ndarray, np.ndarray]:
    """Adult and all its training-file principal axes, once per process (the SVD dominates a cheap point)."""
    data = load_records(dataset, data_root)
    mean, components = pca(data.train_x, data.train_x.shape[1])
    return data, mean, components


def member_split(cfg: MembershipConfig, pool: int) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint member and non-member row indices into the training file, drawn by the config's seed."""
    if 2 * cfg.n > pool:
        raise ValueError(f"n={cfg.n} members plus as many non-members exceed the {pool} Adult training rows")
    order = np.random.default_rng(cfg.seed).permutation(pool)
    return order[:cfg.n], order[cfg.n:2 * cfg.n]


@dataclass(frozen=True)
class PointData:
    """A point's PCA-projected Adult rows, its disjoint member / non-member indices into the training file, and the
    test rows the probes KL view reads."""

    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    members: np.ndarray
    nonmembers: np.ndarray
    probe_x: np.ndarray


def point_data(cfg: MembershipConfig) -> PointData:
    """Project Adult to the config's p_x principal axes and draw its members and non-members."""
    data, mean, axes = _adult_with_axes(cfg.dataset, cfg.data_root)
    if cfg.p_x > axes.shape[0]:
        raise ValueError(f"p_x={cfg.p_x} exceeds the {axes.shape[0]} Adult features")
    components = axes[:cfg.p_x]
    train_x, test_x = project(data.train_x, mean, components), project(data.test_x, mean, components)
    members, nonmembers = member_split(cfg, len(train_x))
    probes = np.random.default_rng([cfg.seed, 2]).choice(len(test_x), size=min(cfg.probes, len(test_x)), replace=False)
    return PointData(train_x, data.train_y, test_x, data.test_y, members, nonmembers, test_x[probes])


def fit_point(cfg: MembershipConfig, x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The config's model trained on (a stack of) training sets, with its output noise drawn from ``rng``."""
    return models.fit(ModelSpec.of(cfg), x, y, rng)


def kl_view(cfg: MembershipConfig, theta: np.ndarray, probe_x: np.ndarray) -> np.ndarray:
    """What ρ_KL compares for a stack of models θ (runs, P): θ itself, or the outputs on the probe rows (runs, probes)."""
    return theta if cfg.kl_view == "parameters" else models.scores(ModelSpec.of(cfg), theta, probe_x)


def record_leakage(cfg: MembershipConfig, x: np.ndarray, y: np.ndarray, record: int, rng: np.random.Generator,
                   probe_x: np.ndarray | None = None) -> float:
    """ρ_KL of pool row ``record``: ``mc_runs`` random n-row training sets from the pool with it, as many without.

    A set with the record is the record plus n − 1 other pool rows; a set without is n other pool rows; all drawn
    independently (the unbiased estimator needs independent samples of p1 and p0). ``probe_x``: the probes view's rows.
    """
    others = len(x) - 1

    def draw(size: int) -> np.ndarray:
        rows = np.stack([rng.choice(others, size=size, replace=False) for _ in range(cfg.mc_runs)])
        return rows + (rows >= record)  # skip the record itself

    with_rows = np.concatenate([np.full((cfg.mc_runs, 1), record), draw(cfg.n - 1)], axis=1)
    without_rows = draw(cfg.n)
    probes = np.zeros((0, x.shape[1])) if probe_x is None else probe_x
    return unbiased_symmetric_kl(kl_view(cfg, fit_point(cfg, x[with_rows], y[with_rows], rng), probes),
                                 kl_view(cfg, fit_point(cfg, x[without_rows], y[without_rows], rng), probes))


def kl_leakage(cfg: MembershipConfig, x: np.ndarray, y: np.ndarray, probe_x: np.ndarray | None = None) -> KlLeakage:
    """ρ_KL averaged over ``kl_records`` pool rows drawn by the seed (the paper's expectation over records)."""
    rng = np.random.default_rng([cfg.seed, 1])
    records = rng.choice(len(x), size=cfg.kl_records, replace=False)
    return KlLeakage.from_records(np.array([record_leakage(cfg, x, y, int(r), rng, probe_x) for r in records]),
                                  cfg.mc_runs)


def abs_advantage(metrics: dict[str, float]) -> dict[str, float]:
    """|advantage| with its 95 % interval, the image of the signed one's under |·| (the front's privacy axis)."""
    value, low, high = metrics["advantage"], metrics["advantage/ci_low"], metrics["advantage/ci_high"]
    ends = sorted((abs(low), abs(high)))
    return {"advantage_abs": abs(value), "advantage_abs/ci_low": 0.0 if low <= 0 <= high else ends[0],
            "advantage_abs/ci_high": ends[1]}


class Membership(Mechanism[MembershipConfig]):
    """One point (n, λ, p_x, σ, model) on Adult: not an epoch game, so one epoch fits the model
    (:meth:`train_epoch`) and :meth:`evaluate` measures it; its checkpoint is the model θ, for the farm."""
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.FARM})

    name = "membership"
    config_class = MembershipConfig
    trainable_name = "train_membership"

    @property
    def epochs(self) -> int:
        return 1

    def build(self) -> None:
        """No model until it is fitted (θ comes from the training set or a checkpoint)."""
        self.theta: np.ndarray | None = None
        self.privacy: dict[str, float] = {}

    def setup(self) -> None:
        """The point's PCA-projected Adult rows and its members / non-members."""
        self.build()
        self.data = point_data(self.cfg)

    def train_epoch(self) -> dict[str, float]:
        """Fit the model on the members, its output noise (and DP-SGD's lots and noise) drawn from the seed; DP-SGD's
        accountant's ε at δ, its noise multiplier and, with ``audit_canaries``, the one-run audit's ε lower bound
        (trainables.membership.canary_audit) become ``leakage/dp/*`` metrics."""
        d, spec, rng = self.data, ModelSpec.of(self.cfg), np.random.default_rng(self.cfg.seed)
        x, y = d.train_x[d.members], d.train_y[d.members]
        if spec.model != "dp_logistic":
            self.theta = models.fit(spec, x, y, rng)
            return {}
        theta, (trained,) = models.fit_dp(spec, x[None], y[None], rng)
        self.theta = theta[0]
        self.privacy = {"leakage/dp/noise_multiplier": trained.noise_multiplier}
        if np.isfinite(trained.epsilon):
            self.privacy |= {"leakage/dp/epsilon": trained.epsilon, "leakage/dp/delta": self.cfg.delta}
        if self.cfg.audit_canaries:
            t0 = time.perf_counter()
            found = canary_audit.audit(x, y, spec.dp, self.theta, self.cfg.audit_canaries, self.cfg.audit_guess_share,
                                self.cfg.seed)
            self.privacy |= found.logged() | {"time/dp_audit_s": time.perf_counter() - t0}
        return {}

    def evaluate(self, attack: bool) -> dict[str, float]:
        """Utility (balanced test accuracy, test loss), Yeom's loss-threshold attack, the KL leakage ρ_KL (unless
        ``kl_records`` = 0) and, for DP-SGD, the accountant's ε and the audit's lower bound."""
        cfg, d, theta, spec = self.cfg, self.data, self.theta, ModelSpec.of(self.cfg)
        assert theta is not None  # fitted by train_epoch or restored by load_state before any evaluation
        x, y = d.train_x[d.members], d.train_y[d.members]
        train_losses = models.losses(spec, theta, x, y)
        metrics = {
            UTILITY_ACCURACY: balanced_accuracy(torch.from_numpy(models.predict(spec, theta, d.test_x)),
                                                  torch.tensor(d.test_y), 2),
            "utility/test_loss": float(np.mean(models.losses(spec, theta, d.test_x, d.test_y))),
            "train/accuracy": float(np.mean(models.predict(spec, theta, x) == y)),
            "train/loss": float(np.mean(train_losses)),
        } | self.privacy
        result = YeomAttacker(seed=cfg.seed, figure=False).run_on_losses(
            torch.from_numpy(train_losses),
            torch.from_numpy(models.losses(spec, theta, d.train_x[d.nonmembers], d.train_y[d.nonmembers])),
            target=cfg.model,
        )
        yeom = result.metrics | abs_advantage(result.metrics)
        metrics.update({f"attack/yeom/{k}": v for k, v in yeom.items() if k.split("/")[0] in (
            "advantage", "advantage_abs", "auc", "advantage_max", "tpr_at_1pct_fpr", "tpr_at_1pct_fpr_measurable")})
        if cfg.kl_records:
            metrics.update(kl_leakage(cfg, d.train_x, d.train_y, d.probe_x).logged())
        return metrics

    def state(self) -> dict:
        return {"theta": torch.from_numpy(self.theta)}

    def load_state(self, state: dict) -> None:
        self.theta = state["theta"].numpy()

    def farm_inputs(self) -> CheckpointInputs:
        """The model as a network, its members and non-members, and a population for references.

        The population is every training-file row that is neither a member nor an audited non-member.
        """
        cfg, d = self.cfg, self.data
        rest = np.ones(len(d.train_x), dtype=bool)
        rest[d.members] = rest[d.nonmembers] = False

        def rows(index: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
            return torch.from_numpy(d.train_x[index]), torch.from_numpy(d.train_y[index])

        spec = ModelSpec.of(cfg)
        assert self.checkpoint_dir is not None  # the farm restores its mechanisms from a checkpoint
        assert self.theta is not None  # restored with the checkpoint
        reference = ReferenceData(PointRecipe(spec), *rows(np.flatnonzero(rest)),
                                  cache_dir=reference_cache_dir(self.checkpoint_dir, per_checkpoint=False))
        target = MembershipTarget(cfg.model, models.network(spec, self.theta), *rows(d.members), *rows(d.nonmembers),
                                  reference)
        empty = torch.zeros(0)
        return CheckpointInputs(AttackInput(empty, empty, empty, empty, num_classes=2), (target,))

    @classmethod
    def data_counts(cls, config: dict) -> dict[str, int]:
        """Adult row counts and the member / non-member sizes of this config (raises early if no data or too large n)."""
        cfg = cls.typed(config)
        data = load_records(cfg.dataset, cfg.data_root)
        member_split(cfg, len(data.train_x))
        return {"adult_train": len(data.train_x), "adult_test": len(data.test_x), "adult_dropped": data.n_dropped,
                "members": cfg.n, "nonmembers": cfg.n}


def evaluate_model(cfg: MembershipConfig) -> tuple[dict[str, float], np.ndarray]:
    """Train one model and measure it as a trial does: the metrics and the model's parameters θ = [w, b]."""
    point = Membership(cfg, torch.device("cpu"))
    point.setup()
    point.train_epoch()
    metrics = point.evaluate(attack=True)
    assert point.theta is not None  # fitted by train_epoch
    return metrics, point.theta


def evaluate_point(cfg: MembershipConfig) -> dict[str, float]:
    """:func:`evaluate_model`'s metrics (metric name -> value)."""
    return evaluate_model(cfg)[0]

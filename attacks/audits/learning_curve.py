"""Is the attacker still learning? Its accuracy refitted on 25 and 50 % of its training records, beside the farm's own
reading at 100 %, and on 200 % where the data set holds that many records outside its test split, each refit with the
configuration the farm's own search chose (docs/attacks.md#is-the-attacker-still-learning).

An attacker whose accuracy still rises with more records bounds leakage from below a second way: more data would
likely make it stronger. ``learning_curve`` refits one attacker on nested, stratified parts of the released training
split (the test split untouched) and scores each once, and fits where the curve is heading
(:func:`core.saturation.saturation`); ``run_curve`` draws it on a stored checkpoint and ``run_lane``, the Ray task the
driver submits, draws a lane of them in turn (worker code: the driver's ``platform`` package is not importable in a
Ray worker, so the task lives here).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
from sklearn.model_selection import StratifiedKFold

from attacks.attackers.registry import REGISTRY
from attacks.base import Attacker, AttackInput, CheckpointInputs
from core.classifier import Candidate
from core.config import AttackBudget
from core.messages import exception_line
from core.metric_names import attack_metric
from core.saturation import Saturation, saturation

if TYPE_CHECKING:  # a checkpoint is only read here, so the curve runs without Ray installed
    from ray import tune

    # run_curve's arguments after ``load``
    CurveTask = tuple[dict, tune.Checkpoint, str, int | None, "CurvePoint | None", Candidate | None]

FRACTIONS = (0.25, 0.5, 1.0)  # quarters: the parts are one stratified fold, two, and the whole split
DOUBLED = 2.0  # the point past the attacker's own budget: twice its records, where the data set holds them
FOLDS = 4


def percent(fraction: float) -> int:
    """A fraction as the whole percentage of metric names (``curve/25``)."""
    return round(100 * fraction)


@dataclass(frozen=True)
class CurvePoint:
    """The attacker's balanced test accuracy with its 95 % interval after fitting on ``records`` training records."""

    fraction: float
    records: int
    accuracy: float
    ci_low: float
    ci_high: float

    @property
    def percent(self) -> int:
        """The fraction as a whole percentage, as in metric names."""
        return percent(self.fraction)


def still_learning(half: CurvePoint, full: CurvePoint) -> bool:
    """The rule: an attacker is still learning when doubling its records (the curve's last step: 50 to 100 %, or 100
    to 200 %) gains more accuracy than the half-width of the larger part's 95 % interval, (ci_high − ci_low) / 2."""
    return full.accuracy - half.accuracy > (full.ci_high - full.ci_low) / 2


@dataclass(frozen=True)
class LearningCurve:
    """One attacker's accuracy at each of :data:`FRACTIONS` of its training records, smallest first."""

    attacker: str
    points: tuple[CurvePoint, ...]

    @property
    def still_learning(self) -> bool:
        """:func:`still_learning` of the last step (50 to 100 %, or 100 to 200 % where drawn)."""
        return still_learning(self.points[-2], self.points[-1])

    @property
    def saturation(self) -> Saturation:
        """The power law's asymptote through the curve's points, with its 95 % interval (or why there is none)."""
        return saturation([p.records for p in self.points], [p.accuracy for p in self.points],
                          [(p.ci_high - p.ci_low) / 2 for p in self.points])

    def logged(self) -> dict[str, float]:
        """``attack/<name>/curve/<pct>`` with ``/ci_low``, ``/ci_high`` and ``/records``, ``attack/<name>/still_learning``
        and, where the fit gives one, ``attack/<name>/saturation`` with ``/ci_low`` and ``/ci_high``."""
        metrics = ({attack_metric(self.attacker, "still_learning"): float(self.still_learning)}
                   | self.saturation.logged(attack_metric(self.attacker, "saturation")))
        for p in self.points:
            key = attack_metric(self.attacker, f"curve/{p.percent}")
            metrics |= {key: p.accuracy, f"{key}/ci_low": p.ci_low, f"{key}/ci_high": p.ci_high,
                        f"{key}/records": float(p.records)}
        return metrics


def nested_parts(s: torch.Tensor, seed: int) -> list[np.ndarray]:
    """Indices of the training records in each of :data:`FRACTIONS`, sorted: the first k of four stratified folds
    (shuffled with ``seed``), so each part holds every class in its share and contains the smaller parts.

    Records with per-step labels [N, T] are stratified by their most frequent label.
    """
    key = (s if s.dim() == 1 else s.flatten(1).mode(dim=1).values).cpu().numpy()
    folds = [test for _, test in StratifiedKFold(FOLDS, shuffle=True, random_state=seed).split(key, key)]
    return [np.sort(np.concatenate(folds[: round(f * FOLDS)])) for f in FRACTIONS]


def training_part(data: AttackInput, idx: np.ndarray) -> AttackInput:
    """``data`` with only the training records ``idx`` (their release, S, U, raw inputs and side information)."""
    rows = torch.as_tensor(idx)  # a CPU index selects on any device

    def pick(t: torch.Tensor | None) -> torch.Tensor | None:
        return None if t is None else t[rows]

    return replace(data, train_x=data.train_x[rows], train_s=data.train_s[rows], train_u=pick(data.train_u),
                   raw_train_x=pick(data.raw_train_x), train_si=pick(data.train_si))


def learning_curve(attacker: Attacker, data: AttackInput, seed: int = 0, budget: int | None = None,
                   full: CurvePoint | None = None) -> LearningCurve:
    """Fit ``attacker`` afresh on each nested part of the training split and score each fit once on the unchanged test
    split. ``budget``: the attacker's own records (100 %), the first of ``data``'s, when ``data`` holds twice as many
    (200 %, its whole training split); None: the whole split is 100 %. ``full``: the 100 % point as the farm already
    read it (the same attacker on the same records), taken as it is instead of fitted again."""
    n = budget or len(data.train_s)
    fractions: tuple[float, ...] = FRACTIONS
    parts = nested_parts(data.train_s[:n], seed)
    if len(data.train_s) >= 2 * n:
        fractions, parts = (*FRACTIONS, DOUBLED), [*parts, np.arange(2 * n)]
    points = []
    for fraction, idx in zip(fractions, parts, strict=True):
        if fraction == 1.0 and full is not None:
            points.append(full)
            continue
        part = data if len(idx) == len(data.train_s) else training_part(data, idx)
        metrics = attacker.run(part).metrics
        points.append(CurvePoint(fraction, len(idx), metrics["accuracy"], metrics["accuracy/ci_low"],
                                 metrics["accuracy/ci_high"]))
    return LearningCurve(attacker.name, tuple(points))


def narrowed(attacker: Attacker, chosen: Candidate | None) -> Attacker:
    """``attacker`` with its tuned family narrowed to ``chosen``, the configuration its own search picked on the farm's
    records: the curve's parts reuse that search instead of running it again. Unchanged for an attacker with no
    family (no ``budget`` and base ``width``) or where no choice was logged."""
    budget, width = getattr(attacker, "budget", None), getattr(attacker, "width", None)
    if chosen is None or not isinstance(budget, AttackBudget) or not width:
        return attacker
    one = {"attack_width_factors": (chosen.width / width,), "attack_lrs": (chosen.lr,), "attack_augment": (chosen.augment,)}
    return cast(Attacker, replace(cast(Any, attacker), budget=budget.model_copy(update=one)))


def run_curve(load: Callable[[dict, str], CheckpointInputs], config: dict, checkpoint: tune.Checkpoint,
              attacker: str, budget: int | None = None, full: CurvePoint | None = None,
              chosen: Candidate | None = None) -> LearningCurve:
    """Ray task: load the checkpoint's release (as the farm does), build the named attacker from the trial's config and
    draw its learning curve, with the trial's seed choosing the parts. ``budget``: the attacker's records in the farm,
    where the data set holds twice as many: the release is then loaded over ``2 × budget`` records (``attack_records``)
    for the 200 % point. ``full``: the farm's own reading, the curve's 100 % point; ``chosen``: the configuration the
    farm's search picked, the one the parts are fitted with (:func:`narrowed`)."""
    with checkpoint.as_directory() as directory:
        inputs = load(config if budget is None else config | {"attack_records": 2 * budget}, directory)
    built = narrowed(cast(Attacker, REGISTRY[attacker].build(inputs.config, False)), chosen)
    return learning_curve(built, inputs.data, inputs.config.seed, budget, full)


def run_lane(load: Callable[[dict, str], CheckpointInputs], tasks: list[CurveTask]) -> list[LearningCurve | str]:
    """Ray task: one lane's curves one after the other; a curve that raises gives its one-line failure instead."""
    results: list[LearningCurve | str] = []
    for config, checkpoint, attacker, budget, full, chosen in tasks:
        try:
            results.append(run_curve(load, config, checkpoint, attacker, budget, full, chosen))
        except Exception as exc:  # noqa: BLE001 - one curve's failure is reported, the lane's others still drawn
            results.append(exception_line(exc))
    return results

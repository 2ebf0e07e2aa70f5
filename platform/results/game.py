"""Does the game settle? A trial's game read from its MLflow metric histories: per epoch the in-game adversary's and
utility net's accuracy, the distortion, the leakage estimate and the releasing network's gradient norm; at each
checkpoint a fresh attacker beside the in-game adversary, and their gap (docs/usage.md#does-the-game-settle).

The fresh attacker is ``attack/max/accuracy``, the strongest privacy attacker at that checkpoint (the mechanism's own
fresh deep attacker among them; the attack farm logs it): the number the front reports. Where the farm logged none
(it failed, or the sweep ran without it) the mechanism's own ``attack/deep/accuracy`` stands in, and says so.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.metric_names import (
    DEEP_ATTACK,
    FRESH_ACCURACY,
    NORMALISED_ALPHA_MI,
    PSNR,
    SQUARED_ERROR,
    STRONGEST_ATTACK,
    UTILITY_ACCURACY,
)
from core.numbers import readable
from platform.results.store import Store

SETTLE_MARGIN = 0.05  # the game settles when a fresh attacker reads at most this much more than the in-game adversary
ADVERSARY = "train/adversary_accuracy"
# (key, (metric, label) candidates, first logged wins): the figure's panels, in order
QUANTITIES: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("adversary", ((ADVERSARY, "in-game adversary's accuracy"),)),
    ("utility", ((UTILITY_ACCURACY, "utility net's accuracy"),)),
    ("leakage", ((NORMALISED_ALPHA_MI, "α-MI estimate Î_α(S;Y)/H_α(S)"),
                 ("leakage/secret_term", "secret term (nats, in-game η)"))),
    ("squared_error", ((SQUARED_ERROR, "distortion E‖X − Y‖²"),)),
    ("psnr", ((PSNR, "PSNR (dB)"),)),
    ("grad_norm", (("train/releaser_grad_norm", "releaser's gradient norm"),
                   ("train/privatizer_grad_norm", "privatizer's gradient norm"))),
    ("multiplier", (("train/distortion_multiplier", "distortion multiplier μ (constrained form)"),)),
)
# the fresh attacker at a checkpoint: the strongest, else the mechanism's own deep attacker
FRESH = ((STRONGEST_ATTACK, "strongest fresh attacker"), (DEEP_ATTACK, "fresh deep attacker"))
FRESH_UTILITY = FRESH_ACCURACY  # the data user's digit classifier trained afresh on the release


def gap_text(gap: float) -> str:
    """A gap with its sign, to three decimals: '+0.212', '-0.004'."""
    return f"{gap:+.3f}"


@dataclass(frozen=True)
class Curve:
    """One quantity over the epochs: its metric, how a figure labels it, and (epoch, value) in epoch order."""

    key: str
    metric: str
    label: str
    points: tuple[tuple[int, float], ...]

    @property
    def epochs(self) -> list[int]:
        return [e for e, _ in self.points]

    @property
    def values(self) -> list[float]:
        return [v for _, v in self.points]

    def at(self, epoch: int) -> float | None:
        """The value at ``epoch``, if logged."""
        return dict(self.points).get(epoch)


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint: the fresh attacker's accuracy (with its 95 % interval where logged) beside the in-game
    adversary's at the same epoch."""

    epoch: int
    fresh: float
    in_game: float
    attacker: str  # how the fresh number is named: "strongest fresh attacker" or "fresh deep attacker"
    ci_low: float | None = None
    ci_high: float | None = None

    @property
    def gap(self) -> float:
        """Fresh − in-game: how much the in-game adversary misses of what a fresh attacker reads."""
        return self.fresh - self.in_game


@dataclass(frozen=True)
class Verdict:
    """Whether the game settles at its last checkpoint (gap ≤ ``margin``, the gap read at three decimals as shown), in
    one line."""

    checkpoint: Checkpoint
    margin: float

    @property
    def settles(self) -> bool:
        return round(self.checkpoint.gap, 3) <= self.margin

    @property
    def line(self) -> str:
        """'settles: ...' or 'the releaser outruns its adversary: the in-game adversary reads X, a fresh one Y'."""
        c = self.checkpoint
        reads = f"the in-game adversary reads {readable(c.in_game)}, a fresh one {readable(c.fresh)}"
        if self.settles:
            return f"settles: {reads} (gap {gap_text(c.gap)} ≤ {readable(self.margin)}) at epoch {c.epoch}"
        return f"the releaser outruns its adversary: {reads} (gap {gap_text(c.gap)}) at epoch {c.epoch}"


@dataclass(frozen=True)
class GameCurves:
    """A trial's game: its curves (those it logged, in :data:`QUANTITIES`' order), the fresh utility classifier's
    points, and its checkpoints with fresh and in-game adversaries side by side."""

    trial: str
    curves: tuple[Curve, ...]
    checkpoints: tuple[Checkpoint, ...]
    fresh_utility: tuple[tuple[int, float], ...] = ()

    def curve(self, key: str) -> Curve | None:
        """The curve of quantity ``key`` (e.g. "adversary"), if logged."""
        return next((c for c in self.curves if c.key == key), None)

    @property
    def has_game(self) -> bool:
        """Whether the trial has an in-game adversary to compare (else there is no game to settle)."""
        return self.curve("adversary") is not None

    def verdict(self, margin: float = SETTLE_MARGIN) -> Verdict | None:
        """The verdict at the last checkpoint (None before any checkpoint has a fresh attacker)."""
        return Verdict(self.checkpoints[-1], margin) if self.checkpoints else None


def history(store: Store, run_id: str, metric: str) -> tuple[tuple[int, float], ...]:
    """(step, value) of ``metric`` in step order, the last value logged at each step (a re-attack's, a resume's)."""
    ordered = sorted(store.history(run_id, metric), key=lambda m: (m.step, m.timestamp))
    return tuple(sorted({m.step: m.value for m in ordered}.items()))


def first_logged(store: Store, run_id: str, key: str,
                 candidates: Sequence[tuple[str, str]]) -> Curve | None:
    """The curve of the first candidate metric the run logged, if any."""
    for metric, label in candidates:
        points = history(store, run_id, metric)
        if points:
            return Curve(key, metric, label, points)
    return None


def checkpoints(store: Store, run_id: str, adversary: Curve | None) -> tuple[Checkpoint, ...]:
    """Each epoch with a fresh attacker's accuracy and the in-game adversary's, the strongest attacker where logged."""
    if adversary is None:
        return ()
    found: dict[int, Checkpoint] = {}
    for metric, name in reversed(FRESH):  # the strongest, read last, replaces the deep attacker where both exist
        low, high = (dict(history(store, run_id, f"{metric}/{b}")) for b in ("ci_low", "ci_high"))
        for epoch, value in history(store, run_id, metric):
            in_game = adversary.at(epoch)
            if in_game is not None:
                found[epoch] = Checkpoint(epoch, value, in_game, name, low.get(epoch), high.get(epoch))
    return tuple(found[e] for e in sorted(found))


def read_game_curves(store: Store, run_id: str, trial: str) -> GameCurves:
    """A trial's game curves, fresh points and checkpoints from its run's metric histories."""
    curves = tuple(c for key, candidates in QUANTITIES if (c := first_logged(store, run_id, key, candidates)))
    adversary = next((c for c in curves if c.key == "adversary"), None)
    return GameCurves(trial, curves, checkpoints(store, run_id, adversary), history(store, run_id, FRESH_UTILITY))

"""An attacker's score as the farm logs it (``attack/<name>/…``) and the strongest of several: the one rule behind
every privacy number putlab reports, stated here once. The strongest attacker is the one with the highest balanced
accuracy on the secret; a tie goes to the attacker named first. Scores are read through a lookup (a metric name to
its value, or None), so a caller reads a dict, a logged step or a stored run alike and fetches only what it needs."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from core.metric_names import attack_metric

Lookup = Callable[[str], float | None]  # a metric's name to its value, None where it was not logged
CI_BOUNDS = ("ci_low", "ci_high")  # an accuracy's 95 % interval, logged as ``<accuracy>/ci_low|ci_high``
PER_RECORD = ("top_decile_accuracy", "confident_share")  # how unevenly an attacker reads the records (tuning logs them)
STRONGEST = "max"  # the name the strongest attacker's score is logged under: attack/max/…


@dataclass(frozen=True)
class AttackerScore:
    """One attacker's balanced accuracy on the secret, its 95 % interval, the records it was fitted on and its
    per-record view (each None or absent where it logged none)."""

    name: str
    accuracy: float
    ci_low: float | None = None
    ci_high: float | None = None
    train_records: int | None = None
    per_record: dict[str, float] = field(default_factory=dict)

    @classmethod
    def read(cls, lookup: Lookup, name: str) -> AttackerScore | None:
        """The score ``name`` logged, or None where it logged no accuracy."""
        accuracy = lookup(attack_metric(name))
        if accuracy is None:
            return None
        low, high = (lookup(attack_metric(name, f"accuracy/{bound}")) for bound in CI_BOUNDS)
        records = lookup(attack_metric(name, "train_records"))
        views = {view: value for view in PER_RECORD if (value := lookup(attack_metric(name, view))) is not None}
        return cls(name, accuracy, low, high, None if records is None else int(records), views)

    def as_strongest(self) -> dict[str, float]:
        """The metrics that publish this score as the strongest attacker's (``attack/max/…``), each where logged."""
        values = {attack_metric(STRONGEST): self.accuracy}
        values |= {attack_metric(STRONGEST, f"accuracy/{bound}"): value
                   for bound, value in zip(CI_BOUNDS, (self.ci_low, self.ci_high), strict=True) if value is not None}
        if self.train_records is not None:
            values[attack_metric(STRONGEST, "train_records")] = float(self.train_records)
        return values | {attack_metric(STRONGEST, view): value for view, value in self.per_record.items()}


def accuracies(lookup: Lookup, attackers: Iterable[str]) -> dict[str, float]:
    """Every attacker's logged accuracy on the secret, in the order named (those that logged none left out)."""
    logged = {name: lookup(attack_metric(name)) for name in attackers}
    return {name: value for name, value in logged.items() if value is not None}


def winner(scores: Mapping[str, float]) -> str:
    """The rule: the attacker of the highest accuracy in ``scores`` (name to accuracy), a tie to the first named."""
    return max(scores, key=scores.__getitem__)


def strongest(lookup: Lookup, attackers: Iterable[str]) -> AttackerScore | None:
    """The strongest of ``attackers`` (:func:`winner`) with its whole score; None where none logged an accuracy."""
    scores = accuracies(lookup, attackers)
    return AttackerScore.read(lookup, winner(scores)) if scores else None

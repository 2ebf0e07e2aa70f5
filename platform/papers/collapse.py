"""How to tell a trial whose release collapsed: the data user keeps less than a tenth of the way from chance to 1, or
every attacker reads chance on the secret; the report names such trials and no verdict rests on them."""
from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

CHANCE_TOLERANCE = 0.001  # a balanced accuracy this close to 1/classes is a constant prediction's


NEAR_COLLAPSE = 0.1  # a data user keeping less than this share of the way from chance to 1 reads a collapsed release


ATTACKER = re.compile(r"^attack/(?!max/)[^/]+/accuracy$")  # one attacker's balanced accuracy on the secret


@dataclass(frozen=True)
class Release:
    """How to tell a trial whose release collapsed: the data user's balanced accuracy on the release (``utility``;
    None where utility is no accuracy) keeps less than ``NEAR_COLLAPSE`` of the way from chance to 1 (a digit read at
    0.14 by a 10-class data user has lost 96 % of what it could read: the release is near-collapsed, and what it hides
    says nothing of a mechanism that keeps the digit), or every attacker's balanced accuracy on the secret (each
    ``attack/<name>/accuracy`` but the strongest-of) reads chance.

    Chance is 1/classes, what a constant prediction reads in balanced accuracy whatever the class counts; the classes
    are the registered data set's (its private attribute's, and its utility's unless the data user's task has its
    own, ``utility_classes``). "Reads chance" is within ``CHANCE_TOLERANCE``: a classifier that learns nothing from a
    genuinely private release still scatters about chance by its test set's sampling noise (±0.03 on 1,000 records),
    so a reading that exact is a constant prediction, and a release no network reads anything from."""

    dataset: str
    utility: str | None = None
    utility_classes: int | None = None

    def collapsed(self, trials: pd.DataFrame) -> pd.Series:
        """For each trial, whether its release collapsed."""
        from core.data.registry import get_dataset  # the registry imports every data set's module

        entry = get_dataset(self.dataset)
        useless = pd.Series(False, index=trials.index)
        if self.utility is not None and self.utility in trials:
            classes = self.utility_classes or entry.utility.classes
            assert classes is not None, f"{self.dataset}'s utility is no classification"
            useless = near_chance(trials[self.utility], classes)
        secret = entry.private.classes
        assert secret is not None, f"{self.dataset}'s secret is no classification"
        attackers = [c for c in trials.columns if ATTACKER.match(c)]
        hidden = pd.Series(bool(attackers), index=trials.index)
        for column in attackers:
            hidden &= at_chance(trials[column], secret)
        return useless | hidden


def near_chance(accuracy: pd.Series, classes: int) -> pd.Series:
    """Whether each balanced accuracy keeps less than ``NEAR_COLLAPSE`` of the way from chance (1/classes) to 1; NaN
    reads no."""
    chance = 1 / classes
    return accuracy.astype(float) < chance + NEAR_COLLAPSE * (1 - chance)


def at_chance(accuracy: pd.Series, classes: int) -> pd.Series:
    """Whether each balanced accuracy reads chance (1/classes, within ``CHANCE_TOLERANCE``); NaN reads no."""
    return (accuracy.astype(float) - 1 / classes).abs() <= CHANCE_TOLERANCE

"""What a reproduction row is made of: a :class:`Study` (one sweep command) and a :class:`Claim` (one figure or table
entry of a paper, quoted from its text, and the measure that reads putlab's number from the study's sweep)."""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from platform.papers.measures import Measure

# What a row is, which decides whether it can carry a verdict:
REPRODUCTION = "reproduction"  # a figure or table of the paper, run in its setting or a stated substitute
OWN = "own"  # putlab's own measurement beside the paper's (the paper has no such number): never a verdict
SANITY = "sanity"  # holds by construction (e.g. the identity at k = 0): a check of the code, not of the paper
KINDS = (REPRODUCTION, OWN, SANITY)


@dataclass(frozen=True)
class Paper:
    """One of the four papers: its key, its title as the report heads it, and what putlab builds from it."""

    key: str
    title: str


@dataclass(frozen=True)
class Study:
    """One sweep of the reproduction: ``python -m platform.sweep PRESET --profile PROFILE --seeds SEEDS ...``."""

    key: str
    preset: str
    profile: str = "quick"
    seeds: int = 3
    extra: tuple[str, ...] = ()

    @property
    def experiment(self) -> str:
        """The MLflow experiment the study's sweeps go to."""
        return f"repro-{self.key}"

    def argv(self) -> list[str]:
        """The sweep's command line after ``python`` (without the tracking URI, which defaults like the sweep's)."""
        seeds = ["--seeds", str(self.seeds)] if self.seeds > 1 else []
        return ["-m", "platform.sweep", self.preset, "--profile", self.profile, *seeds,
                "--experiment", self.experiment, *self.extra]

    def command(self) -> str:
        """The command a reader runs to re-run the study."""
        return shlex.join(["python", *self.argv()])


@dataclass(frozen=True)
class Claim:
    """One published number or trend, as the paper states it, and how putlab measures it.

    ``target`` is the paper's number when there is one: an ``"equal"`` claim agrees when it lies inside putlab's seed
    band or interval, an ``"above"`` claim ("more than 90 %") when the whole band clears it. ``caveat`` says where
    putlab's setting differs from the paper's; it is printed under every row, whatever the verdict. ``substitute``
    names what putlab runs in place of the paper's data or setting (the row's data then reads "substitute")."""

    paper: str  # a Paper key
    item: str  # the figure or table, numbered as in the paper's text
    setting: str  # the paper's setting (n, λ, p_x, data sizes ...)
    published: str  # the paper's number or statement, quoted
    study: str  # a Study key
    measure: Measure
    target: float | None = None
    caveat: str = ""
    direction: str = "equal"  # "equal" or "above"
    kind: str = REPRODUCTION
    substitute: str = ""

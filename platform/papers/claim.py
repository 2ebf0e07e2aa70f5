"""What a reproduction row is made of: a :class:`Study` (one sweep command) and a :class:`Claim` (one figure or table
entry of a paper, quoted from its text, and the measure that reads putlab's number from the study's sweep)."""
from __future__ import annotations

import itertools
import shlex
from dataclasses import dataclass

from platform.papers.collapse import Release
from platform.papers.statistics import MARGIN, Measure

# What a row is, which decides whether it can carry a verdict:
REPRODUCTION = "reproduction"  # a figure or table of the paper, run in its setting or a stated substitute
OWN = "own"  # putlab's own measurement beside the paper's (the paper has no such number): never a verdict
SANITY = "sanity"  # holds by construction (e.g. the identity at k = 0): a check of the code, not of the paper
KINDS = (REPRODUCTION, OWN, SANITY)

# How a row's value meets the paper's number (``Claim.direction``):
EQUAL = "equal"  # the paper's number lies inside putlab's 95 % interval
ABOVE = "above"  # "more than": the whole interval clears the paper's number
EXACT = "exact"  # a count: putlab's equals the paper's
LEVEL = "level"  # "at", "near", "level with": equivalence within ± the claim's margin, shown by two one-sided tests
DIRECTIONS = (EQUAL, ABOVE, EXACT, LEVEL)

# what a row of an experiment putlab cannot run needs (``Claim.needs``): the paper's data set and its trained networks
UNAVAILABLE = ("the {} images and {}, neither of which putlab has: the data set to register and the networks to "
               "train or load (docs/extending.md) before the row can run")


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
    release: Release | None = None  # how to tell a collapsed release among its trials (None: it releases no data)
    stand_in: bool = False  # its command gives no data folder, so it runs on the data set's synthetic stand-in

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

    def overrides(self) -> list[str]:
        """The ``KEY=VALUE`` of each ``--set`` its command gives."""
        return [value for flag, value in itertools.pairwise(self.extra) if flag == "--set"]


@dataclass(frozen=True)
class Claim:
    """One published number or trend, as the paper states it, and how putlab measures it.

    ``target`` is the paper's number when there is one, met as ``direction`` says (see the constants above): a
    ``LEVEL`` claim within ``margin``, any claim within ``tolerance`` when the paper prints a rounded number (0.19 to
    two decimals: 0.005). ``caveat`` says where putlab's setting differs from the paper's; it is printed under every
    row, whatever the verdict. ``substitute`` names what putlab runs in place of the paper's data or setting (the
    row's data then reads "substitute"). ``quantity`` names the paper's quantity the row tests, when another row tests
    it too (e.g. one line of a figure read two ways): the report counts it once, at its first row. ``needs`` says what
    putlab lacks to run the experiment at all (the paper's data set, its pre-trained networks): such a row has no study
    (``study`` is empty), reads "not run" and names what it needs, so the table shows what it does not cover.
    ``headline`` rows are the report's own findings, repeated in its summary at the top."""

    paper: str  # a Paper key
    item: str  # the figure or table, numbered as in the paper's text
    setting: str  # the paper's setting (n, λ, p_x, data sizes ...)
    published: str  # the paper's number or statement, quoted
    study: str  # a Study key
    measure: Measure
    target: float | None = None
    caveat: str = ""
    direction: str = EQUAL
    kind: str = REPRODUCTION
    substitute: str = ""
    margin: float = MARGIN
    tolerance: float = 0.0
    quantity: str = ""
    needs: str = ""
    headline: bool = False  # a finding the report states in its summary at the top, whatever it reads

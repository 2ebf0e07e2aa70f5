"""The four papers' claims putlab can test, and the studies (sweep commands) that test them.

Data only: a :class:`Study` is one sweep (preset, profile, seeds) writing to experiment ``repro-<key>``; a
:class:`Claim` is one figure or table entry of a paper, the paper's number, and the measure that reads putlab's number
from its study (platform/reproduction_measures.py). ``why`` explains a known difference; the verdict itself is computed.
Quick profiles stand in for the papers' scale on a 2-CPU machine; each study's profile is in the report.
"""
from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

from platform.reproduction_measures import BestUnder, Measure, ParentMetric, PointMetric, Trend

PAPERS = {
    "alpha-mi": "α-MI releaser (α-mutual information as a tunable privacy measure): AMNIST and ECO",
    "privatizer": "Privatizer (learning data-derived privacy-preserving representations): GMM and AMNIST",
    "cloak": "Cloak (learned stochastic representations for private inference): MNIST",
    "membership": "Membership information leakage (Farokhi & Kaafar): Adult",
}


@dataclass(frozen=True)
class Study:
    """One sweep of the reproduction: ``python -m platform.sweep PRESET --profile PROFILE --seeds SEEDS ...``."""

    key: str
    preset: str
    profile: str = "quick"
    seeds: int = 1
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
    """One published number or trend and how putlab measures it."""

    paper: str  # a key of PAPERS
    item: str  # the figure or table
    setting: str
    published: str  # as the paper states it
    study: str  # a Study key
    measure: Measure
    target: float | None = None  # the published number, when there is one to compare with
    tolerance: float = 0.0
    why: str = ""  # a known reason for a difference


STUDIES: tuple[Study, ...] = (
    Study("amnist", "amnist"),
    Study("privatizer", "amnist-privatizer", extra=("--set", "algorithm=1")),
    Study("gmm", "gmm", seeds=2),
    Study("cloak", "cloak-mnist", extra=("--set", "M=1.5", "--set", "T=1.0")),
    Study("eco", "eco"),
    Study("eco-si", "eco-si"),
    Study("adult-n", "adult-membership", "paper-n"),
    Study("adult-lam", "adult-membership", "paper-lam"),
    Study("adult-p_x", "adult-membership", "paper-p_x"),
    Study("adult-sigma", "adult-membership", "paper-sigma"),
)

MAX_ATTACK = "attack/max/accuracy"
ADULT_RHO = "leakage/kl/rho/median"  # the box plots' centre; the mean over records is heavy-tailed

CLAIMS: tuple[Claim, ...] = (
    # α-MI releaser on AMNIST
    Claim("alpha-mi", "§ AMNIST, raw images", "digit classifier on raw images", "97.25 % (balanced)", "amnist",
          ParentMetric("baseline/utility/accuracy"), 0.9725, 0.01,
          "the quick profile trains on 2,000 of AMNIST's 28,476 images"),
    Claim("alpha-mi", "§ AMNIST, raw images", "thickness attacker on raw images", "91.50 % (balanced)", "amnist",
          ParentMetric("baseline/attack/deep/accuracy"), 0.915, 0.01),
    Claim("alpha-mi", "Fig. 3", "digit accuracy where the strongest attacker reads ≤ 0.6", "digit accuracy nearly kept",
          "amnist", BestUnder("utility/accuracy", MAX_ATTACK, 0.6)),
    Claim("alpha-mi", "Fig. 3", "lowest strongest-attacker accuracy on the grid", "50 % (full privacy)", "amnist",
          BestUnder(MAX_ATTACK, MAX_ATTACK, math.inf, higher_is_better=False), 0.5, 0.02),
    # privatizer
    Claim("privatizer", "Fig. (GMM)", "I(S;Q) + I(U;X|Q) − K at k = 1 (linear filter)", "reaches the bound K (gap 0)",
          "gmm", BestUnder("leakage/gap", "leakage/gap", math.inf, higher_is_better=False, where={"k": 1.0}), 0.0, 0.05),
    Claim("privatizer", "Fig. (GMM)", "I(S;Q) + I(U;X|Q) − K at k = 0 (linear filter)", "reaches the bound K (gap 0)",
          "gmm", BestUnder("leakage/gap", "leakage/gap", math.inf, higher_is_better=False, where={"k": 0.0}), 0.0, 0.05),
    # Cloak
    Claim("cloak", "§ MNIST", "pre-trained target on raw test images", "99.29 %", "cloak",
          ParentMetric("baseline/target/mnist_test_accuracy"), 0.9929, 0.005),
    # membership
    Claim("membership", "Fig. 1", "ρ_KL against n (λ = 1e-3, p_x = 5, σ = 0)", "falls with n", "adult-n",
          Trend(ADULT_RHO, "n", -1)),
    Claim("membership", "Fig. 2", "ρ_KL against λ at n = 10", "falls with λ", "adult-lam", Trend(ADULT_RHO, "lam", -1)),
    Claim("membership", "Fig. 3", "ρ_KL against p_x at n = 10", "rises with p_x", "adult-p_x", Trend(ADULT_RHO, "p_x", 1)),
    Claim("membership", "Fig. 4", "ρ_KL against σ at n = 30", "falls with σ", "adult-sigma",
          Trend(ADULT_RHO, "sigma", -1)),
    Claim("membership", "Fig. 1", "mean ρ_KL over records at n = 10 (the median above)", "large at small n", "adult-n",
          PointMetric("leakage/kl/rho", {"n": 10}),
          why="a few records with extreme features dominate the mean at n = 10; the trends use the median"),
)

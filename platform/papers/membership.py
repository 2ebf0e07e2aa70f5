"""The membership paper (Farokhi & Kaafar, ``Modelling and quantifying membership information leakage in machine
learning``) on Adult: its five figures (Yeom's advantage as boxes, ρ_KL as a line, against n for ridge regression and
for the 5×50 tanh network, against λ, p_x and σ), its Theorem 1 checked at every point of each, and putlab's own
DP-SGD baseline."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.metric_names import UTILITY_ACCURACY, YEOM_ADVANTAGE
from core.numbers import readable
from platform.papers.claim import EXACT, OWN, SANITY, Claim, Paper, Study
from platform.papers.measures import Trend
from platform.papers.statistics import Measured
from platform.papers.study_runs import StudyRuns, seed_count
from platform.results.replicates import point_index, point_keys

PAPER = Paper("membership", "Membership information leakage (Farokhi & Kaafar): Adult")

# The ridge figures run 10 seeds: at 3, Yeom's advantage trends were inconclusive (p 0.06-0.15 over 15-18 trials) while
# each seed's training set is 10-30 records and the study takes minutes; 10 was fixed before they ran again
RIDGE_SEEDS = 10
STUDIES: tuple[Study, ...] = (
    Study("adult-n", "adult-membership", "paper-n", seeds=RIDGE_SEEDS),
    Study("adult-lam", "adult-membership", "paper-lam", seeds=RIDGE_SEEDS),
    Study("adult-p_x", "adult-membership", "paper-p_x", seeds=RIDGE_SEEDS),
    Study("adult-sigma", "adult-membership", "paper-sigma", seeds=RIDGE_SEEDS),
    Study("adult-net", "adult-membership", "paper-net-n"),
    Study("adult-n-probes", "adult-membership", "paper-n-probes", seeds=5),  # minutes a seed: 5 seeds
    Study("adult-dp", "adult-dp", seeds=5),
)

ADULT_RHO = "leakage/kl/rho/median"  # the centre of putlab's boxes, beside the paper's line (the mean)
RHO_MEAN = "leakage/kl/rho"  # the mean over records: the paper's line (its Remark 3 averages over records)
ADVANTAGE = YEOM_ADVANTAGE  # Yeom's |TPR − FPR| = |2·P(correct) − 1|, the paper's Adv


def success_bound(rho: pd.Series) -> pd.Series:
    """Theorem 1's bound ½·√ρ_KL on the advantage, clipped to [0, 1] as the trials log it (leakage/kl/success_bound)."""
    return (0.5 * np.sqrt(rho.clip(lower=0.0))).clip(upper=1.0)


@dataclass(frozen=True)
class WithinBound:
    """Theorem 1 at every grid point: the measured ``advantage`` against ½·√ρ_KL. The bound is informative at a point
    only where it is below 1 at ρ_KL's upper 95 % end (an advantage never exceeds 1, so a bound of 1 cannot fail); a
    point contradicts the theorem only when the advantage's lower 95 % end lies above that bound (each the mean over
    seeds). The value is how many informative points do, so 0 means the bound holds wherever it says anything; with
    no informative point there is nothing to check."""

    advantage: str = ADVANTAGE
    rho: str = RHO_MEAN

    def __call__(self, runs: StudyRuns) -> Measured:
        columns = [self.advantage, f"{self.advantage}/ci_low", self.rho, f"{self.rho}/ci_high"]
        trials = runs.trials.reset_index(drop=True)
        if any(c not in trials for c in columns):
            return Measured(math.nan, text="not measured")
        index = point_index(trials, runs.label_keys)
        means = trials[columns].groupby(index).mean().dropna()
        if means.empty:
            return Measured(math.nan, text="not measured")
        bound, bound_high = success_bound(means[self.rho]), success_bound(means[f"{self.rho}/ci_high"])
        informative = bound_high < 1
        past = informative & (means[f"{self.advantage}/ci_low"] > bound_high)
        names = trials[point_keys(trials, runs.label_keys)].groupby(index).first().loc[means.index]
        points = "; ".join(f"{_name(names.loc[i])}: {readable(means.loc[i, self.advantage])} vs {readable(bound[i])}"
                           + _mark(past[i], informative[i], bound[i]) for i in means.index)
        useful, count = int(informative.sum()), int(past.sum())
        seeds = seed_count(trials)
        if useful == 0:
            return Measured(math.nan, text=f"the bound is vacuous (≥ 1) at all {len(means)} points — {points}",
                            seeds=seeds)
        word = "within the bound at every one" if count == 0 else f"past the bound at {count}"
        return Measured(float(count), float(count), float(count), "points whose advantage interval clears the bound, "
                        "among those where it is below 1", seeds=seeds,
                        text=f"informative at {useful} of {len(means)} points, {word} (advantage vs ½√ρ_KL — {points})")

    def describe(self) -> str:
        return (f"points where ½√`{self.rho}/ci_high` < 1 and `{self.advantage}/ci_low` exceeds it (means over "
                "seeds)")


def _mark(past: bool, informative: bool, bound: float) -> str:
    """How a point of :class:`WithinBound` counts: past the bound, vacuous, or (no mark) within an informative bound."""
    if past:
        return " (past)"
    if informative:
        return ""
    return " (vacuous)" if bound >= 1 else " (vacuous: 1 at ρ_KL's upper end)"


def _name(keys: pd.Series) -> str:
    """A point's grid values, ``n = 10, lam = 0``."""
    return ", ".join(f"{k} = {readable(v)}" for k, v in keys.items())


ADULT = ("putlab one-hot encodes Adult's categories and standardises its numeric columns before the PCA (the paper "
         "codes categories as integers) and draws records from the 30,162 complete rows of the training file (the "
         "paper: N = 48,842).")
RHO_ESTIMATE = (" ρ_KL is the paper's Gaussian approximation (its Remark 3), corrected for the plug-in's bias (a "
                "record's estimate can fall below 0).")
RHO_LINE = (RHO_ESTIMATE + " The row reads the paper's line, the mean over records; the text gives the line's "
            "direction, no value, and no levels of the axis (putlab's are its own). A few records with extreme "
            "features dominate the mean at small n; the median row below reads the typical record's leakage, the "
            "same quantity counted once, here.")
RHO_MEDIAN = (RHO_ESTIMATE + " The median over records, the centre of putlab's boxes: the typical record's leakage, "
              "beside the paper's line (the mean) and counted in its row; where the two disagree the mean's trend is "
              "carried by the few records with extreme features.")
ADV = (" The advantage is Yeom's loss-threshold adversary (the paper's [15], τ = the mean training loss): |TPR − FPR| "
       "over the point's n members and n held-out non-members of one training set per seed, where the paper repeats "
       "a one-record game; the paper's boxes spread over repetitions, putlab's rows pool 3 seeds.")
BOUND = (" Theorem 1 as printed bounds the success probability by ½√ρ_KL; its proof bounds the total variation "
         "distance, which bounds the advantage |2P − 1|, so putlab checks the advantage (Yeom's adversary reads the "
         "record's loss under θ, one of the policies the theorem covers). A point counts against the theorem only when "
         "the advantage's 95 % interval lies wholly above the bound's (means over seeds), so estimation noise at "
         "large n does not. Where ½√ρ_KL ≥ 1 the bound says nothing (an advantage never exceeds 1): the row counts "
         "only the points where it is below 1 at ρ_KL's upper end, and agrees only when there are some and none of "
         "them is past.")
NET = (" The network's ρ_KL is read on its outputs at 6 fixed test rows, a lower bound on its parameters' ρ (a "
       "Gaussian fit of its 10,551 parameters needs over 10,553 training sets per side per record), with 20 records "
       "and 30 training sets per side. The text gives no training details; putlab runs 300 full-batch Adam steps from "
       "a fixed initialisation, and the text describes Fig. 2 by the advantage alone.")

THEOREM_1 = (" Theorem 1 is proven, and the paper demonstrates Theorems 2–4 with its figures (\u201cWe use linear "
             "regression to demonstrate all the results of the paper, namely, Theorems 2–4\u201d), not Theorem 1: a "
             "measured advantage within the bound checks putlab's estimates of the two sides, so the row is a sanity "
             "check (it fails where an advantage's interval lies wholly above the bound).")
SYMBOLS = {"lam": "λ", "sigma": "σ"}  # a grid axis as the paper writes it


def _figure(item: str, study: str, axis: str, fixed: str, sign: int, said: str, caveat: str = "",
            substitute: str = "") -> tuple[Claim, ...]:
    """A figure's rows in its setting ``fixed``: ρ_KL's trend along grid axis ``axis`` as the paper draws it (the mean
    over records; ``substitute`` applies to ρ_KL), the advantage's trend, Theorem 1 at every point (a sanity check of
    putlab's estimates: the theorem is proven), and ρ_KL's median
    over records (counted in the mean's row)."""
    symbol = SYMBOLS.get(axis, axis)
    published = f"{'falls' if sign < 0 else 'rises'} with {symbol}: {said}"
    return (
        Claim("membership", item, f"ρ_KL (mean over records, the paper's line) against {symbol} ({fixed})", published,
              study, Trend(RHO_MEAN, axis, sign), caveat=ADULT + RHO_LINE + caveat, substitute=substitute,
              quantity="ρ_KL"),
        Claim("membership", item, f"Yeom's |advantage| (the box plots) against {symbol} ({fixed})", published, study,
              Trend(ADVANTAGE, axis, sign), caveat=ADULT + ADV + caveat, quantity="advantage"),
        Claim("membership", "Theorem 1", f"measured |advantage| ≤ ½√ρ_KL on {item}'s trials, at every {symbol} where "
              f"the bound is below 1 ({fixed})", "P{Ψ(θ) = z_i} ≤ ½·√ρ_KL (Theorem 1)", study, WithinBound(),
              target=0.0, direction=EXACT, kind=SANITY, caveat=ADULT + BOUND + ADV + THEOREM_1 + caveat,
              substitute=substitute),
        Claim("membership", item, f"ρ_KL (median over records, the centre of putlab's boxes) against {symbol} "
              f"({fixed})", published, study, Trend(ADULT_RHO, axis, sign), caveat=ADULT + RHO_MEDIAN + caveat,
              substitute=substitute, quantity="ρ_KL"),
    )


CLAIMS: tuple[Claim, ...] = (
    *_figure("Fig. 1", "adult-n", "n", "ridge, λ = 0, p_x = 5, σ = 0", -1, "advantage and leakage 'decrease rapidly'"),
    *_figure("Fig. 2", "adult-net", "n", "5×50 tanh network, λ = 0, p_x = 5, σ = 0", -1, "'the same trend' as Fig. 1",
             NET + " A bound that holds on the probes' ρ holds on the parameters' (larger) ρ; one that fails there "
             "does not contradict the theorem.", substitute="ρ_KL on 6 probe outputs"),
    Claim("membership", "Fig. 2 (beside)", "ridge's ρ_KL (mean over records) on the same 6 probe outputs against n "
          "(λ = 0, p_x = 5; equal to its parameters' ρ)", "— (putlab's comparison for the network)", "adult-n-probes",
          Trend(RHO_MEAN, "n", -1), kind=OWN,
          caveat=ADULT + " The paper reads ridge on its parameters (Fig. 1); this reads it as the network is read."),
    *_figure("Fig. 3", "adult-lam", "lam", "ridge, n = 10, p_x = 5, σ = 0", -1, "advantage and leakage 'both decrease'"),
    *_figure("Fig. 4", "adult-p_x", "p_x", "ridge, n = 10, λ = 1e-6, σ = 0", 1, "advantage and leakage 'both increase'",
             " At p_x ≥ 10 the 10 rows no longer determine the p_x + 1 parameters (only λ = 1e-6 does), and ρ_KL "
             "grows by orders of magnitude."),
    *_figure("Fig. 5", "adult-sigma", "sigma", "noise on the parameters; ridge, n = 30, λ = 0, p_x = 5", -1,
             "advantage and leakage 'both decrease'"),
    Claim("membership", "DP baseline", "Yeom's |advantage| against DP-SGD's ε (n = 20, p_x = 40, over-fitted)",
          "— (not in the paper)", "adult-dp", Trend(ADVANTAGE, "epsilon", 1, {"n": 20.0}), kind=OWN,
          caveat="putlab's own baseline: the paper treats (ε, δ)-DP as Gaussian noise on the parameters (its "
                 "Corollary 2) and trains no DP-SGD."),
    Claim("membership", "DP baseline", "test accuracy against ε (n = 20)", "— (not in the paper)", "adult-dp",
          Trend(UTILITY_ACCURACY, "epsilon", 1, {"n": 20.0}), kind=OWN,
          caveat="putlab's own baseline: the paper reports no accuracy."),
)

"""The privatizer paper (Bertran et al., ``Learning data-derived privacy preserving representations from information
metrics``): its Gaussian-mixture experiment (§ 7.2, Figs. 6–7), its Theorem 3.3 bound and its Algorithms 2–3 on that
mixture, and putlab's own runs of its Algorithm 1 on AMNIST (the paper has no MNIST experiment)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from core.metric_names import STRONGEST_ATTACK, UTILITY_ACCURACY
from core.numbers import readable
from platform.papers.claim import ABOVE, LEVEL, OWN, REPRODUCTION, SANITY, UNAVAILABLE, Claim, Paper, Study
from platform.papers.collapse import Release
from platform.papers.measures import AxisDifference, EveryPoint, NotRun, PointMetric, Trend
from platform.papers.statistics import Measured, over_trials, select_where, t_interval
from platform.papers.study_runs import StudyRuns, seed_count
from search_spaces.amnist import AMNIST_TRAIN

PAPER = Paper("privatizer", "Privatizer (learning data-derived privacy-preserving representations): GMM, and AMNIST as "
                            "putlab's own")

STUDIES: tuple[Study, ...] = (
    # the thickness attackers only: the claims read the secret terms and the strongest attacker, not membership
    # every AMNIST training record released, not the quick 5,000: no record is left for a curve's 200 % point, and no
    # row reads a curve; a collapsed release: the data user's digit classifier on it at chance
    Study("privatizer", "amnist-privatizer",
          extra=("--set", "algorithm=1", "--no-comparison-grids", "--attackers", "deep_raw,thickness", "--set",
                 f"attack_records={AMNIST_TRAIN}", "--no-learning-curve"),
          release=Release("amnist", UTILITY_ACCURACY)),
    # the paper's settings as far as its text gives them (α every 0.05, longer training, more samples): about 17 minutes
    # a seed on 2 CPUs, run a seed a part; six seeds: the signed-rank test can reach p = 0.031
    Study("gmm", "gmm", profile="paper", seeds=6),
    # the paper's three algorithms side by side at its intermediate codependence (Algorithm 1 again, as the pair's base)
    Study("gmm-algorithms", "gmm", seeds=6, extra=("--set", "algorithm=1,2,3", "--set", "k=0.4")),
)

MAX_ATTACK = STRONGEST_ATTACK
GAP = "leakage/gap"


@dataclass(frozen=True)
class OverTrials:
    """``metric`` over every trial with the grid values ``where`` (all α, all seeds): mean, t interval."""

    metric: str
    where: dict[str, float] = field(default_factory=dict)

    def __call__(self, runs: StudyRuns) -> Measured:
        trials = select_where(runs.trials, self.where)
        return over_trials(trials[self.metric], trials) if self.metric in trials else Measured(math.nan,
                                                                                                text="not measured")

    def describe(self) -> str:
        at = ", ".join(f"{k} = {readable(v)}" for k, v in self.where.items())
        return f"`{self.metric}` over every trial" + (f" at {at}" if at else "")


@dataclass(frozen=True)
class BoundMargin:
    """Theorem 3.3 per trial: min(I(U;X|Q) − αK, I(S;Q) − (1 − α)K), the smaller slack of its two bounds (≥ 0 where
    the trial's filter meets both), or with ``utility_only`` the first slack alone (at k = 0 the two sum to 0, so both
    bounds hold only where it is 0), over the trials with grid values ``where``. Per α, the mean over its seeds with
    its t interval: the value is the lowest α's mean and the interval runs from the lowest of the α's lower ends to
    the lowest of their upper ends, so the whole interval clears 0 only where every α's does (none where an α has
    none); each α's seeds are a group, for a level."""

    where: dict[str, float] = field(default_factory=dict)
    utility_only: bool = False
    utility: str = "leakage/i_uxq"
    secret: str = "leakage/i_sq"
    bound: str = "leakage/bound_k"

    def __call__(self, runs: StudyRuns) -> Measured:
        trials = select_where(runs.trials, self.where).reset_index(drop=True)
        if any(c not in trials for c in (self.utility, self.secret, self.bound, "alpha")) or trials.empty:
            return Measured(math.nan, text="not measured")
        alpha, k_bound = trials["alpha"].astype(float), trials[self.bound].astype(float)
        slack = trials[self.utility] - alpha * k_bound
        if not self.utility_only:
            slack = np.minimum(slack, trials[self.secret] - (1 - alpha) * k_bound)
        trials = trials.assign(slack=slack).dropna(subset=["slack"])
        if trials.empty:
            return Measured(math.nan, text="not measured")
        per_alpha = {float(a): g["slack"].astype(float) for a, g in trials.groupby("alpha")}
        means = {a: float(v.mean()) for a, v in per_alpha.items()}
        ends = [t_interval(v) for v in per_alpha.values()]
        lowest = min(means, key=lambda a: means[a])
        shown = ", ".join(f"{readable(a)}: {readable(m)}" for a, m in means.items())
        low, high = (float(np.min([e[i] for e in ends])) for i in (0, 1))  # NaN if any α lacks an interval
        return Measured(means[lowest], low, high, text=f"lowest {readable(means[lowest])} [{readable(low)}, "
                        f"{readable(high)}] (per α: {shown})", seeds=seed_count(trials),
                        band=f"each α's mean over its seeds with its 95 % t interval; lowest at α = {readable(lowest)}",
                        groups=tuple(tuple(v) for v in per_alpha.values()))

    def describe(self) -> str:
        at = ", ".join(f"{k} = {readable(v)}" for k, v in self.where.items())
        read = (f"`{self.utility}` − α·`{self.bound}`" if self.utility_only else
                f"min(`{self.utility}` − α·`{self.bound}`, `{self.secret}` − (1 − α)·`{self.bound}`)")
        return f"{read} per trial, each α over its seeds" + (f" at {at}" if at else "")


FIG6_ALPHAS = (0.1, 0.5, 0.8)  # the α of the paper's Fig. 6, where the loss weighs both its terms
GMM_SETTING = "ρ = β = 0.5, σ = 0.05, linear filter Q = θx + z, z ~ N(0, I), Algorithm 1"
GMM_CAVEAT = ("The paper shows Fig. 7 as plots (no numbers; its sample sizes, training steps and α grid are not in the "
              "text) of the best validation loss so far, with informations read by its learned estimators. putlab "
              "reports the filter after the paper profile's last step (5,000 samples, 1,000 filter steps, α every 0.05 "
              "from 0 to 1) and computes the informations from the mixture's exact densities on 100,000 Monte-Carlo "
              "samples. "
              "'Reaching the bound' is read as a gap level with 0 within ±0.02 nats. At α = 0 and α = 1 one loss term "
              "is switched off, so the loss does not seek the bound there.")
THEOREM = ("The text's statement of Theorem 3.3 lost its displayed bounds; they are read from the proof's conclusion "
           "(Eq. 19). It bounds the minimiser of Eq. 6, which a trained filter only approaches, so a negative margin "
           "may mean that the filter has not reached that minimiser rather than that the bound fails.")
ALGORITHMS = ("The paper states this without a measurement: no experiment of it names Algorithm 2, and Eq. 10 "
              "(Algorithm 3) runs only on faces (§§ 5.1, 5.3: FaceScrub with pre-trained VGGFace2 and DEXNet models, "
              "which putlab lacks). putlab's frozen estimators are trained on raw x (σ = 0.05) and read q = θx + z "
              "with unit noise; a positive difference means the frozen algorithm ends farther from the bound at the "
              "same α and seed.")
FACE_CAVEAT = ("putlab's privatizer runs the paper's Algorithm 1 on the Gaussian mixture of § 7.2 and on AMNIST; the "
               "face experiments need a filter network (the paper's stochastic UNET) on 3-channel face images and the "
               "paper's pre-trained estimators, so no row of this paper reads a face")
AMNIST_OWN = "— (the paper has no MNIST experiment)"
AMNIST_CAVEAT = "putlab's own use of the paper's Algorithm 1 on AMNIST (digit kept, stroke thickness hidden)"

CLAIMS: tuple[Claim, ...] = (
    # § 7.2, Figs. 6–7: the Gaussian mixture (k = 1: U, S independent; k = 0: S = 1 − U; k = 0.4 in between)
    Claim("privatizer", "Fig. 6", f"I(U;S) at k = 0.4 ({GMM_SETTING})", "I(U;S) = 0.19 nats (k = {1, 0.4, 0} ↔ "
          "{0, 0.19, 0.69})", "gmm", OverTrials("leakage/i_us", {"k": 0.4}), 0.19, kind=SANITY, tolerance=0.005,
          caveat="analytic from the joint of Eq. 20 (whose (0, 0) cell the text misprints as (1, 0)): checks that "
                 "putlab's k is the paper's, up to the paper's two decimals"),
    Claim("privatizer", "Fig. 7 (middle row)", f"I(S;Q) + I(U;X|Q) − K at k = 1 (K = 0), α ∈ {{0.1, 0.5, 0.8}}; "
          f"{GMM_SETTING}",
          "\u201cperfectly able to reach any point in the optimal bound\u201d (gap 0)", "gmm",
          EveryPoint(GAP, 0.0, {"k": 1.0}, {"alpha": FIG6_ALPHAS}), 0.0, direction=LEVEL,
          caveat=GMM_CAVEAT + " 'Any point' is read as every α of the paper's Fig. 6 (0.1, 0.5 and 0.8), each level "
          "with 0; α = 0 and 1 are left out because the loss does not seek the bound there."),
    Claim("privatizer", "Fig. 7 (middle row)", f"I(S;Q) + I(U;X|Q) − K at k = 0 (S = 1 − U, K ≈ ln 2), every α; "
          f"{GMM_SETTING}", "\u201cperfectly able to reach any point in the optimal bound\u201d (gap 0)", "gmm",
          OverTrials(GAP, {"k": 0.0}), 0.0, kind=SANITY,
          caveat="With S = 1 − U, I(S;Q) = I(U;Q) for every filter, so I(S;Q) + I(U;X|Q) = I(U;X) = K: the gap is 0 by "
                 "construction (putlab computes both from the same samples), a check of putlab's estimator, not of "
                 "the paper's filter"),
    Claim("privatizer", "Fig. 7 (middle row)", f"I(S;Q) + I(U;X|Q) − K at k = 0.4 (K ≈ 0.19 nats), α = 0.1; "
          f"{GMM_SETTING}", "\u201ccapable of reaching the bound in the region where no utility is compromised\u201d "
          "(gap 0 at low α)", "gmm", EveryPoint(GAP, 0.0, {"k": 0.4, "alpha": 0.1}), 0.0, direction=LEVEL,
          caveat=GMM_CAVEAT + " 'The region where no utility is compromised' is read as α = 0.1, the lowest α of the "
          "paper's Fig. 6 (\u201cas α increases, the amount of utility the filter allows gets gradually smaller\u201d); "
          "at α = 0 the loss has no privacy term and does not seek the bound."),
    Claim("privatizer", "Fig. 7 (middle row)", f"gap at k = 0.4 minus gap at k = 1, at α = 0.8 (Fig. 6's most private "
          f"α), paired by seed; {GMM_SETTING}", "\u201cnot capable of following the optimal tradeoff line for higher "
          "levels of privacy\u201d (k = 0.4 farther from the bound than k = 1)", "gmm",
          AxisDifference(GAP, "k", 0.4, 1.0, {"alpha": 0.8}), caveat=GMM_CAVEAT),
    # Theorem 3.3: at the loss's minimiser, I(U;X|Q) ≥ αK and I(S;Q) ≥ (1 − α)K, K = I(U;S) − I(U;S|X)
    *(Claim("privatizer", "Theorem 3.3 (Eq. 19)", f"k = {readable(k)} ({about}): min(I(U;X|Q) − αK, I(S;Q) − "
            f"(1 − α)K) per trial, each α over its seeds; {GMM_SETTING}", "I(U;X|Q) ≥ αK and I(S;Q) ≥ (1 − α)K for "
            "the solution of Eq. 6", "gmm", BoundMargin({"k": k}), 0.0, direction=ABOVE, kind=kind,
            caveat=f"{THEOREM} {note}")
      for k, about, kind, note in (
          (1.0, "K = 0", SANITY, "At k = 1, K is 0 (putlab's estimate, −I(U;S|X), is at most 0): the bound says "
                                 "only that both informations are non-negative."),
          (0.4, "K ≈ 0.19 nats", REPRODUCTION, "The bound holds where every α's interval clears 0."))),
    Claim("privatizer", "Theorem 3.3 (Eq. 19)", f"k = 0 (K ≈ ln 2): I(U;X|Q) − αK per trial, each α over its seeds; "
          f"{GMM_SETTING}", "I(U;X|Q) ≥ αK and I(S;Q) ≥ (1 − α)K for the solution of Eq. 6, which at k = 0 means "
          "I(U;X|Q) = αK", "gmm", BoundMargin({"k": 0.0}, utility_only=True), 0.0, direction=LEVEL,
          caveat=f"{THEOREM} At k = 0 the two slacks sum to 0 (I(S;Q) + I(U;X|Q) = K, the SANITY row above), so both "
                 "are ≥ 0 only where I(U;X|Q) = αK exactly; the row tests that level at every α, within ±0.02 nats."),
    # Algorithms 2 (Eq. 9, the provider's utility classifier fixed) and 3 (Eq. 10, both classifiers fixed)
    Claim("privatizer", "§ 4.1 (Eq. 9, Algorithm 2)", "gap of Algorithm 2 minus Algorithm 1 at k = 0.4, paired by α "
          "and seed (ρ = β = 0.5, σ = 0.05, linear filter)", "\u201ca more challenging scenario, with worse tradeoff "
          "characteristics\u201d", "gmm-algorithms", AxisDifference(GAP, "algorithm", 2, 1),
          substitute="§ 7.2's mixture", caveat=ALGORITHMS),
    Claim("privatizer", "§ 4.2 (Eq. 10, Algorithm 3)", "gap of Algorithm 3 minus Algorithm 1 at k = 0.4, paired by α "
          "and seed", "— (no comparison in the paper)", "gmm-algorithms", AxisDifference(GAP, "algorithm", 3, 1),
          kind=OWN, caveat=ALGORITHMS),
    # §§ 5.1–5.3: the face experiments, which need data sets and pre-trained networks putlab does not have
    Claim("privatizer", "§ 5.1, Table 1", "top-5 subject accuracy after sanitization at several α, for consenting "
          "(CU), observed private (OPU) and unobserved private users (UPU); stochastic UNET filter, Algorithm 3",
          "\u201cfor α = 0.4, we significantly block OPU and UPU while preserving CU\u201d (the table's numbers are "
          "lost in the text)", "", NotRun("top-5 subject accuracy per user group and α on sanitized FaceScrub"),
          needs=UNAVAILABLE.format("FaceScrub", "a pre-trained VGGFace2 subject detector"), caveat=FACE_CAVEAT),
    Claim("privatizer", "§ 5.1, Fig. 3", "sanitized images of consenting and nonconsenting users",
          "\u201cThe identity of consenting users is still easily verified, while the identity of nonconsenting "
          "users is effectively censored\u201d", "", NotRun("released images per user group"),
          needs=UNAVAILABLE.format("FaceScrub", "a pre-trained VGGFace2 subject detector"), caveat=FACE_CAVEAT),
    Claim("privatizer", "§ 5.2, Table 2", "gender (utility) and emotion (secret, smiling or not) detection on raw "
          "and sanitized CelebA, Xception estimators; U and S independent", "gender 94.2 % / 94.5 % raw, 91.2 % / "
          "96.1 % sanitized; emotion 93.3 % / 92.0 % raw, 54.0 % / 60.0 % sanitized (columns 'Male' and 'Female'; "
          "the text's table is garbled)", "", NotRun("gender and emotion accuracy on raw and sanitized CelebA"),
          needs=UNAVAILABLE.format("CelebA", "Xception gender and emotion networks"), caveat=FACE_CAVEAT),
    Claim("privatizer", "§ 5.2, Fig. 4", "CelebA images before and after sanitization", "\u201cIt is visually "
          "possible to identify the gender of the subject but not their emotion\u201d", "",
          NotRun("released CelebA images"), needs=UNAVAILABLE.format("CelebA", "Xception gender and emotion networks"),
          caveat=FACE_CAVEAT),
    Claim("privatizer", "§ 5.3, Fig. 5", "gender probabilities of a fixed DEXNet gender detector and top-5 subject "
          "accuracy of VGGFace2 on sanitized FaceScrub, against α; stochastic UNET and FaderNet + UNET (Eq. 10)",
          "\u201csanitized images produce output gender probabilities close to the dataset prior even for relatively "
          "low α values\u201d; \u201calmost perfect privacy while maintaining reasonable utility performance\u201d",
          "", NotRun("gender probabilities and top-5 subject accuracy against α on sanitized FaceScrub"),
          needs=UNAVAILABLE.format("FaceScrub", "pre-trained DEXNet (WideResNet) and VGGFace2 (ResNet-50) networks and a "
                             "pre-trained gender FaderNet"), caveat=FACE_CAVEAT),
    # putlab's own: Algorithm 1 on AMNIST (U = digit, S = thickness)
    Claim("privatizer", "— (putlab's AMNIST)", "secret term read by a freshly retrained estimator, along α", AMNIST_OWN,
          "privatizer", Trend("leakage/retrained_secret_term", "alpha", -1, {"algorithm": 1.0}), kind=OWN,
          caveat=AMNIST_CAVEAT),
    Claim("privatizer", "— (putlab's AMNIST)", "in-game secret term at α = 0.99", AMNIST_OWN, "privatizer",
          PointMetric("leakage/secret_term", {"alpha": 0.99, "algorithm": 1.0}), kind=OWN, caveat=AMNIST_CAVEAT),
    Claim("privatizer", "— (putlab's AMNIST)", "retrained secret term at α = 0.99 (beside the in-game one above)",
          AMNIST_OWN, "privatizer", PointMetric("leakage/retrained_secret_term", {"alpha": 0.99, "algorithm": 1.0}),
          kind=OWN, caveat=AMNIST_CAVEAT),
    Claim("privatizer", "— (putlab's AMNIST)", "strongest attacker along α", AMNIST_OWN, "privatizer",
          Trend(MAX_ATTACK, "alpha", -1, {"algorithm": 1.0}), kind=OWN,
          caveat=f"{AMNIST_CAVEAT}; where a trial's deep attacker hit its 48-epoch cap (the study's run: seed 0 at "
                 "α = 1 and seed 2 at α = 0.99), retrained at three times the cap it stopped by patience within 0.03 "
                 "of its logged reading ([measurements](measurements.md#the-privatizers-capped-attackers))"),
)

"""The privatizer paper (Bertran et al., ``Learning data-derived privacy preserving representations from information
metrics``): its GMM information bound, and putlab's own runs of its algorithm on AMNIST."""
from __future__ import annotations

import math

from platform.papers.claim import OWN, SANITY, Claim, Paper, Study
from platform.papers.measures import BestUnder, PointMetric, Trend

PAPER = Paper("privatizer", "Privatizer (learning data-derived privacy-preserving representations): GMM, and AMNIST as "
                            "putlab's own")

STUDIES: tuple[Study, ...] = (
    # the thickness attackers only: the claims read the secret terms and the strongest attacker, not membership
    Study("privatizer", "amnist-privatizer",
          extra=("--set", "algorithm=1", "--no-baseline", "--attackers", "deep_raw,thickness")),
    Study("gmm", "gmm"),
)

MAX_ATTACK = "attack/max/accuracy"

CLAIMS: tuple[Claim, ...] = (
    Claim("privatizer", "Fig. (GMM)", "I(S;Q) + I(U;X|Q) − K at k = 1 (linear filter)", "reaches the bound K (gap 0)",
          "gmm", BestUnder("leakage/gap", "leakage/gap", math.inf, higher_is_better=False, where={"k": 1.0}), 0.0),
    Claim("privatizer", "Fig. (GMM)", "I(S;Q) + I(U;X|Q) − K at k = 0 (linear filter)", "reaches the bound K (gap 0)",
          "gmm", BestUnder("leakage/gap", "leakage/gap", math.inf, higher_is_better=False, where={"k": 0.0}), 0.0),
    Claim("privatizer", "§ AMNIST", "secret term read by a freshly retrained estimator, along α", "falls as α → 1",
          "privatizer", Trend("leakage/retrained_secret_term", "alpha", -1, {"algorithm": 1.0})),
    Claim("privatizer", "§ AMNIST", "in-game secret term at α = 0.99", "—", "privatizer",
          PointMetric("leakage/secret_term", {"alpha": 0.99, "algorithm": 1.0})),
    Claim("privatizer", "§ AMNIST", "retrained secret term at α = 0.99 (beside the in-game one above)", "—",
          "privatizer", PointMetric("leakage/retrained_secret_term", {"alpha": 0.99, "algorithm": 1.0})),
    Claim("privatizer", "§ AMNIST", "strongest attacker along α", "falls as α → 1", "privatizer",
          Trend(MAX_ATTACK, "alpha", -1, {"algorithm": 1.0})),
)

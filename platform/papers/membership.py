"""The membership paper (Farokhi & Kaafar, ``Modelling and quantifying membership information leakage in machine
learning``): ρ_KL on Adult against n, λ, p_x and σ, the network, and putlab's own DP-SGD baseline."""
from __future__ import annotations

from platform.papers.claim import OWN, Claim, Paper, Study
from platform.papers.measures import PointMetric, Trend

PAPER = Paper("membership", "Membership information leakage (Farokhi & Kaafar): Adult")

STUDIES: tuple[Study, ...] = (
    Study("adult-n", "adult-membership", "paper-n"),
    Study("adult-lam", "adult-membership", "paper-lam"),
    Study("adult-p_x", "adult-membership", "paper-p_x"),
    Study("adult-sigma", "adult-membership", "paper-sigma"),
    Study("adult-net", "adult-membership", "paper-net-n"),
    Study("adult-n-probes", "adult-membership", "paper-n-probes"),
    Study("adult-dp", "adult-dp"),
)

ADULT_RHO = "leakage/kl/rho/median"  # the box plots' centre; the mean over records is heavy-tailed

CLAIMS: tuple[Claim, ...] = (
    Claim("membership", "Fig. 1", "ρ_KL against n (λ = 1e-3, p_x = 5, σ = 0)", "falls with n", "adult-n",
          Trend(ADULT_RHO, "n", -1)),
    Claim("membership", "Fig. 2", "ρ_KL against λ at n = 10", "falls with λ", "adult-lam", Trend(ADULT_RHO, "lam", -1)),
    Claim("membership", "Fig. 3", "ρ_KL against p_x at n = 10", "rises with p_x", "adult-p_x", Trend(ADULT_RHO, "p_x", 1)),
    Claim("membership", "Fig. 4", "ρ_KL against σ at n = 30", "falls with σ", "adult-sigma",
          Trend(ADULT_RHO, "sigma", -1)),
    Claim("membership", "Fig. 1", "mean ρ_KL over records at n = 10 (the median above)", "large at small n", "adult-n",
          PointMetric("leakage/kl/rho", {"n": 10}),
          caveat="a few records with extreme features dominate the mean at n = 10; the trends use the median"),
    Claim("membership", "§ network", "ρ_KL of the 5×50 tanh network on 6 probe outputs against n (λ = 1e-3, p_x = 5; "
          "a lower bound on its parameters' ρ)", "falls with n", "adult-net", Trend(ADULT_RHO, "n", -1)),
    Claim("membership", "§ network", "ridge regression's ρ_KL on the same 6 probe outputs against n (equal to its "
          "parameters' ρ; the network's comparison)", "falls with n", "adult-n-probes", Trend(ADULT_RHO, "n", -1)),
    Claim("membership", "DP baseline", "Yeom's |advantage| against DP-SGD's ε (n = 20, p_x = 40, over-fitted)",
          "(not in the paper) falls as ε shrinks", "adult-dp",
          Trend("attack/yeom/advantage_abs", "epsilon", 1, {"n": 20.0})),
    Claim("membership", "DP baseline", "test accuracy against ε (n = 20)", "(not in the paper) falls as ε shrinks",
          "adult-dp", Trend("utility/accuracy", "epsilon", 1, {"n": 20.0})),
)

"""The α-MI releaser paper (``α-Mutual Information: a tunable privacy measure for privacy protection in data
sharing``): its AMNIST and ECO claims, and the studies that test them."""
from __future__ import annotations

import math

from platform.papers.claim import OWN, Claim, Paper, Study
from platform.papers.measures import BestUnder, Drop, ParentMetric

PAPER = Paper("alpha-mi", "α-MI releaser (α-mutual information as a tunable privacy measure): AMNIST and ECO")

STUDIES: tuple[Study, ...] = (
    # the thickness attackers only (the claims read no membership attack): minutes instead of an hour on 2 CPUs
    Study("amnist", "amnist", extra=("--attackers", "deep_raw,thickness")),
    # the headline (Fig. 3: digit accuracy kept where the attacker reads about 0.6) at twice the quick scale
    Study("amnist-scale", "amnist", "scale", extra=("--attackers", "deep_raw,thickness")),
    Study("eco", "eco"),
    Study("eco-si", "eco-si"),
)

MAX_ATTACK = "attack/max/accuracy"
QUICK_SCALE = "the quick profile trains on 2,000 of AMNIST's 28,476 images for 4 epochs"
SYNTHETIC_ECO = ("the ECO studies run on the synthetic stand-in (the real files need `--set data_root=DIR`), whose "
                 "routines are the generator's, not the ECO households'")

CLAIMS: tuple[Claim, ...] = (
    Claim("alpha-mi", "§ AMNIST, raw images", "digit classifier on raw images", "97.25 % (balanced)", "amnist",
          ParentMetric("baseline/utility/accuracy"), 0.9725, caveat=QUICK_SCALE),
    Claim("alpha-mi", "§ AMNIST, raw images", "thickness attacker on raw images", "91.50 % (balanced)", "amnist",
          ParentMetric("baseline/attack/deep/accuracy"), 0.915, caveat=QUICK_SCALE),
    Claim("alpha-mi", "Fig. 3", "digit accuracy of a freshly trained classifier on the release, where the strongest "
          "attacker reads ≤ 0.6", "digit accuracy nearly kept (≈ raw)", "amnist",
          BestUnder("utility/fresh_accuracy", MAX_ATTACK, 0.6), 0.9725, caveat=QUICK_SCALE),
    Claim("alpha-mi", "Fig. 3", "the same point read by a classifier trained on raw images (what a data user brings)",
          "—", "amnist", BestUnder("utility/fresh_accuracy", MAX_ATTACK, 0.6, report="utility/fixed_accuracy")),
    Claim("alpha-mi", "Fig. 3", "lowest strongest-attacker accuracy on the grid", "50 % (full privacy)", "amnist",
          BestUnder(MAX_ATTACK, MAX_ATTACK, math.inf, higher_is_better=False), 0.5,
          caveat="measured in the quick study: at λ ≥ 300 the in-game adversary (one step per releaser step) reads the "
          "release at chance while a freshly trained attacker still reads 0.68–0.84; four quick epochs on 2,000 images "
          "do not reach the game's equilibrium, and the releaser outruns its adversary instead of hiding S"),
    Claim("alpha-mi", "Fig. 3", "digit accuracy of a freshly trained classifier at the most private point above",
          "—", "amnist", BestUnder(MAX_ATTACK, MAX_ATTACK, math.inf, higher_is_better=False,
                                   report="utility/fresh_accuracy")),
    Claim("alpha-mi", "Fig. 4", "PSNR (dB) of the release at the most private point above", "—", "amnist",
          BestUnder(MAX_ATTACK, MAX_ATTACK, math.inf, higher_is_better=False, report="utility/psnr")),
    Claim("alpha-mi", "Fig. 4", "PSNR (dB) of the release at the point above (raw vs released test images)",
          "digit visible, thickness disguised (picture)", "amnist",
          BestUnder("utility/fresh_accuracy", MAX_ATTACK, 0.6, report="utility/psnr")),
    Claim("alpha-mi", "Fig. 3 (per α)", "hypervolume of the α = 1 front", "one curve per α", "amnist",
          ParentMetric("front/hypervolume/alpha_1")),
    Claim("alpha-mi", "Fig. 3 (per α)", "hypervolume of the α = ∞ front", "one curve per α", "amnist",
          ParentMetric("front/hypervolume/alpha_inf")),
    Claim("alpha-mi", "baseline", "share of front points beating Gaussian noise at equal utility", "(no noise baseline)",
          "amnist", ParentMetric("front/beats_noise_share")),
    # α-MI releaser on ECO
    Claim("alpha-mi", "§ ECO, raw", "occupancy attacker on raw consumption (pooled)", "> 90 %", "eco",
          ParentMetric("baseline/attack/deep/accuracy"), 0.9,
          caveat="putlab's ECO here is 5 households × 188 days in 24-hour windows every 2 hours; the hour alone reads 0.76",
          direction="above"),
    Claim("alpha-mi", "§ ECO, PUT", "attacker fall below raw (pooled) with NE ≤ 0.26", "> 26 points", "eco",
          Drop("attack/deep/accuracy", "baseline/attack/deep/accuracy", "utility/ne_energy", 0.26), 0.26,
          caveat="pooled over hours, the hour alone reads 0.762 on these windows (`baseline/attack/hour_only/accuracy`): a "
          "competent attacker knows the hour, so it falls at most about 0.22 below raw (0.981 − 0.762) whatever the "
          "release, and the learned attacker's 0.75 sits just under that floor; the within-hour row below has chance "
          f"0.5 at every hour; {SYNTHETIC_ECO}", direction="above"),
    Claim("alpha-mi", "§ ECO, PUT", "attacker fall below raw within hours (balanced accuracy per hour of day, chance 0.5) "
          "with NE ≤ 0.26", "> 26 points", "eco",
          Drop("attack/deep/accuracy_within_hour", "baseline/attack/deep/accuracy_within_hour", "utility/ne_energy",
               0.26), 0.26, caveat=f"two quick epochs of the game; {SYNTHETIC_ECO}", direction="above"),
    Claim("alpha-mi", "§ ECO + SI", "attacker on side information only (weekday, month)", "57.8 %", "eco-si",
          ParentMetric("baseline/attack/si_only/accuracy"), 0.578,
          caveat=f"{SYNTHETIC_ECO}: what weekday and month say about occupancy is set by the generator"),
)

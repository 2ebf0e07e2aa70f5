"""The Cloak paper (Mireshghallah et al., ``A principled approach to learning stochastic representations for privacy
in deep neural inference``): its MNIST claims and the Gaussian-noise comparison."""
from __future__ import annotations

from platform.papers.claim import OWN, Claim, Paper, Study
from platform.papers.measures import BestUnder, Difference, ParentMetric

PAPER = Paper("cloak", "Cloak (learned stochastic representations for private inference): MNIST")

STUDIES: tuple[Study, ...] = (
    Study("cloak", "cloak-mnist", extra=("--set", "M=1.5", "--set", "T=1.0")),
)

EQUAL_ACC = "baseline/gaussian_equal_acc"  # Cloak's Gaussian-noise baseline at Cloak's own target accuracy

CLAIMS: tuple[Claim, ...] = (
    Claim("cloak", "§ MNIST", "pre-trained target on raw test images", "99.29 %", "cloak",
          ParentMetric("baseline/target/mnist_test_accuracy"), 0.9929,
          caveat="the target is a LeNet-5 trained a few epochs on the AMNIST subset, padded to 32×32"),
    Claim("cloak", "Table (overall)", "information removed (kNN, KSG) at ≤ 1.42 % accuracy loss", "85.01 %", "cloak",
          BestUnder("leakage/info_removed_knn", "utility/accuracy_loss", 0.0142), 0.8501,
          caveat="quick training (8 epochs) on 5,000 images; the paper's kNN estimator runs on raw pixels, putlab's on 16 "
          "principal components (docs/estimators.md)"),
    Claim("cloak", "§ baseline", "Cloak − Gaussian noise at equal target accuracy: information removed (kNN)",
          "Cloak ahead", "cloak", Difference("leakage/info_removed_knn", f"{EQUAL_ACC}/leakage/info_removed_knn", 1),
          caveat="measured in the quick study: Cloak's learned noise is polarised (`leakage/sigma_polarised` 0.83–0.90). "
              "At λ = 10 and 100 it suppresses 31 % and 14 % of the features and leaves the rest almost clean, so the "
              "kNN estimator still finds 5.45–5.67 of the image's 5.81 nats; Gaussian noise at the same accuracy "
              "(σ 0.24–0.25 on every pixel) leaves 4.6–4.7. At λ = 1 (74 % suppressed) the two are level"),
    Claim("cloak", "§ baseline", "Cloak − Gaussian noise at equal target accuracy: retrained thickness attacker",
          "(not in the paper)", "cloak", Difference("attack/deep/accuracy", f"{EQUAL_ACC}/attack/deep/accuracy", -1),
          caveat="the attacker reads Cloak's release and the equal-accuracy noise within 0.02 of each other at every λ, "
              "ahead at some and behind at others"),
)

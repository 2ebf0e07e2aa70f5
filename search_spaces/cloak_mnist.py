"""Cloak on MNIST at 32×32 (docs/mechanisms.md#cloak): learned noise and suppression over a cached LeNet-5 "digit > 5" target.

Grid axes: λ (weight of the target's cross-entropy against the noise term; larger keeps more accuracy), T (σ ≥ T is
suppressed; T ≥ M suppresses nothing) and M (the largest σ). The privacy attackers read the thickness (thin vs
thick) of the AMNIST subset, so the front compares with the releaser's ``amnist`` front on the same attackers.

The ``paper`` profile takes the MNIST settings of Cloak's paper and its code: M = 1.5, batch 128, Adam at 0.01, ρ
initialised at −9, 40 epochs of noise training, 20 noise draws at evaluation, and the paper's noise weights
c ∈ {3, 0.12, 0.1, 0.08, 0.05, 0.01} as λ = 1/c (its loss is CE − c·log mean σ; here −log mean σ² + λ·CE).
"""
from core.metric_names import INFO_REMOVED_KNN, STRONGEST_ATTACK, UTILITY_ACCURACY
from search_spaces import PSNR_AXIS, Axis, Farm, Front, OptunaRange, Presentation, Preset, Profile
from trainables.cloak.config import CloakConfig
from trainables.cloak.mechanism import Cloak

PRESET = Preset(
    name="cloak-mnist",
    mechanism=Cloak,
    dataset="mnist32",
    base=CloakConfig().as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: a tiny subset, two perturbation epochs and one suppression epoch, two trials (for tests)",
            config={"n_train": 512, "n_test": 256, "epochs": 3, "suppression_epochs": 1, "target_epochs": 1, "cloak_lr": 0.2,
                    "attack_epochs": 1, "noise_draws": 2},
            grid={"lam": [1.0, 100.0], "T": [1.0], "M": [1.5]},
            optuna_samples=2,
        ),
        "quick": Profile(
            description="minutes on 2 CPUs: 5,000 AMNIST training images, 6 perturbation + 2 suppression epochs, "
                        "λ × T × M = 12 trials",
            config={"n_train": 5000, "n_test": 1500, "epochs": 8, "suppression_epochs": 2},
            grid={"lam": [1.0, 10.0, 100.0], "T": [0.5, 1.0], "M": [1.0, 1.5]},
            optuna_samples=12,
        ),
        "paper": Profile(
            description="the paper's MNIST settings (M = 1.5, batch 128, Adam 0.01, ρ from −9, 40 noise epochs, "
                        "its c grid as λ = 1/c) on full AMNIST (28,476 / 4,681 images), for a GPU cluster",
            config={"n_train": None, "n_test": None, "epochs": 50, "suppression_epochs": 10, "target_epochs": 20,
                    "batch_size": 128, "cloak_lr": 0.01, "rho_init": -9.0, "M": 1.5,
                    "attack_epochs": 100, "attack_search": "full", "noise_draws": 20, "checkpoint_every": 10},
            grid={"lam": [1 / 3, 1 / 0.12, 10.0, 1 / 0.08, 20.0, 100.0], "T": [0.25, 0.5, 0.75, 1.0, 1.25], "M": [1.5]},
            optuna_samples=100,
        ),
    },
    default_profile="quick",
    optuna={"lam": OptunaRange(0.1, 1000.0, log=True), "T": OptunaRange(0.1, 1.5), "M": OptunaRange(0.5, 2.0)},
    front=Front(
        axes=(
            Axis(UTILITY_ACCURACY, higher_is_better=True, bound=0.0, ideal=1.0),
            Axis(STRONGEST_ATTACK, higher_is_better=False, bound=1.0, ideal=0.5),
            PSNR_AXIS,  # Cloak's sifted images against the raw ones
        ),
        objectives=((UTILITY_ACCURACY, "max"), (INFO_REMOVED_KNN, "max")),
    ),
    farm=Farm(
        attackers=("deep", "deep_raw", "thickness", "yeom", "rmia", "lira"),
        privacy=("deep", "deep_raw", "thickness"),
    ),
    label_keys=("lam", "T", "M"),
    presentation=Presentation(
        trend_metrics=(UTILITY_ACCURACY, "utility/gaussian_accuracy", "leakage/info_removed", INFO_REMOVED_KNN,
                       "baseline/gaussian_equal_acc/leakage/info_removed_knn", "leakage/suppression_ratio",
                       STRONGEST_ATTACK),
        checkpoint_figures=Cloak.figures,
    ),
)

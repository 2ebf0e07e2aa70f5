"""AMNIST α-MI releaser: hide stroke thickness (thin vs thick) while keeping the digit
(docs/mechanisms.md#on-annotated-mnist-amnist)."""
import math

from search_spaces import OptunaRange, Preset, Profile, lambda_zero_anchor
from trainables.releaser.config import ReleaserConfig
from trainables.releaser.mechanism import Releaser

PRESET = Preset(
    name="amnist",
    mechanism=Releaser,
    dataset="amnist",
    base=ReleaserConfig(alpha=1.0, lam=0.0, adv_steps=1, pretrain_epochs=2).as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: a tiny subset, one epoch, two trials (for tests)",
            config={"n_train": 512, "n_test": 256, "epochs": 1, "pretrain_epochs": 1, "attack_epochs": 1, "width": 8},
            grid={"alpha": [2.0], "lam": [0.0, 10.0], "adv_steps": [1]},
            optuna_samples=2,
        ),
        "quick": Profile(
            description=("minutes on 2 CPUs: 2,000 training images, 4 epochs (attacked at the end), 5 trials "
                         "(the λ = 0 anchor once, α ∈ {1, ∞} at λ = 1 and 3)"),
            config={"n_train": 2000, "n_test": 1000, "epochs": 4, "checkpoint_every": 4},
            grid={"alpha": [1.0, math.inf], "lam": [0.0, 1.0, 3.0], "adv_steps": [1]},
            optuna_samples=5,
        ),
        "paper": Profile(
            description="full AMNIST (28,476 / 4,681 images) at the paper's scale, for a GPU cluster",
            config={"n_train": None, "n_test": None, "epochs": 30, "attack_epochs": 100, "attack_search": "full", "width": 32,
                    "pretrain_epochs": 3, "checkpoint_every": 5},
            grid={
                "alpha": [0.5, 1.0, 1.5, 2.0, 5.0, 10.0, math.inf],
                "lam": [0.0, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0],
                "adv_steps": [1, 5],
            },
            optuna_samples=200,
        ),
    },
    default_profile="quick",
    optuna={
        "alpha": OptunaRange(0.3, 50.0, log=True),
        "lam": OptunaRange(0.0, 10.0),
        "adv_steps": OptunaRange(1, 5, integer=True),
    },
    pareto_axes=(
        {"metric": "utility/accuracy", "higher_is_better": True, "bound": 0.0, "ideal": 1.0},
        {"metric": "attack/max/accuracy", "higher_is_better": False, "bound": 1.0, "ideal": 0.5},
    ),
    farm_attackers=("deep_raw", "thickness", "yeom", "rmia", "lira"),
    privacy_attackers=("deep", "deep_raw", "thickness"),
    optuna_objectives=(("utility/accuracy", "max"), ("attack/deep/accuracy", "min")),
    label_keys=("alpha", "lam", "adv_steps"),
    trend_metrics=("utility/accuracy", "attack/max/accuracy", "leakage/normalised_alpha_mi"),
    checkpoint_figures=Releaser.figures,
    canonical=lambda_zero_anchor,
    noise_baseline=True,
)

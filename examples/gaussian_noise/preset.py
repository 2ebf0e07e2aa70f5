"""The sweep preset of the Gaussian-noise example:

    python -m platform.sweep --preset-file examples/gaussian_noise/preset.py --profile smoke

putlab loads this file with its folder importable, so ``mechanism`` below is the sibling mechanism.py.
"""
from mechanism import GaussianNoise, GaussianNoiseConfig

from search_spaces import OptunaRange, Preset, Profile

PRESET = Preset(
    name="gaussian-noise",
    mechanism=GaussianNoise,
    dataset="amnist",
    base=GaussianNoiseConfig().as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: 512 training images, one epoch, λ = 0 and λ = 30",
            config={"n_train": 512, "n_test": 256, "epochs": 1, "batch_size": 64, "width": 8, "attack_epochs": 1},
            grid={"lam": [0.0, 30.0]},
            optuna_samples=2,
        ),
        "quick": Profile(
            description="minutes on 2 CPUs: 2,000 training images, 4 epochs (attacked at the end), λ in {0, 1, 3, 10}",
            config={"n_train": 2000, "n_test": 1000, "epochs": 4, "checkpoint_every": 4},
            grid={"lam": [0.0, 1.0, 3.0, 10.0]},
            optuna_samples=4,
        ),
    },
    default_profile="quick",
    optuna={"lam": OptunaRange(0.0, 30.0)},
    pareto_axes=(
        {"metric": "utility/accuracy", "higher_is_better": True, "bound": 0.0, "ideal": 1.0},
        {"metric": "attack/max/accuracy", "higher_is_better": False, "bound": 1.0, "ideal": 0.5},
    ),
    optuna_objectives=(("utility/accuracy", "max"), ("attack/deep/accuracy", "min")),
    label_keys=("lam",),
    farm_attackers=("deep_raw", "thickness", "yeom", "rmia", "lira"),
    privacy_attackers=("deep", "deep_raw", "thickness"),
    checkpoint_figures=GaussianNoise.figures,
    trend_metrics=("utility/accuracy", "attack/max/accuracy", "train/sigma_mean"),
)

"""AMNIST privatizer: a stochastic U-Net hiding stroke thickness while keeping the digit (docs/mechanisms.md#privatizer).

Same data, attackers and Pareto axes as the ``amnist`` releaser preset, so the two fronts compare in MLflow.
``algorithm`` is a grid axis: 1 (every estimator learned) and 2 (the provider keeps its raw-data digit classifier).
"""
from core.metric_names import PSNR, STRONGEST_ATTACK, UTILITY_ACCURACY
from search_spaces import Farm, Front, OptunaRange, Presentation, Preset, Profile
from search_spaces.amnist import PRESET as RELEASER
from search_spaces.amnist import QUICK_ATTACKERS
from trainables.privatizer.config import PrivatizerConfig
from trainables.privatizer.mechanism import Privatizer

PRESET = Preset(
    name="amnist-privatizer",
    mechanism=Privatizer,
    dataset="amnist",
    base=PrivatizerConfig(pretrain_epochs=2).as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: a tiny subset, one epoch, two trials (for tests)",
            config={"n_train": 512, "n_test": 256, "epochs": 1, "pretrain_epochs": 1, "attack_epochs": 1, "width": 8},
            grid={"alpha": [0.0, 1.0], "algorithm": [2]},
            optuna_samples=2,
        ),
        "quick": Profile(
            description="minutes on 2 CPUs: the releaser's quick data and attackers (2,000 / 1,000 images, attackers "
                        "on releases of 5,000 records: a 5,000-record lower bound), 4 epochs (attacked at the end), 10 "
                        "estimator steps at 3× the "
                        "U-Net's Adam step per privatizer step (so a retrained attacker's secret term falls with α, "
                        "docs/mechanisms.md#privatizer), 10 trials",
            config={"n_train": 2000, "n_test": 1000, "epochs": 4, "checkpoint_every": 4, "estimator_steps": 10,
                    "estimator_lr": 3e-3, **QUICK_ATTACKERS},
            grid={"alpha": [0.0, 0.5, 0.9, 0.99, 1.0], "algorithm": [1, 2]},
            optuna_samples=10,
        ),
        "paper": Profile(
            description="full AMNIST (28,476 / 4,681 images), attackers on the release of all 28,476 training records, "
                        "α every 0.1 and near 1, all three algorithms, the quick profile's estimator schedule, for a "
                        "GPU cluster",
            config={"n_train": None, "n_test": None, "epochs": 30, "attack_epochs": 100, "attack_search": "full", "width": 32,
                    "pretrain_epochs": 3, "checkpoint_every": 5, "estimator_steps": 10, "estimator_lr": 3e-3},
            grid={"alpha": [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99, 1.0], "algorithm": [1, 2, 3]},
            optuna_samples=100,
        ),
    },
    default_profile="quick",
    optuna={"alpha": OptunaRange(0.0, 1.0), "algorithm": OptunaRange(1, 2, integer=True)},
    front=Front(
        axes=RELEASER.front.axes,
        objectives=RELEASER.front.objectives,
        by="algorithm",  # α traces each algorithm's curve (a per-α group would hold one point per algorithm)
    ),
    farm=Farm(
        attackers=RELEASER.farm.attackers,
        privacy=RELEASER.farm.privacy,
    ),
    label_keys=("alpha", "algorithm"),
    comparison_grids=("noise", "stroke-redraw", "digit-prototype"),
    presentation=Presentation(
        trend_metrics=(UTILITY_ACCURACY, STRONGEST_ATTACK, PSNR, "leakage/secret_term",
                       "leakage/retrained_secret_term", "leakage/utility_term"),
        checkpoint_figures=Privatizer.figures,
    ),
)

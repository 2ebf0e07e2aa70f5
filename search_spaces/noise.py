"""The plain Gaussian-noise baseline on an image data set (docs/mechanisms.md#gaussian-noise-baseline): the σ grid
that image fronts are compared against. ``--set dataset=cifar10`` (any registered image set) swaps the data."""
from core.metric_names import FRESH_ACCURACY, PSNR, STRONGEST_ATTACK
from search_spaces import Farm, Front, OptunaRange, Presentation, Preset, Profile
from search_spaces.amnist import PRESET as RELEASER
from search_spaces.amnist import QUICK_ATTACKERS
from trainables.noise.config import NoiseConfig
from trainables.noise.mechanism import NoiseBaseline

PRESET = Preset(
    name="noise",
    mechanism=NoiseBaseline,
    dataset="amnist",
    base=NoiseConfig().as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: a tiny subset, σ ∈ {0, 1} (for tests)",
            config={"n_train": 512, "n_test": 256, "attack_epochs": 1},
            grid={"sigma": [0.0, 1.0]},
            optuna_samples=2,
        ),
        "fast": Profile(
            description=("beside the releaser's default (fast) profile: its data and attackers (2,000 / 1,000 images, "
                         "attackers on releases of 5,000 records), σ ∈ {0, 0.3, 0.5, 1}: digit accuracy 0.97 to 0.65, the "
                         "fast front's range"),
            config={"n_train": 2000, "n_test": 1000, **QUICK_ATTACKERS},
            # measured on the quick profile (fresh digit accuracy / strongest attacker): σ = 0 0.972 / 1.0 (the raw
            # images), 0.1 0.969 / 0.957, 0.3 0.943 / 0.880, 0.5 0.885 / 0.864, 1 0.647 / 0.771, 2 0.376 / 0.663; the
            # fast front's digit accuracy runs 0.77 to 0.95, which σ = 0, 0.3, 0.5 and 1 bracket: σ = 0.1 adds nothing
            # between σ = 0 and 0.3, and σ = 2 lies below it
            grid={"sigma": [0.0, 0.3, 0.5, 1.0]},
            optuna_samples=4,
        ),
        "quick": Profile(
            description=("minutes on 2 CPUs: the releaser's quick data and attackers (2,000 / 1,000 images, attackers on "
                         "releases of 5,000 records), σ ∈ {0, 0.1, 0.3, 0.5, 1, 2}"),
            config={"n_train": 2000, "n_test": 1000, **QUICK_ATTACKERS},
            grid={"sigma": [0.0, 0.1, 0.3, 0.5, 1.0, 2.0]},
            optuna_samples=6,
        ),
        "paper": Profile(
            description="full AMNIST (28,476 / 4,681 images), eleven σ from 0 to 3, for a GPU cluster",
            config={"n_train": None, "n_test": None, "attack_epochs": 100, "attack_search": "full"},
            grid={"sigma": [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0]},
            optuna_samples=11,
        ),
    },
    default_profile="quick",
    optuna={"sigma": OptunaRange(0.0, 3.0)},
    front=Front(
        axes=RELEASER.front.axes,
        objectives=RELEASER.front.objectives,
    ),
    farm=Farm(
        attackers=("deep_raw", "thickness"),  # no trained network: the membership attackers have nothing to test
        privacy=RELEASER.farm.privacy,
    ),
    label_keys=("sigma",),
    presentation=Presentation(
        title="Gaussian noise",
        trend_metrics=(FRESH_ACCURACY, "utility/fixed_accuracy", STRONGEST_ATTACK, PSNR),
        checkpoint_figures=NoiseBaseline.figures,
    ),
)

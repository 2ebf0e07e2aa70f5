"""The stroke redraw baseline on a grayscale image set (docs/mechanisms.md#stroke-redraw-baseline): every stroke thinned
to its skeleton and redrawn with one pen, the pen's radius the grid axis. ``--set dataset=mnist32`` swaps the data."""
from core.metric_names import FRESH_ACCURACY, PSNR, STRONGEST_ATTACK
from search_spaces import Farm, Front, OptunaRange, Presentation, Preset, Profile
from search_spaces.amnist import PRESET as RELEASER
from search_spaces.amnist import QUICK_ATTACKERS
from trainables.stroke_redraw.config import StrokeRedrawConfig
from trainables.stroke_redraw.mechanism import StrokeRedrawBaseline

PRESET = Preset(
    name="stroke-redraw",
    mechanism=StrokeRedrawBaseline,
    dataset="amnist",
    base=StrokeRedrawConfig().as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: a tiny subset, one pen (radius 1) (for tests)",
            config={"n_train": 512, "n_test": 256, "attack_epochs": 1},
            grid={"radius": [1.0], "blur": [0.5], "threshold": [0.5]},
            optuna_samples=1,
        ),
        "fast": Profile(
            description=("beside the releaser's default (fast) profile: its data and attackers (2,000 / 1,000 images, "
                         "attackers on releases of 5,000 records), one pen: radius 1, blur 0.5"),
            config={"n_train": 2000, "n_test": 1000, **QUICK_ATTACKERS},
            # measured on the quick profile (fresh digit accuracy / strongest attacker / PSNR): radius 1 0.938 / 0.822
            # / 16.2 dB, 1.5 0.931 / 0.824 / 15.4 dB, 2 0.929 / 0.822 / 12.6 dB: radius 1 dominates the wider pens
            grid={"radius": [1.0], "blur": [0.5], "threshold": [0.5]},
            optuna_samples=1,
        ),
        "quick": Profile(
            description=("minutes on 2 CPUs: the releaser's quick data and attackers (2,000 / 1,000 images, attackers on "
                         "releases of 5,000 records), pen radius ∈ {1, 2}, blur 0.5"),
            config={"n_train": 2000, "n_test": 1000, **QUICK_ATTACKERS},
            # measured on this profile (fresh digit accuracy / strongest attacker / PSNR): radius 1 0.938 / 0.822 /
            # 16.2 dB, 1.5 0.931 / 0.824 / 15.4 dB, 2 0.929 / 0.822 / 12.6 dB: a wider pen only costs utility and
            # distortion, so two pens show it
            grid={"radius": [1.0, 2.0], "blur": [0.5], "threshold": [0.5]},
            optuna_samples=2,
        ),
        "paper": Profile(
            description="full AMNIST (28,476 / 4,681 images), five pens from radius 1 to 3, blur 0.5, for a GPU cluster",
            config={"n_train": None, "n_test": None, "attack_epochs": 100, "attack_search": "full"},
            grid={"radius": [1.0, 1.5, 2.0, 2.5, 3.0], "blur": [0.5], "threshold": [0.5]},
            optuna_samples=5,
        ),
    },
    default_profile="quick",
    optuna={"radius": OptunaRange(0.0, 3.0), "blur": OptunaRange(0.0, 2.0), "threshold": OptunaRange(0.2, 0.8)},
    front=Front(
        axes=RELEASER.front.axes,
        objectives=RELEASER.front.objectives,
    ),
    farm=Farm(
        attackers=("deep_raw", "thickness"),  # no trained network: the membership attackers have nothing to test
        privacy=RELEASER.farm.privacy,
    ),
    label_keys=("radius", "blur", "threshold"),
    presentation=Presentation(
        title="stroke redraw",
        trend_metrics=(FRESH_ACCURACY, "utility/fixed_accuracy", STRONGEST_ATTACK, PSNR),
        checkpoint_figures=StrokeRedrawBaseline.figures,
    ),
)

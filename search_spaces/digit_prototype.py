"""The digit prototype baseline on an image set with class labels (docs/mechanisms.md#digit-prototype-baseline): each
image released as its predicted class's mean image. Its grid axis ``mix``, the share of the raw image mixed back in,
stays at 0: measured on the quick profile (fresh digit accuracy / strongest attacker / PSNR), mix 0 reads 0.972 /
0.623 / 12.9 dB, mix 0.1 already 0.971 / 0.889 / 13.8 dB and mix 0.2 0.971 / 0.904 / 14.8 dB, where the raw images read
0.914: a tenth of the raw image gives the thickness back, so the knob traces no curve worth its trials
(``--set mix=0,0.1`` runs it)."""
from core.metric_names import FRESH_ACCURACY, PSNR, PSNR_OF_MSE, STRONGEST_ATTACK
from search_spaces import Farm, Front, OptunaRange, Presentation, Preset, Profile
from search_spaces.amnist import PRESET as RELEASER
from search_spaces.amnist import QUICK_ATTACKERS
from trainables.prototype.config import DigitPrototypeConfig
from trainables.prototype.mechanism import DigitPrototypeBaseline

PRESET = Preset(
    name="digit-prototype",
    mechanism=DigitPrototypeBaseline,
    dataset="amnist",
    base=DigitPrototypeConfig().as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: a tiny subset, the prototype alone (for tests)",
            config={"n_train": 512, "n_test": 256, "attack_epochs": 1},
            grid={"mix": [0.0]},
            optuna_samples=1,
        ),
        "quick": Profile(
            description=("minutes on 2 CPUs: the releaser's quick data and attackers (2,000 / 1,000 images, attackers on "
                         "releases of 5,000 records), the prototype alone"),
            config={"n_train": 2000, "n_test": 1000, **QUICK_ATTACKERS},
            grid={"mix": [0.0]},
            optuna_samples=1,
        ),
        "paper": Profile(
            description="full AMNIST (28,476 / 4,681 images), the prototype alone, for a GPU cluster",
            config={"n_train": None, "n_test": None, "attack_epochs": 100, "attack_search": "full"},
            grid={"mix": [0.0]},
            optuna_samples=1,
        ),
    },
    default_profile="quick",
    optuna={"mix": OptunaRange(0.0, 1.0)},
    front=Front(
        axes=RELEASER.front.axes,
        objectives=RELEASER.front.objectives,
    ),
    farm=Farm(
        attackers=("deep_raw", "thickness"),  # no trained network: the membership attackers have nothing to test
        privacy=RELEASER.farm.privacy,
    ),
    label_keys=("mix",),
    presentation=Presentation(
        title="digit prototype",
        trend_metrics=(FRESH_ACCURACY, "utility/fixed_accuracy", STRONGEST_ATTACK, PSNR),
        checkpoint_figures=DigitPrototypeBaseline.figures,
    ),
)


def prototype_variant(name: str, axis: str, smoke: list, grid: list, what: str, title: str,
                      comparison_grids: tuple[str, ...] = ()) -> Preset:
    """A preset of the digit prototype with one other grid axis (``axis``: ``verbatim``, ``pose_bins``), on the
    releaser's quick data and attackers (``smoke``: its values on a tiny subset; ``grid``: on the quick and paper
    profiles; ``what`` says them in words), its front and farm the digit prototype's, with ``comparison_grids``
    beside it."""
    return Preset(
        name=name,
        mechanism=DigitPrototypeBaseline,
        dataset="amnist",
        base=DigitPrototypeConfig().as_dict(),
        profiles={
            "smoke": Profile(description=f"seconds: a tiny subset, {axis} {', '.join(map(str, smoke))} (for tests)",
                             config={"n_train": 512, "n_test": 256, "attack_epochs": 1}, grid={axis: smoke},
                             optuna_samples=1),
            "quick": Profile(description=("minutes on 2 CPUs: the releaser's quick data and attackers (2,000 / 1,000 "
                                          f"images, attackers on releases of 5,000 records), {what}"),
                             config={"n_train": 2000, "n_test": 1000, **QUICK_ATTACKERS}, grid={axis: grid},
                             optuna_samples=1),
            "paper": Profile(description="full AMNIST (28,476 / 4,681 images), the same grid, for a GPU cluster",
                             config={"n_train": None, "n_test": None, "attack_epochs": 100, "attack_search": "full"},
                             grid={axis: grid}, optuna_samples=1),
        },
        default_profile="quick",
        optuna={axis: OptunaRange(min(grid), max(grid), integer=all(isinstance(v, int) for v in grid))},
        front=PRESET.front,
        farm=PRESET.farm,
        label_keys=(axis,),
        comparison_grids=comparison_grids,
        presentation=Presentation(title=title, trend_metrics=(FRESH_ACCURACY, STRONGEST_ATTACK, PSNR_OF_MSE),
                                  checkpoint_figures=DigitPrototypeBaseline.figures),
    )


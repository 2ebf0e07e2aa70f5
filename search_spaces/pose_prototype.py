"""The pose prototype on AMNIST (docs/mechanisms.md#pose-prototype): each image released as the mean of the training
records that share its predicted digit and its coarse pose (the centroid's row and column, the slant and the width,
each in ``pose_bins`` bins by the digit's quantiles). A learnless diagnostic beside the digit prototype (``pose_bins``
0): how much distortion features that carry little of the stroke thickness can buy, and what the attackers read of it.
Width moves with the stroke, so the grid's finer bins are where the thickness comes back."""
from core.metric_names import FRESH_ACCURACY, PSNR_OF_MSE, STRONGEST_ATTACK
from search_spaces import Farm, Front, OptunaRange, Presentation, Preset, Profile
from search_spaces.amnist import PRESET as RELEASER
from search_spaces.amnist import QUICK_ATTACKERS
from search_spaces.digit_prototype import PRESET as PROTOTYPE
from trainables.prototype.config import DigitPrototypeConfig
from trainables.prototype.mechanism import DigitPrototypeBaseline

BINS = [0, 2, 3]  # the digit prototype, then 2⁴ and 3⁴ pose cells a digit

PRESET = Preset(
    name="pose-prototype",
    mechanism=DigitPrototypeBaseline,
    dataset="amnist",
    base=DigitPrototypeConfig().as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: a tiny subset, the digit prototype and 2 pose bins (for tests)",
            config={"n_train": 512, "n_test": 256, "attack_epochs": 1},
            grid={"pose_bins": [0, 2]},
            optuna_samples=1,
        ),
        "quick": Profile(
            description=("minutes on 2 CPUs: the releaser's quick data and attackers (2,000 / 1,000 images, attackers on "
                         "releases of 5,000 records), 0, 2 and 3 bins of each pose feature"),
            config={"n_train": 2000, "n_test": 1000, **QUICK_ATTACKERS},
            grid={"pose_bins": BINS},
            optuna_samples=1,
        ),
        "paper": Profile(
            description="full AMNIST (28,476 / 4,681 images), the same bins, for a GPU cluster",
            config={"n_train": None, "n_test": None, "attack_epochs": 100, "attack_search": "full"},
            grid={"pose_bins": BINS},
            optuna_samples=1,
        ),
    },
    default_profile="quick",
    optuna={"pose_bins": OptunaRange(0, 4, integer=True)},
    front=Front(axes=RELEASER.front.axes, objectives=RELEASER.front.objectives),
    farm=Farm(attackers=PROTOTYPE.farm.attackers, privacy=RELEASER.farm.privacy),
    label_keys=("pose_bins",),
    presentation=Presentation(
        title="digit and pose prototype",
        trend_metrics=(FRESH_ACCURACY, STRONGEST_ATTACK, PSNR_OF_MSE),
        checkpoint_figures=DigitPrototypeBaseline.figures,
    ),
)

"""A per-record mix of two releases that learn nothing (docs/metrics.md#the-baselines-hull): each record released as
it is with probability ``verbatim``, otherwise as its digit prototype, the draw independent of its secret. Its points
check the premise of the baselines' hull on real numbers: at a share p of verbatim records the data user's and the
attacker's accuracies and the mean squared error should be the mix of the two ends' (``benchmarks/hull_premise.py``).
``verbatim`` 0 is the digit prototype and 1 the raw release, so the grid holds both ends."""
from core.metric_names import FRESH_ACCURACY, PSNR_OF_MSE, STRONGEST_ATTACK
from search_spaces import Farm, Front, OptunaRange, Presentation, Preset, Profile
from search_spaces.amnist import PRESET as RELEASER
from search_spaces.amnist import QUICK_ATTACKERS
from search_spaces.digit_prototype import PRESET as PROTOTYPE
from trainables.prototype.config import DigitPrototypeConfig
from trainables.prototype.mechanism import DigitPrototypeBaseline

SHARES = [0.0, 0.25, 0.5, 0.75, 1.0]

PRESET = Preset(
    name="prototype-mix",
    mechanism=DigitPrototypeBaseline,
    dataset="amnist",
    base=DigitPrototypeConfig().as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: a tiny subset, the two ends and the even mix (for tests)",
            config={"n_train": 512, "n_test": 256, "attack_epochs": 1},
            grid={"verbatim": [0.0, 0.5, 1.0]},
            optuna_samples=1,
        ),
        "quick": Profile(
            description=("minutes on 2 CPUs: the releaser's quick data and attackers (2,000 / 1,000 images, attackers on "
                         "releases of 5,000 records), verbatim shares 0, 0.25, 0.5, 0.75 and 1"),
            config={"n_train": 2000, "n_test": 1000, **QUICK_ATTACKERS},
            grid={"verbatim": SHARES},
            optuna_samples=1,
        ),
        "paper": Profile(
            description="full AMNIST (28,476 / 4,681 images), the same shares, for a GPU cluster",
            config={"n_train": None, "n_test": None, "attack_epochs": 100, "attack_search": "full"},
            grid={"verbatim": SHARES},
            optuna_samples=1,
        ),
    },
    default_profile="quick",
    optuna={"verbatim": OptunaRange(0.0, 1.0)},
    front=Front(axes=RELEASER.front.axes, objectives=RELEASER.front.objectives),
    farm=Farm(attackers=PROTOTYPE.farm.attackers, privacy=RELEASER.farm.privacy),
    label_keys=("verbatim",),
    presentation=Presentation(
        title="prototype or verbatim, per record",
        trend_metrics=(FRESH_ACCURACY, STRONGEST_ATTACK, PSNR_OF_MSE),
        checkpoint_figures=DigitPrototypeBaseline.figures,
    ),
)

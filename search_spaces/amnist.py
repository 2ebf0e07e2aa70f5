"""AMNIST α-MI releaser: hide stroke thickness (thin vs thick) while keeping the digit
(docs/mechanisms.md#on-annotated-mnist-amnist)."""
import math

from core.metric_names import DEEP_ATTACK, FRESH_ACCURACY, NORMALISED_ALPHA_MI, PSNR, STRONGEST_ATTACK, UTILITY_ACCURACY
from search_spaces import PSNR_AXIS, Axis, Farm, Front, OptunaRange, Presentation, Preset, Profile, lambda_zero_anchor
from search_spaces.grids import per_value
from trainables.releaser.config import ReleaserConfig
from trainables.releaser.mechanism import Releaser

# Each α its own λ list (λ = 0 first), so every α can span full utility to chance. λ is in units of the paper's
# distortion E‖X − Y‖² (a black AMNIST image costs about 84); the players standardise their inputs
# (``player_input_norm``), so the releaser cannot hide S by dimming its release. Every λ = 0 point is one trial
# (``lambda_zero_anchor``). Why each grid is what it is, measured: docs/journal.md#why-the-amnist-grids-are-what-they-are.
QUICK_LAMBDAS = {1.0: [0.0, 30.0, 100.0, 300.0, 1000.0], math.inf: [0.0, 30.0, 100.0, 300.0, 1000.0]}
# The fast profile (the default) keeps the quick grid's points where the front bends.
FAST_LAMBDAS = {1.0: [0.0, 100.0, 300.0], math.inf: [0.0, 100.0]}
PAPER_LAMBDAS = {
    0.5: [0.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0],
    1.0: [0.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0],
    1.5: [0.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0],
    2.0: [0.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0],
    5.0: [0.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0],
    10.0: [0.0, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0],
    math.inf: [0.0, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0],
}

# The scale profile's λ per adversary steps k: k = 5 collapses the release at λ = 300, so it runs below, k = 1 above.
SCALE_LAMBDAS = {1: [0.0, 300.0, 1000.0, 3000.0], 5: [10.0, 30.0, 100.0]}

# The game profile's adversary: 400 batches after each restart bring the in-game adversary within 0.05 of the farm's
# (docs/journal.md#a-stronger-adversary-in-the-releasers-game); at 400, λ = 300 collapsed, so λ stops at 200.
GAME_LAMBDAS = {1.0: [0.0, 30.0, 100.0, 200.0]}
GAME_RESTART_STEPS = 400

# The quick profile's attackers (and data user) train on releases of 5,000 records: the game's 2,000, then 3,000 training
# records it never saw (a real attacker releases all it holds), in rungs of 2 epochs over Adam step 1e-3 alone, with
# patience 8 and a cap of 48 epochs (docs/journal.md#why-the-amnist-grids-are-what-they-are).
QUICK_ATTACKERS = {"attack_records": 5000, "attack_epochs": 48, "attack_patience": 8, "attack_rung_epochs": 2,
                   "attack_lrs": (1e-3,)}
QUICK_CONFIG = {"n_train": 2000, "n_test": 1000, "epochs": 4, "checkpoint_every": 4, "pretrain_epochs": 6, **QUICK_ATTACKERS}
# Every AMNIST training record (none is held out for testing: the test split is AMNIST's own). An attacker with more
# released records reads more, and at 5,000 its curve has not flattened (docs/measurements.md), so the profiles for
# science train their attackers on all of them; the quick profile's numbers are a 5,000-record lower bound, beside
# each front point's saturation estimate (platform/run/learning_curves.py).
AMNIST_TRAIN = 28476
FULL_ATTACKERS = QUICK_ATTACKERS | {"attack_records": AMNIST_TRAIN}

PRESET = Preset(
    name="amnist",
    mechanism=Releaser,
    dataset="amnist",
    base=ReleaserConfig(alpha=1.0, lam=0.0, adv_steps=1, pretrain_epochs=2, player_input_norm=True).as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: a tiny subset, one epoch, three trials (the λ = 0 anchor, α = 2 at λ = 10, α = ∞ at λ = 3)",
            config={"n_train": 512, "n_test": 256, "epochs": 1, "pretrain_epochs": 1, "attack_epochs": 1, "width": 8},
            grid=per_value("alpha", "lam", {2.0: [0.0, 10.0], math.inf: [0.0, 3.0]}, adv_steps=[1]),
            optuna_samples=2,
        ),
        "fast": Profile(
            description=("the default, minutes on 2 CPUs: the quick profile's data, game and attackers (2,000 training "
                         "images, a 6-epoch pretraining, 4 epochs, attacked at the end by attackers trained on releases of "
                         "5,000 records, each front point's number beside the saturation its learning curve heads for) "
                         "over the 4 of its 9 trials where the front bends: the λ = 0 anchor, α = 1 at λ ∈ {100, 300}, "
                         "α = ∞ at λ = 100"),
            config=QUICK_CONFIG,
            grid=per_value("alpha", "lam", FAST_LAMBDAS, adv_steps=[1]),
            optuna_samples=4,
        ),
        "quick": Profile(
            description=("tens of minutes on 2 CPUs: 2,000 training images, a 6-epoch pretraining, 4 epochs (attacked at "
                         "the end, attackers trained on releases of 5,000 records, so its privacy numbers are a "
                         "5,000-record lower bound, each front point's beside the saturation its learning curve heads "
                         "for), 9 trials (the λ = 0 anchor once, then α = 1 and α = ∞ at four λ each)"),
            config=QUICK_CONFIG,
            grid=per_value("alpha", "lam", QUICK_LAMBDAS, adv_steps=[1]),
            optuna_samples=8,
        ),
        "scale": Profile(
            description=("the reproduction's headline on 2 CPUs (about 2 hours a seed, its baselines included): "
                         "4,000 training images, "
                         "8 epochs, α = 1, the adversary taking 1 step per releaser step at λ ∈ {0, 300, 1000, 3000} "
                         "and 5 steps at λ ∈ {10, 30, 100}; attackers trained on the release of all 28,476 training "
                         "records"),
            config={"n_train": 4000, "n_test": 1000, "epochs": 8, "checkpoint_every": 8, "pretrain_epochs": 6,
                    **FULL_ATTACKERS},
            grid=per_value("adv_steps", "lam", SCALE_LAMBDAS, alpha=[1.0]),
            optuna_samples=8,
        ),
        "game": Profile(
            description=("the quick profile's data and attackers with a longer, steadier game: 30 epochs, the adversary "
                         "restarted fresh every epoch and trained 400 batches on the current release, the utility "
                         "cross-entropy weighted 10, α = 1 at λ ∈ {0, 30, 100, 200}"),
            config={"n_train": 2000, "n_test": 1000, "epochs": 30, "checkpoint_every": 30, "pretrain_epochs": 6,
                    "adversary_restart_every": 1, "adversary_restart_steps": GAME_RESTART_STEPS, "utility_ce_weight": 10.0,
                    **QUICK_ATTACKERS},
            grid=per_value("alpha", "lam", GAME_LAMBDAS, adv_steps=[1]),
            optuna_samples=8,
        ),
        "paper": Profile(
            description="full AMNIST (28,476 / 4,681 images) at the paper's scale, attackers trained on the release of "
                        "all 28,476 training records (the game's split), for a GPU cluster",
            config={"n_train": None, "n_test": None, "epochs": 30, "attack_epochs": 100, "attack_search": "full", "width": 32,
                    "pretrain_epochs": 3, "checkpoint_every": 5},
            grid=per_value("alpha", "lam", PAPER_LAMBDAS, adv_steps=[1, 5]),
            optuna_samples=200,
        ),
    },
    default_profile="fast",
    optuna={
        "alpha": OptunaRange(0.3, 50.0, log=True),
        "lam": OptunaRange(0.0, 3000.0),
        "adv_steps": OptunaRange(1, 5, integer=True),
    },
    front=Front(
        axes=(
            # what a data user gets: a digit classifier trained afresh on the release (the in-game net co-adapts)
            Axis(FRESH_ACCURACY, higher_is_better=True, bound=0.0, ideal=1.0),
            Axis(STRONGEST_ATTACK, higher_is_better=False, bound=1.0, ideal=0.5),
            PSNR_AXIS,  # the distortion: a release that keeps the digit by drawing its class's mean image is no mechanism
        ),
        objectives=((FRESH_ACCURACY, "max"), (DEEP_ATTACK, "min")),
        by="alpha",
    ),
    farm=Farm(
        attackers=("deep_raw", "thickness", "yeom", "rmia", "lira"),
        # the α-MI paper's own attacker counts too when a sweep runs it (--attackers ...,fresh_adversary): untuned, it
        # still read 0.016 above the others on one release of the reproduction's amnist study
        privacy=("deep", "deep_raw", "thickness", "fresh_adversary"),
    ),
    label_keys=("alpha", "lam", "adv_steps"),
    canonical=lambda_zero_anchor,
    comparison_grids=("noise", "stroke-redraw", "digit-prototype"),
    presentation=Presentation(
        trend_metrics=(UTILITY_ACCURACY, FRESH_ACCURACY, STRONGEST_ATTACK, PSNR,
                       NORMALISED_ALPHA_MI),
        checkpoint_figures=Releaser.figures,
    ),
)

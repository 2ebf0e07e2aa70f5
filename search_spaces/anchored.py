"""The anchored releaser on AMNIST (docs/mechanisms.md#anchored-releaser): the α-MI releaser's game played from the
digit prototype's release, a bounded learned residual on top, against a restarted adversary and replayed earlier ones;
α = 1 over λ, beside the three comparison grids (noise, the stroke redraw, the digit prototype) whose hull it has to
leave."""
from core.metric_names import FRESH_ACCURACY, NORMALISED_ALPHA_MI, PSNR_OF_MSE, STRONGEST_ATTACK, UTILITY_ACCURACY
from search_spaces import Front, OptunaRange, Presentation, Preset, Profile
from search_spaces.amnist import PRESET as RELEASER
from search_spaces.amnist import QUICK_ATTACKERS
from trainables.anchored.config import AnchoredConfig
from trainables.anchored.mechanism import AnchoredReleaser

# The game: the releaser's game profile (an adversary restarted every epoch and trained 400 batches on the current
# release, the utility cross-entropy weighted 10), shorter since it starts at the prototype rather than at the raw image.
# The players standardise their inputs per pixel, as in the releaser's own game: without it, at λ = 100 the release
# dimmed below the prototype and at one seed of three went black, and at λ = 60 it hid the stroke from its players only
# (docs/journal.md#the-anchored-releaser).
GAME = {"adversary_restart_every": 1, "adversary_restart_steps": 400, "utility_ce_weight": 10.0,
        "player_input_norm": True}
LAMBDAS = [0.0, 30.0, 60.0, 100.0]

PRESET = Preset(
    name="anchored",
    mechanism=AnchoredReleaser,
    dataset="amnist",
    base=AnchoredConfig.model_validate({"alpha": 1.0, "lam": 0.0, "adv_steps": 1, "pretrain_epochs": 2, **GAME}).as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: a tiny subset, one epoch, λ = 0 and λ = 100 (for tests)",
            config={"n_train": 512, "n_test": 256, "epochs": 1, "pretrain_epochs": 1, "attack_epochs": 1, "width": 8,
                    "adversary_restart_steps": 5},
            grid={"lam": [0.0, 100.0]},
            optuna_samples=2,
        ),
        "quick": Profile(
            description=("tens of minutes on 2 CPUs: the releaser's quick data and attackers (2,000 / 1,000 images, "
                         "attackers on releases of 5,000 records), a 6-epoch pretraining of the players, 10 epochs of "
                         "the game, α = 1 at λ ∈ {0, 30, 60, 100}"),
            config={"n_train": 2000, "n_test": 1000, "epochs": 10, "checkpoint_every": 10, "pretrain_epochs": 6,
                    **QUICK_ATTACKERS},
            grid={"lam": LAMBDAS},
            optuna_samples=4,
        ),
        "paper": Profile(
            description="full AMNIST (28,476 / 4,681 images), 30 epochs, the same λ, for a GPU cluster",
            config={"n_train": None, "n_test": None, "epochs": 30, "checkpoint_every": 10, "attack_epochs": 100,
                    "attack_search": "full", "width": 32, "pretrain_epochs": 3},
            grid={"lam": LAMBDAS},
            optuna_samples=16,
        ),
    },
    default_profile="quick",
    optuna={"lam": OptunaRange(0.0, 1000.0), "residual_bound": OptunaRange(0.05, 1.0)},
    front=Front(axes=RELEASER.front.axes, objectives=RELEASER.front.objectives),
    farm=RELEASER.farm,
    label_keys=("lam",),
    comparison_grids=RELEASER.comparison_grids,
    presentation=Presentation(
        title="anchored releaser",
        trend_metrics=(UTILITY_ACCURACY, FRESH_ACCURACY, STRONGEST_ATTACK, PSNR_OF_MSE, NORMALISED_ALPHA_MI),
        checkpoint_figures=AnchoredReleaser.figures,
    ),
)

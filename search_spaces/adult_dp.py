"""DP-SGD beside non-private training on UCI Adult (docs/membership.md#dp-sgd-models): the membership point's logistic
model trained by Opacus at a grid of target ε (δ = 1e-5), ε = ∞ being the same SGD without clipping or noise.

Logged per point: utility (balanced test accuracy, test loss), Yeom's |advantage| with its interval, the accountant's
ε (``leakage/dp/epsilon``) beside the one-run audit's ε lower bound on 200 canaries (``leakage/dp/epsilon_lower``),
and the farm's RMIA and LiRA; replicate with ``--seeds`` for intervals over repetitions."""
import math

from core.metric_names import UTILITY_ACCURACY, YEOM_ADVANTAGE
from search_spaces import Farm, Front, OptunaRange, Presentation, Preset, Profile
from search_spaces.adult_membership import PRESET as MEMBERSHIP
from trainables.membership.config import MembershipConfig
from trainables.membership.mechanism import Membership

EPSILONS = [0.5, 1.0, 2.0, 4.0, 8.0, math.inf]

PRESET = Preset(
    name="adult-dp",
    mechanism=Membership,
    dataset="adult",
    base=MembershipConfig(model="dp_logistic", kl_records=0, audit_canaries=200).as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: DP at ε = 1 and the non-private SGD on 100 records (for tests)",
            config={"sgd_epochs": 5},
            grid={"epsilon": [1.0, math.inf], "n": [100], "p_x": [10]},
            optuna_samples=2,
        ),
        "quick": Profile(
            description="a minute on 2 CPUs: ε ∈ {0.5 … 8, ∞} with 41 parameters on n = 20 (over-fitted) and 100 members",
            config={},
            grid={"epsilon": EPSILONS, "n": [20, 100], "p_x": [40]},
            optuna_samples=12,
        ),
        "well-fitted": Profile(
            description="ε ∈ {0.5 … 8, ∞} at n = 1000, p_x = 5 (little to leak even without DP)",
            config={"audit_canaries": 50},  # 5 canaries a run at p_x = 5: 10 runs of 1000 members (200 took 60 s)
            grid={"epsilon": EPSILONS, "n": [1000], "p_x": [5]},
            optuna_samples=6,
        ),
        "kl": Profile(
            description="ρ_KL of DP-SGD against ε (n = 100, p_x = 5; 10 records, 30 training sets per side: "
                        "600 DP-SGD runs per point)",
            config={"kl_records": 10, "mc_runs": 30},
            grid={"epsilon": EPSILONS, "n": [100], "p_x": [5]},
            optuna_samples=6,
        ),
    },
    default_profile="quick",
    optuna={
        "epsilon": OptunaRange(0.1, 16.0, log=True),
        "n": OptunaRange(50, 10000, log=True, integer=True),
        "p_x": OptunaRange(1, 40, integer=True),
    },
    front=Front(
        axes=MEMBERSHIP.front.axes,  # the same axes, attackers and objectives as the non-private models'
        objectives=MEMBERSHIP.front.objectives,
    ),
    farm=Farm(
        attackers=MEMBERSHIP.farm.attackers,
    ),
    label_keys=("epsilon", "n", "p_x"),
    presentation=Presentation(
        trend_metrics=(YEOM_ADVANTAGE, UTILITY_ACCURACY, "utility/test_loss", "leakage/dp/epsilon",
                       "leakage/dp/epsilon_lower"),
    ),
)

"""Membership leakage of logistic regression on UCI Adult (docs/mechanisms.md#membership-models): Yeom's advantage and KL leakage
against training-set size n, L2 regularisation λ, PCA features p_x and output-noise σ."""
from search_spaces import OptunaRange, Preset, Profile
from trainables.membership import checkpoint_inputs, data_counts, train_membership
from trainables.membership_config import MembershipConfig

PRESET = Preset(
    name="adult-membership",
    mechanism="logistic",
    dataset="adult",
    trainable=train_membership,
    validate=MembershipConfig.normalise,
    base=MembershipConfig().as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: two points, few Monte-Carlo retrainings (for tests)",
            config={"mc_runs": 12, "kl_records": 1, "gd_steps": 150},
            grid={"n": [100, 2000], "lam": [1e-3], "p_x": [5], "sigma": [0.1]},
            optuna_samples=2,
        ),
        "quick": Profile(
            description="a few minutes on 2 CPUs: 54 points over n, λ, p_x and σ",
            config={"mc_runs": 30, "kl_records": 3},
            grid={"n": [100, 1000, 3000], "lam": [1e-4, 1e-2, 1.0], "p_x": [2, 5, 10], "sigma": [0.1, 1.0]},
            optuna_samples=30,
        ),
        "paper": Profile(
            description="the seed's scale: more points, 100 retrainings, 20 records per KL estimate",
            config={"mc_runs": 100, "kl_records": 20},
            grid={"n": [50, 100, 300, 1000, 3000, 10000], "lam": [1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0],
                  "p_x": [2, 5, 10, 20], "sigma": [0.01, 0.1, 0.3, 1.0]},
            optuna_samples=300,
        ),
    },
    default_profile="quick",
    optuna={
        "n": OptunaRange(50, 10000, log=True, integer=True),
        "lam": OptunaRange(1e-5, 1.0, log=True),
        "p_x": OptunaRange(2, 20, integer=True),
        "sigma": OptunaRange(0.01, 2.0, log=True),
    },
    pareto_axes=(
        {"metric": "utility/accuracy", "higher_is_better": True, "bound": 0.0, "ideal": 1.0},
        {"metric": "attack/yeom/advantage", "higher_is_better": False, "bound": 1.0, "ideal": 0.0},
    ),
    data_counts=data_counts,
    checkpoint_inputs=checkpoint_inputs,
    farm_attackers=("rmia", "lira"),  # Yeom runs in the trial (its advantage is the privacy axis)
    optuna_objectives=(("utility/accuracy", "max"), ("attack/yeom/advantage", "min")),
    label_keys=("n", "lam", "p_x", "sigma"),
    trend_metrics=("attack/yeom/advantage", "leakage/kl/rho", "utility/accuracy"),
)

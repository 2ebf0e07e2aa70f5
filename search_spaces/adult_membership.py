"""Membership leakage of linear models on UCI Adult (docs/mechanisms.md#membership-models): Yeom's advantage and the KL
leakage ρ_KL against training-set size n, L2 regularisation λ, PCA features p_x and output-noise σ.

The ``paper-*`` profiles are Farokhi & Kaafar's one-factor experiments in their figures' settings (ridge regression,
100 records per point, box plots of ρ_KL per level): n at λ = 0 (Fig. 1); λ at n = 10 (Fig. 3); p_x at n = 10,
λ = 1e-6 (Fig. 4); σ at n = 30, λ = 0 (Fig. 5). ``paper-net-n`` is the paper's 5 × 50 tanh network against n at λ = 0
(Fig. 2), its ρ_KL on probe outputs, and ``paper-n-probes`` ridge regression measured the same way. Its sweep figure
is those box plots: one box of per-record ρ_KL per trial on the parent run."""
from pathlib import Path

from core.metric_names import UTILITY_ACCURACY, YEOM_ADVANTAGE
from search_spaces import Axis, Farm, Front, OptunaRange, Presentation, Preset, Profile, SweepTrials
from trainables.membership.config import MembershipConfig
from trainables.membership.figures import FIGURE, plot_kl_boxes
from trainables.membership.mechanism import Membership

# One factor varies, the others stay at these values (the paper's figures each vary one; all but Fig. 4 at λ = 0,
# which ridge's closed form solves uniquely while n > p_x).
PAPER = {"mc_runs": 200, "kl_records": 100, "n": 10, "lam": 0.0, "p_x": 5, "sigma": 0.0}
# The network's ρ_KL is read on its outputs at 6 fixed probe rows (docs/membership.md#the-tanh-network-and-ρ_kl-on-probe-
# outputs); ridge regression (6 parameters at p_x = 5) is measured the same way beside it, where it equals its
# parameters' ρ.
PROBES = {"kl_view": "probes", "probes": 6, "mc_runs": 30, "kl_records": 20}
NET_N = [10, 30, 100, 300]
LABEL_KEYS = ("n", "lam", "p_x", "sigma")


def kl_boxplots(trials: SweepTrials, folder: Path) -> list[Path]:
    """One box of per-record ρ_KL per finished trial, labelled by the axes (and seeds) that vary."""
    drawn = plot_kl_boxes(trials.table, (*LABEL_KEYS, "seed"), folder / FIGURE)
    return [drawn] if drawn is not None else []


def _paper(description: str, axis: str, levels: list, **fixed: object) -> Profile:
    """A one-factor profile: ``axis`` over ``levels``, every other axis at :data:`PAPER` (or as ``fixed`` says)."""
    config = {k: v for k, v in {**PAPER, **fixed}.items() if k != axis}
    return Profile(description=description, config=config, grid={axis: levels}, optuna_samples=len(levels))


PRESET = Preset(
    name="adult-membership",
    mechanism=Membership,
    dataset="adult",
    base=MembershipConfig().as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: two points, few Monte-Carlo runs (for tests)",
            config={"mc_runs": 20, "kl_records": 5},
            grid={"n": [100, 2000], "lam": [1e-3], "p_x": [5], "sigma": [0.1]},
            optuna_samples=2,
        ),
        "quick": Profile(
            description="a few minutes on 2 CPUs: 36 ridge points over n, λ, p_x and σ",
            config={"mc_runs": 100, "kl_records": 20},
            grid={"n": [10, 100, 1000], "lam": [1e-3, 1e-1], "p_x": [2, 5, 10], "sigma": [0.0, 0.1]},
            optuna_samples=30,
        ),
        "paper-n": _paper("the paper's Fig. 1: ρ_KL against n (λ = 0, p_x = 5, σ = 0)", "n",
                          [10, 30, 100, 300, 1000, 3000]),
        "paper-lam": _paper("the paper's Fig. 3: ρ_KL against λ at n = 10", "lam", [1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0]),
        "paper-p_x": _paper("the paper's Fig. 4: ρ_KL against p_x at n = 10, λ = 1e-6", "p_x", [1, 2, 5, 10, 20],
                            lam=1e-6),
        "paper-sigma": _paper("the paper's Fig. 5: ρ_KL against σ at n = 30 (λ = 0)", "sigma",
                              [0.0, 0.01, 0.03, 0.1, 0.3, 1.0], n=30),
        "paper-net-n": _paper("the paper's Fig. 2, its 5 x 50 tanh network (λ = 0): ρ_KL on 6 probe outputs against n",
                              "n", NET_N, **PROBES, model="tanh_net"),
        "paper-n-probes": _paper("ridge regression's ρ_KL on the same 6 probe outputs against n (λ = 0; the "
                                 "network's comparison)", "n", NET_N, **PROBES),
    },
    default_profile="quick",
    optuna={
        "n": OptunaRange(10, 10000, log=True, integer=True),
        "lam": OptunaRange(1e-5, 10.0, log=True),
        "p_x": OptunaRange(1, 20, integer=True),
        "sigma": OptunaRange(0.001, 2.0, log=True),
    },
    front=Front(
        axes=(
            Axis(UTILITY_ACCURACY, higher_is_better=True, bound=0.0, ideal=1.0),
            Axis(YEOM_ADVANTAGE, higher_is_better=False, bound=1.0, ideal=0.0),
        ),
        objectives=((UTILITY_ACCURACY, "max"), (YEOM_ADVANTAGE, "min")),
    ),
    farm=Farm(
        attackers=("rmia", "lira"),  # Yeom runs in the trial (its |advantage| is the privacy axis)
    ),
    label_keys=LABEL_KEYS,
    presentation=Presentation(
        trend_metrics=(YEOM_ADVANTAGE, "leakage/kl/rho", UTILITY_ACCURACY),
        sweep_figures=(kl_boxplots,),
    ),
)

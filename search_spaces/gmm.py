"""The privatizer's synthetic information-bound check (docs/mechanisms.md#the-gaussian-mixture-check-gmm): a linear
stochastic filter on a 2-D Gaussian
mixture, swept over the codependence k of U and S and the privacy weight α of the privatizer loss. ``algorithm`` (the
seed's Algorithm 1, 2 or 3: which estimators are pre-trained on raw data and frozen) is a grid axis holding [1] in every
profile; ``--set algorithm=1,2,3`` sweeps all three. Optuna keeps it at 1 (its range is [1, 1]).

Its sweep figure is the information plane: every trial's trajectory against the bound on the parent run, and each
trial's own on its run."""
from pathlib import Path

from core.metric_names import ESTIMATOR_ATTACK, UTILITY_ACCURACY
from search_spaces import Axis, Front, OptunaRange, Presentation, Preset, Profile, SweepTrials
from trainables.gmm.config import PrivatizerGmmConfig
from trainables.gmm.figures import FIGURE, X_METRIC, Y_METRIC, plot_information_plane
from trainables.gmm.mechanism import GmmPrivatizer


def information_plane(trials: SweepTrials, folder: Path) -> list[Path]:
    """The sweep's information plane (all trials) and, in a folder per run id, each trial's trajectory alone."""
    table = trials.table
    if "run_id" not in table:  # no trial ran
        return []
    drawn = [plot_information_plane(table, trials.histories, folder / FIGURE)]
    for index, run_id in table["run_id"].items():
        (folder / run_id).mkdir()
        drawn.append(plot_information_plane(table.loc[[index]], trials.histories, folder / run_id / FIGURE))
    return [path for path in drawn if path is not None]


PRESET = Preset(
    name="gmm",
    mechanism=GmmPrivatizer,
    dataset="gmm",
    base=PrivatizerGmmConfig().as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: two α at k = 0.4, short training, few Monte-Carlo samples (for tests)",
            config={"steps": 60, "estimator_steps": 3, "n_samples": 500, "mc_samples": 2000, "eval_samples": 1000},
            grid={"k": [0.4], "alpha": [0.1, 0.9], "algorithm": [1]},
            optuna_samples=2,
        ),
        "quick": Profile(
            description="a few minutes on 2 CPUs: α ∈ {0, 0.1, 0.5, 0.8, 1} (the paper's Fig. 6 α and the two ends) × "
                        "k ∈ {1, 0.4, 0} (its Figs. 6–7), trajectory every 50 steps",
            config={"report_every": 50},
            grid={"k": [1.0, 0.4, 0.0], "alpha": [0.0, 0.1, 0.5, 0.8, 1.0], "algorithm": [1]},
            optuna_samples=15,
        ),
        "paper": Profile(
            description="α every 0.05 × k ∈ {1, 0.4, 0}, longer training, more samples",
            config={"steps": 1000, "n_samples": 5000, "mc_samples": 100000, "eval_samples": 20000, "report_every": 50},
            grid={"k": [1.0, 0.4, 0.0], "alpha": [round(0.05 * i, 2) for i in range(21)], "algorithm": [1]},
            optuna_samples=60,
        ),
    },
    default_profile="quick",
    optuna={"k": OptunaRange(0.0, 1.0), "alpha": OptunaRange(0.0, 1.0), "algorithm": OptunaRange(1, 1, integer=True)},
    front=Front(
        axes=(
            Axis(UTILITY_ACCURACY, higher_is_better=True, bound=0.0, ideal=1.0),
            Axis(ESTIMATOR_ATTACK, higher_is_better=False, bound=1.0, ideal=0.5),
        ),
        objectives=((UTILITY_ACCURACY, "max"), (ESTIMATOR_ATTACK, "min")),
    ),
    label_keys=("k", "alpha", "algorithm"),
    presentation=Presentation(
        trend_metrics=("leakage/i_sq", "leakage/i_uxq", "leakage/sum", "leakage/gap"),
        sweep_figures=(information_plane,),
        sweep_history=(X_METRIC, Y_METRIC),
    ),
)

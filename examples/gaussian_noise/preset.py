"""The sweep preset of the Gaussian-noise example:

    python -m platform.sweep --preset-file examples/gaussian_noise/preset.py --profile smoke

putlab loads this file with its folder importable, so ``mechanism`` below is the sibling mechanism.py. It also
contributes a figure of the whole sweep, ``front/sigma_by_epoch.png`` on the parent run (``sigma_by_epoch``).
"""
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from mechanism import GaussianNoise, GaussianNoiseConfig

from core.legends import legend_right
from core.metric_names import DEEP_ATTACK, STRONGEST_ATTACK, UTILITY_ACCURACY
from search_spaces import Axis, Farm, Front, OptunaRange, Presentation, Preset, Profile, SweepTrials


def sigma_by_epoch(trials: SweepTrials, folder: Path) -> list[Path]:
    """The noise map's mean σ at every epoch, one line per trial: drawn from the per-step ``train/sigma_mean`` that
    ``sweep_history`` below asks the driver to read (``trials.table`` has each trial's params and latest metrics)."""
    fig = Figure(figsize=(4.5, 3.2))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for _, trial in trials.table.iterrows():
        sigma = trials.histories[trial["run_id"]]["train/sigma_mean"].dropna()
        if len(sigma):
            ax.plot(sigma.index, sigma.to_numpy(), marker="o", label=f"λ={trial['lam']:g}")
    if not ax.lines:  # no trial reported σ: no figure
        return []
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean σ of the noise map")
    legend_right(ax, 7)  # outside the axes, so that it covers no trial's point
    fig.tight_layout()
    fig.savefig(folder / "sigma_by_epoch.png", dpi=100)
    return [folder / "sigma_by_epoch.png"]


PRESET = Preset(
    name="gaussian-noise",
    mechanism=GaussianNoise,
    dataset="amnist",
    base=GaussianNoiseConfig().as_dict(),
    profiles={
        "smoke": Profile(
            description="seconds: 512 training images, one epoch, λ = 0 and λ = 30",
            config={"n_train": 512, "n_test": 256, "epochs": 1, "batch_size": 64, "width": 8, "attack_epochs": 1},
            grid={"lam": [0.0, 30.0]},
            optuna_samples=2,
        ),
        "quick": Profile(
            description="minutes on 2 CPUs: 2,000 training images, 4 epochs (attacked at the end), λ in {0, 1, 3, 10}",
            config={"n_train": 2000, "n_test": 1000, "epochs": 4, "checkpoint_every": 4},
            grid={"lam": [0.0, 1.0, 3.0, 10.0]},
            optuna_samples=4,
        ),
    },
    default_profile="quick",
    optuna={"lam": OptunaRange(0.0, 30.0)},
    front=Front(
        axes=(
            Axis(UTILITY_ACCURACY, higher_is_better=True, bound=0.0, ideal=1.0),
            Axis(STRONGEST_ATTACK, higher_is_better=False, bound=1.0, ideal=0.5),
        ),
        objectives=((UTILITY_ACCURACY, "max"), (DEEP_ATTACK, "min")),
    ),
    label_keys=("lam",),
    farm=Farm(
        attackers=("deep_raw", "thickness", "yeom", "rmia", "lira"),
        privacy=("deep", "deep_raw", "thickness"),
    ),
    presentation=Presentation(
        checkpoint_figures=GaussianNoise.figures,
        trend_metrics=(UTILITY_ACCURACY, STRONGEST_ATTACK, "train/sigma_mean"),
        sweep_figures=(sigma_by_epoch,),
        sweep_history=("train/sigma_mean",),
    ),
)

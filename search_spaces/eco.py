"""ECO α-MI releaser: hide hourly occupancy in smart-meter days while keeping the consumption
(docs/mechanisms.md#on-eco-smart-meter-days-eco-eco-si, docs/data.md#eco-smart-meter-data).

``eco``: no side information in the game; ``eco-si`` (search_spaces/eco_si.py): the adversary and the
deep attacker see weekday and month, and the releaser sees them too in the ``releaser_si`` variant.
Both run the farm's SI attacker and the SI-only floor (``attack/si_only/accuracy``, not in the max).
Sequences are 24-hour windows every 2 hours; quick and paper use 188 days per synthetic household, where
5 households give the paper's 11,225 windows (before the train/test split).
The front's privacy axis is the deep attacker's accuracy within hours (chance 0.5 at every hour, the
front's ideal); pooled over hours the hour alone already gives the attacker ``hour_only`` accuracy.
"""
from __future__ import annotations

import math
from typing import Any

from core.metric_names import DEEP_WITHIN_HOUR, NE_ENERGY, NORMALISED_ALPHA_MI, STRONGEST_ATTACK
from search_spaces import Axis, Farm, Front, OptunaRange, Presentation, Preset, Profile, lambda_zero_anchor
from trainables.eco_releaser.config import EcoConfig
from trainables.eco_releaser.mechanism import EcoReleaser

PAPER_DAYS = 188  # 5 households × 188 days, 24-hour windows every 2 hours: 5 × (12 · 188 − 11) = 11,225 sequences
SMOKE = {"households": 2, "days": 56, "window_stride_hours": 12, "epochs": 2, "pretrain_epochs": 1, "attack_epochs": 2,
         "checkpoint_every": 2, "releaser_hidden": 16, "releaser_layers": 2, "adversary_hidden": 8, "adversary_layers": 1}
QUICK = {"days": PAPER_DAYS, "epochs": 2, "pretrain_epochs": 1, "attack_epochs": 8, "checkpoint_every": 2}
PAPER = {"days": PAPER_DAYS, "epochs": 100, "pretrain_epochs": 10, "attack_epochs": 100, "attack_search": "full",
         "checkpoint_every": 10}


def build(name: str, side_info: bool, extra_grid: dict[str, list[Any]]) -> Preset:
    """The ECO preset with or without side information in the game (``extra_grid`` adds eco-si's releaser_si axis)."""
    return Preset(
        name=name,
        mechanism=EcoReleaser,
        dataset="eco",
        base=EcoConfig(adv_steps=3, side_info=side_info).as_dict(),
        profiles={
            "smoke": Profile(
                description="seconds: 2 synthetic households × 8 weeks, windows every 12 h, small LSTMs, 2 epochs, two "
                            "trials (for tests)",
                config=SMOKE,
                grid={"alpha": [1.0], "lam": [0.0, 3.0], "adv_steps": [1], **{k: v[:1] for k, v in extra_grid.items()}},
                optuna_samples=2,
            ),
            "quick": Profile(
                description="tens of minutes on 2 CPUs: 5 households × 188 days in 24-hour windows every 2 hours (the "
                            "paper's 11,225), 2 epochs, one checkpoint, 7 / 6 trials",
                config=QUICK,
                grid={"alpha": [1.0, math.inf] if extra_grid else [0.5, 1.0, math.inf],
                      "lam": [0.0, 3.0] if extra_grid else [0.0, 1.0, 3.0],
                      "adv_steps": [3], **extra_grid},
                optuna_samples=9,
            ),
            "paper": Profile(
                description="the paper's scale (real ECO via --set data_root=...), for a GPU cluster",
                config=PAPER,
                grid={"alpha": [0.5, 1.0, 2.0, 10.0, math.inf], "lam": [0.0, 0.3, 1.0, 3.0, 10.0, 30.0],
                      "adv_steps": [1, 5], **extra_grid},
                optuna_samples=100,
            ),
        },
        default_profile="quick",
        optuna={
            "alpha": OptunaRange(0.3, 50.0, log=True),
            "lam": OptunaRange(0.0, 10.0),
            "adv_steps": OptunaRange(1, 5, integer=True),
        },
        front=Front(
            axes=(
                # NE 1 is the release of all zeros; a constant release of the mean scores 1 − mean²/E[X²] < 1.
                Axis(NE_ENERGY, higher_is_better=False, bound=1.0, ideal=0.0),
                # Within each hour of day chance is 0.5 whatever the hour's occupancy rate: the ideal is reachable.
                Axis(DEEP_WITHIN_HOUR, higher_is_better=False, bound=1.0, ideal=0.5),
            ),
            objectives=((NE_ENERGY, "min"), (DEEP_WITHIN_HOUR, "min")),
        ),
        farm=Farm(attackers=("side_info", "si_only"), privacy=("deep", "side_info")),
        label_keys=("alpha", "lam", "adv_steps", *extra_grid),
        presentation=Presentation(
            trend_metrics=(NE_ENERGY, "utility/ne_variance", DEEP_WITHIN_HOUR,
                           STRONGEST_ATTACK, "attack/si_only/accuracy", NORMALISED_ALPHA_MI),
            checkpoint_figures=EcoReleaser.figures,
        ),
        canonical=lambda_zero_anchor,
    )


PRESET = build("eco", side_info=False, extra_grid={})

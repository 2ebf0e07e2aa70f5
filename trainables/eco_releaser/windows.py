"""The ECO windows a trial trains and is scored on: one split on the device, and the networks' inputs."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from core.data import get_dataset
from core.data.eco_files import EcoWindows
from core.data.sets.eco import EcoRecords, eco_records
from trainables.eco_releaser.config import EcoConfig


@dataclass(frozen=True)
class EcoSplit:
    """One split's windows on the trial's device: normalised consumption [N, L, 1], watts [N, L], occupancy [N, L],
    hour of day [N, L], SI [N, 19]."""

    x: torch.Tensor
    watts: torch.Tensor
    occupancy: torch.Tensor
    hour: torch.Tensor
    si: torch.Tensor
    windows: EcoWindows  # the calendar of these rows (CPU), for the figure

    def __len__(self) -> int:
        return len(self.x)


def load_records(cfg: EcoConfig) -> EcoRecords:
    """The config's data set from the registry (the real ECO files under ``data_root``, or the synthetic generator when
    it is empty): its days split by (household, week) blocks, then windowed within each side."""
    splits = get_dataset(cfg.dataset).load(
        cfg.data_root, households=cfg.households, days=cfg.days, data_seed=cfg.data_seed, test_fraction=cfg.test_fraction,
        max_missing_hours=cfg.max_missing_hours, window_hours=cfg.window_hours, window_stride_hours=cfg.window_stride_hours)
    return eco_records(splits)


def load_data(cfg: EcoConfig, device: torch.device) -> tuple[EcoSplit, EcoSplit, tuple[float, float]]:
    """Train and test windows on ``device`` and the (mean, std) in W of the training days that normalise consumption."""
    records = load_records(cfg)
    train_days = records.days.consumption[records.train_days]
    mean, std = float(train_days.mean()), float(train_days.std())

    def make(part: EcoWindows) -> EcoSplit:
        watts = part.consumption.to(device)
        return EcoSplit(((watts - mean) / std).unsqueeze(2), watts, part.occupancy.to(device), part.hour.to(device),
                        part.side_information().to(device), part)

    return make(records.train), make(records.test), (mean, std)


def with_si(x: torch.Tensor, si: torch.Tensor) -> torch.Tensor:
    """[N, L, f] sequence with the window's SI appended to every hour: [N, L, f + 19]."""
    return torch.cat([x, si.unsqueeze(1).expand(-1, x.shape[1], -1)], dim=2)


def releaser_input(cfg: EcoConfig, split: EcoSplit) -> torch.Tensor:
    """What the releaser reads per hour: normalised consumption, then SI when ``releaser_si``."""
    return with_si(split.x, split.si) if cfg.releaser_si else split.x


def adversary_input(cfg: EcoConfig, y: torch.Tensor, si: torch.Tensor) -> torch.Tensor:
    """What the adversary and deep attackers read per hour: the release, then SI when ``side_info``."""
    return with_si(y, si) if cfg.side_info else y

"""Cloak's data: the trial's subsets of its data set at 32×32 with the target's task labels, digits and thickness, and
the frozen LeNet-5 target it perturbs images for.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from core.data import default_data_root
from trainables.cloak.config import CloakConfig
from trainables.cloak.target import (
    Target,
    TargetSettings,
    load_target,
    task_labels,
)
from trainables.shared.image_data import load_splits

MNIST_TRAIN = 60_000  # the target's training-set size (all of MNIST's training images)


@dataclass
class TaskSplit:
    """Images padded to 32×32 on the trial's device, the target's task labels, digits and thickness (0 thin, 1 thick)."""

    x: torch.Tensor
    y: torch.Tensor
    digit: torch.Tensor
    thick: torch.Tensor

    def __len__(self) -> int:
        return self.x.shape[0]


def load_task_data(cfg: CloakConfig, device: torch.device) -> tuple[TaskSplit, TaskSplit]:
    """The trial's subsets (:func:`~trainables.shared.image_data.load_splits`) with the target's task labels, moved to
    ``device`` once."""
    splits = load_splits(cfg)
    train_split, test_split = (TaskSplit(s.x.to(device), task_labels(s.u, cfg.task).to(device), s.u.to(device),
                                     s.s.to(device)) for s in (splits.train, splits.test))
    return train_split, test_split


def data_root(cfg: CloakConfig) -> Path:
    return Path(cfg.data_root).expanduser().resolve() if cfg.data_root else default_data_root()


def target_for(cfg: CloakConfig, device: torch.device) -> Target:
    """The cached LeNet-5 target of the config's task (trained on first use; fixed seed, shared by all trials)."""
    settings = TargetSettings(cfg.task, cfg.num_classes, cfg.target_epochs, cfg.batch_size, cfg.lr)
    return load_target(data_root(cfg), settings, device, cfg.download)

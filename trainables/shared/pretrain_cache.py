"""A game's pretraining computed once per (data, seed, recipe) and shared by every trial that asks for the same one.

The state pretraining leaves behind (networks, optimisers, the game's generator and torch's global generator) is
stored by content beside the raw-data fits of the attackers (:data:`core.classifier.FIT_CACHE`): the key hashes
the training records and every config knob that is not one of the game's own (``game_knobs``: λ, α, the attackers'
budget, ...), with the device type and the code's version (torch's and the source's, :mod:`core.code_version`), so no
edit lets a stale pretrained state be read. A trial that reads a stored pretrained state continues exactly as the trial
that computed it. Stored, locked and read as every content-addressed result is (:mod:`core.content_cache`).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from core.classifier import FIT_CACHE
from core.config import AttackBudget, AttackerRecords, Checkpointing, MembershipAttacks
from core.content_cache import ContentCache, content_key

PRETRAIN_DIR = FIT_CACHE  # every trial on a machine sees it: the raw-data fits' folder
PRETRAINED: ContentCache[dict] = ContentCache("pretrain-")
VERSION = 1  # what pretraining computes: bump it when that changes, and older files are never read
# knobs every image game has that never touch its pretraining: the attackers' and the farm's, checkpoints, the epochs
# of the game, the figure, where the data lies (the records themselves are hashed) and the test split's size
SHARED_GAME_KNOBS = (frozenset().union(*(m.model_fields for m in (AttackBudget, AttackerRecords, Checkpointing,
                                                                    MembershipAttacks)))
                     - {"seed", "threads"}) | {"epochs", "samples_in_figure", "data_root", "download", "n_test"}


def pretrain_key(mechanism: str, config: dict[str, Any], game_knobs: Iterable[str], records: Iterable[torch.Tensor],
                 device: torch.device) -> str:
    """Content address of a pretrained state: the mechanism, its config less the game's knobs, the training records (every
    tensor's bytes), the device type and the code's version."""
    skipped = SHARED_GAME_KNOBS | frozenset(game_knobs)
    recipe = sorted((k, repr(v)) for k, v in config.items() if k not in skipped)
    return content_key((VERSION, mechanism, device.type, recipe), records)



def rng_state(generator: torch.Generator) -> dict[str, torch.Tensor]:
    """The game's generator and torch's global CPU generator (and the CUDA one, on a GPU): what the game draws next."""
    state = {"generator": generator.get_state(), "torch": torch.get_rng_state()}
    if generator.device.type == "cuda":
        state["torch_cuda"] = torch.cuda.get_rng_state(generator.device)
    return state


def set_rng_state(generator: torch.Generator, state: dict[str, torch.Tensor]) -> None:
    """Restore :func:`rng_state`."""
    generator.set_state(state["generator"])
    torch.set_rng_state(state["torch"])
    if "torch_cuda" in state:
        torch.cuda.set_rng_state(state["torch_cuda"], generator.device)

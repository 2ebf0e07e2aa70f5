"""Reference (shadow) models for RMIA and LiRA: fresh networks trained on population subsets the way the target was.
Below both sides: the attackers train them, and the mechanisms say how (a :class:`Recipe`) and where they are kept.

The population is split once per (size, seed): ``population_z`` samples are kept aside as RMIA's
comparison points, and each reference model trains on its own random subset of the rest, as large
as the target's training set (or the whole rest when the population is smaller). Trained weights
are cached by content (recipe, training subset, seed) in this process and, where the target gives
a cache folder, on disk; missing ones train as parallel Ray tasks when Ray is up, else one by one.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import torch
from torch import nn

from core.content_cache import ContentCache, content_key
from core.training import fit_classifier

REFERENCES: ContentCache[dict[str, torch.Tensor]] = ContentCache("ref-", memory=32)  # in memory: a few checkpoints' worth


class Recipe(Protocol):
    """Trains a fresh network of a target's architecture the way the target was trained (picklable).

    ``build()`` makes an untrained network (to load cached weights into); calling the recipe with
    (x, y, seed) returns a trained one in eval mode.
    """

    def build(self) -> nn.Module: ...

    def __call__(self, x: torch.Tensor, y: torch.Tensor, seed: int) -> nn.Module: ...


@dataclass(frozen=True)
class ClassifierRecipe:
    """Adam + cross-entropy for ``epochs`` epochs on a network from ``build`` (a picklable factory)."""

    build: Callable[[], nn.Module]
    epochs: int
    batch_size: int
    lr: float

    def __call__(self, x: torch.Tensor, y: torch.Tensor, seed: int) -> nn.Module:
        """A freshly initialised network trained on (x, y), in eval mode."""
        torch.manual_seed(seed)
        model = self.build().to(x.device)
        gen = torch.Generator(device=x.device).manual_seed(seed)
        fit_classifier(model, x, y, epochs=self.epochs, batch_size=self.batch_size, lr=self.lr, generator=gen)
        return model.eval()


@dataclass(frozen=True)
class PopulationPlan:
    """Population indices: RMIA's comparison samples z and one training subset per reference model."""

    z: np.ndarray
    subsets: tuple[np.ndarray, ...]


def reference_cache_dir(checkpoint_dir: str, per_checkpoint: bool) -> str:
    """Where a checkpoint's reference weights are kept: beside it in the trial's folder (``per_checkpoint``: networks
    trained on the checkpoint's release), or in the experiment's folder (networks trained on raw data, shared by
    every checkpoint and trial; the content-addressed names keep different data and recipes apart)."""
    checkpoint = Path(checkpoint_dir)
    if per_checkpoint:
        return str(checkpoint.parent / "reference_models" / checkpoint.name)
    return str(checkpoint.parent.parent / "reference_models")


def population_plan(n_population: int, train_size: int, count: int, n_z: int, seed: int) -> PopulationPlan:
    """Set aside up to ``n_z`` samples (at most half the pool) as z; draw ``count`` subsets of the rest."""
    if count < 1:
        raise ValueError(f"reference models must be >= 1 (got {count})")
    if n_population < 2:
        raise ValueError(f"a population of {n_population} sample(s) is too small for reference models")
    order = np.random.default_rng([seed, 17]).permutation(n_population)
    n_z = min(n_z, n_population // 2)
    rest = order[n_z:]
    size = min(train_size, len(rest))
    rng = np.random.default_rng([seed, 18])
    subsets = tuple(np.sort(rng.choice(rest, size=size, replace=False)) for _ in range(count))
    return PopulationPlan(np.sort(order[:n_z]), subsets)


def _key(recipe: Recipe, x: torch.Tensor, y: torch.Tensor, seed: int) -> str:
    """Content address of one reference model: what trains it, on what, with which seed, by which code."""
    return content_key((recipe, seed), (x, y), length=24)


def _train_state(recipe: Recipe, x: torch.Tensor, y: torch.Tensor, seed: int) -> dict[str, torch.Tensor]:
    """Train one reference model (one thread: runs beside trials) and return its CPU weights."""
    torch.set_num_threads(1)
    return {k: v.detach().cpu() for k, v in recipe(x, y, seed).state_dict().items()}


def _train_missing(jobs: list[tuple[Recipe, torch.Tensor, torch.Tensor, int]], on_cpu: bool) -> list[dict[str, torch.Tensor]]:
    """Train the given reference models: parallel Ray tasks when Ray is up and the data is on the CPU."""
    import ray

    if len(jobs) > 1 and on_cpu and ray.is_initialized():
        task = ray.remote(num_cpus=1)(_train_state)
        return ray.get([task.remote(*job) for job in jobs])
    return [_train_state(*job) for job in jobs]


def reference_models(recipe: Recipe, x: torch.Tensor, y: torch.Tensor, cache_dir: str | None, plan: PopulationPlan,
                     seed: int) -> list[nn.Module]:
    """One network per subset of ``plan`` of the population (x, y), trained by ``recipe`` (read from this process's
    memory or ``cache_dir`` where trained before), in eval mode on the data's device."""
    device = x.device
    seeds = [seed * 1000 + k + 1 for k in range(len(plan.subsets))]
    index = [torch.as_tensor(s, device=device) for s in plan.subsets]
    keys = [_key(recipe, x[i], y[i], s) for i, s in zip(index, seeds, strict=True)]
    folder = Path(cache_dir) if cache_dir else None
    states: dict[str, dict[str, torch.Tensor]] = {}
    for key in keys:
        state = REFERENCES.recall(key)
        if state is None and folder is not None:
            state = REFERENCES.read(folder, key)
        if state is not None:
            states[key] = state
    missing = [(k, i, s) for k, i, s in zip(keys, index, seeds, strict=True) if k not in states]
    trained = _train_missing([(recipe, x[i], y[i], s) for _, i, s in missing], device.type == "cpu")
    states.update({key: state for (key, _, _), state in zip(missing, trained, strict=True)})
    for key in keys:
        if folder is not None and not REFERENCES.path(folder, key).exists():
            REFERENCES.write(folder, key, states[key])
    models = []
    for key in keys:
        REFERENCES.keep(key, states[key])
        model = recipe.build()
        model.load_state_dict(states[key])
        models.append(model.to(device).eval())
    return models

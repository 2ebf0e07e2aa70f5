"""Results stored by content, the one cache every side uses (raw-data fits, reference models, pretrained games, Cloak's
targets): a key hashing what computes a result (the code's version, its recipe, its records), files in a folder written
atomically and read back as tensors and plain values (:mod:`core.atomic`), and the last few results kept in memory.

A key from :func:`content_key` changes with any edit of the worker code (:mod:`core.code_version`), so no stored result
of older code is ever read; concurrent processes asking for one key take a file lock, so one computes and the others
read.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Generic, TypeVar

import torch
from filelock import FileLock

from core.atomic import load_saved, save_atomically
from core.code_version import code_version

T = TypeVar("T")


def content_key(recipe: object, tensors: Iterable[torch.Tensor] = (), length: int = 32) -> str:
    """Content address of a result: the code's version, ``recipe``'s repr, and each tensor's shape, dtype and bytes."""
    digest = hashlib.sha256(repr((code_version(), recipe)).encode())
    for tensor in tensors:
        digest.update(repr((tuple(tensor.shape), str(tensor.dtype))).encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:length]


class ContentCache(Generic[T]):
    """One kind of result by key: files ``<folder>/<prefix><key>.pt`` and the last ``memory`` values in this process
    (what memory keeps, ``T``, may be the built object the stored state makes, e.g. a network)."""

    def __init__(self, prefix: str, memory: int = 0) -> None:
        self.prefix, self.slots = prefix, memory
        self._memory: OrderedDict[str, T] = OrderedDict()

    def path(self, folder: str | Path, key: str) -> Path:
        return Path(folder) / f"{self.prefix}{key}.pt"

    def read(self, folder: str | Path, key: str, map_location: str | torch.device = "cpu") -> Any | None:
        """The state stored under ``key``, or None when missing or unreadable (computed again)."""
        return load_saved(self.path(folder, key), map_location)

    def write(self, folder: str | Path, key: str, state: object) -> None:
        """Store ``state`` under ``key`` (a concurrent reader sees all of it or nothing)."""
        save_atomically(self.path(folder, key), state)

    def stored_or_computed(self, folder: str | Path, key: str, compute: Callable[[], Any]) -> tuple[Any, bool]:
        """The state stored under ``key`` and True, or ``compute()``'s (stored) and False; under a file lock, so of
        several processes asking at once one computes and the others read."""
        path = self.path(folder, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(f"{path}.lock"):
            stored = self.read(folder, key)
            if stored is not None:
                return stored, True
            state = compute()
            self.write(folder, key, state)
            return state, False

    def recall(self, key: str) -> T | None:
        """The value this process keeps under ``key``, if any."""
        return self._memory.get(key)

    def keep(self, key: str, value: T) -> None:
        """Keep ``value`` among the last ``memory`` in this process."""
        self._memory[key] = value
        self._memory.move_to_end(key)
        while len(self._memory) > self.slots:
            self._memory.popitem(last=False)

    def forget(self) -> None:
        """Empty this process's memory (the files stay)."""
        self._memory.clear()

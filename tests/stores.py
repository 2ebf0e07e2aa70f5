"""A store for tests: putlab's ``Store`` that also answers MLflow's own client calls, so a test can arrange and inspect
a store with MLflow's API while the code under test reads and writes it through its gateway."""
from __future__ import annotations

from typing import Any

from platform.results.store import Store


class RawStore(Store):
    """The gateway's methods first; any other attribute is the underlying ``RawStore``'s."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_client":
            raise AttributeError(name)
        return getattr(self._client, name)

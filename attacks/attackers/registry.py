"""The one name -> attacker registry: every module of ``attacks/attackers/`` that declares ``SPECS`` (its attackers'
declarations), then the ``putlab.attackers`` entry points of installed packages (core.plugins: one way to register).

Adding an attacker is one module with a ``SPECS`` tuple in this folder (docs/attacks.md#adding-an-attacker).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from attacks.spec import AttackerSpec
from core.plugins import PluginClash, PluginKind

ATTACKERS: PluginKind[AttackerSpec] = PluginKind("attacker", "attacks.attackers", "SPECS", "putlab.attackers",
                                                 AttackerSpec, lambda spec: spec.name)


class Registry:
    """Attacker declarations by name, in registration order; unknown names give a one-line ValueError."""

    def __init__(self, specs: Iterable[AttackerSpec]) -> None:
        self._specs: dict[str, AttackerSpec] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise PluginClash(f"attacker name {spec.name!r} is registered twice")
            self._specs[spec.name] = spec

    @classmethod
    def discover(cls) -> Registry:
        """The built-in attackers and those installed packages publish (:data:`ATTACKERS`)."""
        return cls(ATTACKERS.discover().values())

    def __getitem__(self, name: str) -> AttackerSpec:
        self.check_names([name])
        return self._specs[name]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def check_names(self, names: Sequence[str]) -> None:
        """Reject unknown attacker names with one line listing the known ones."""
        unknown = [n for n in names if n not in self._specs]
        if unknown:
            shown = ", ".join(n if n.isprintable() else repr(n) for n in unknown)  # a newline must not split the line
            raise ValueError(f"unknown attacker(s) {shown}; known: {', '.join(self._specs)}")


REGISTRY = Registry.discover()


def check_names(names: Sequence[str]) -> None:
    """Reject names the registry does not know, with one line listing the known ones."""
    REGISTRY.check_names(names)


def primary_metric(name: str) -> str:
    """The shared MLflow name of an attacker's primary metric: ``attack/<name>/<metric>``."""
    return f"attack/{name}/{REGISTRY[name].primary_metric}"

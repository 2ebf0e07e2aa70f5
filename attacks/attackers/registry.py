"""The one name -> attacker registry: every module of ``attacks/attackers/`` that declares ``SPECS`` (its attackers'
declarations), then the ``putlab.attackers`` entry points of installed packages (core.plugins: one way to register).

Adding an attacker is one module with a ``SPECS`` tuple in this folder (docs/attacks.md#adding-an-attacker).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from attacks.spec import AttackerSpec
from core.metric_names import attack_metric
from core.plugins import PluginClash, PluginKind

ATTACKERS: PluginKind[AttackerSpec] = PluginKind("attacker", "attacks.attackers", "SPECS", "putlab.attackers",
                                                 AttackerSpec, lambda spec: spec.name)


class Registry:
    """Attacker declarations by name, in registration order; unknown names give a one-line ValueError."""

    def __init__(self, specs: Iterable[AttackerSpec] | Callable[[], Iterable[AttackerSpec]]) -> None:
        """``specs``, or a function giving them when first needed (then a broken plug-in fails that use, not import)."""
        self._indexed = None if callable(specs) else by_name(specs)
        self._find = specs if callable(specs) else lambda: specs

    @classmethod
    def discover(cls) -> Registry:
        """The built-in attackers and those installed packages publish (:data:`ATTACKERS`)."""
        return cls(ATTACKERS.discover().values())

    @property
    def _specs(self) -> dict[str, AttackerSpec]:
        """The declarations by name, found on first use where a function gives them."""
        if self._indexed is None:
            self._indexed = by_name(self._find())
        return self._indexed

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


def by_name(specs: Iterable[AttackerSpec]) -> dict[str, AttackerSpec]:
    """``specs`` by name, in order; a name given twice is a PluginClash."""
    indexed: dict[str, AttackerSpec] = {}
    for spec in specs:
        if spec.name in indexed:
            raise PluginClash(f"attacker name {spec.name!r} is registered twice")
        indexed[spec.name] = spec
    return indexed


REGISTRY = Registry(lambda: ATTACKERS.discover().values())  # discovered when a command first needs it: a broken
# plug-in is that command's one-line error (core.plugins.PluginError), and --help and imports work regardless


def check_names(names: Sequence[str]) -> None:
    """Reject names the registry does not know, with one line listing the known ones."""
    REGISTRY.check_names(names)


def primary_metric(name: str) -> str:
    """The shared MLflow name of an attacker's primary metric: ``attack/<name>/<metric>``."""
    return attack_metric(name, REGISTRY[name].primary_metric)

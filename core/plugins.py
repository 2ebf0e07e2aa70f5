"""One way to register a plug-in, for attackers, data sets and presets alike: the built-ins are found in their package
(every module defining the kind's attribute), installed packages add theirs through the kind's entry-point group, and
a name taken twice is one :class:`PluginClash` naming both sources (docs/extending.md).
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from itertools import chain
from typing import Generic, TypeVar

from core.messages import first_line

T = TypeVar("T")


class PluginError(ValueError):
    """An installed package's plug-in that does not load, is not of its kind, or takes a name already taken."""


class PluginClash(PluginError):
    """Two plug-ins of one kind under one name."""


@dataclass(frozen=True)
class PluginKind(Generic[T]):
    """A kind of plug-in: its word in messages, the package and module attribute of its built-ins, the entry-point
    group of installed ones, the type every plug-in has and how to name one. An attribute or entry point may hold
    one plug-in or a tuple of them (an attacker module's ``SPECS``)."""

    word: str
    package: str
    attribute: str
    group: str
    type: type[T]
    name: Callable[[T], str]

    def discover(self) -> dict[str, T]:
        """Every plug-in of this kind by name: the built-ins in module-name order, then the installed ones."""
        return collect(self, chain(built_in(self.package, self.attribute), installed(self.group)))


def built_in(package: str, attribute: str) -> Iterator[tuple[str, object]]:
    """(source, value) of ``attribute`` in every module of ``package`` that defines it, in module-name order."""
    root = importlib.import_module(package)
    for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        if hasattr(module, attribute):
            yield f"module {package}.{info.name}", getattr(module, attribute)


def installed(group: str) -> Iterator[tuple[str, object]]:
    """(source, value) of every entry point installed packages publish in ``group``, by entry-point name."""
    for point in sorted(entry_points(group=group), key=lambda p: p.name):
        source = f"entry point {point.name} = {point.value}" + (f" of package {point.dist.name}" if point.dist else "")
        try:
            value = point.load()
        except Exception as exc:  # noqa: BLE001 - an installed package's import error: one line naming the entry point
            raise PluginError(f"{source} does not load: {type(exc).__name__}: {first_line(exc)}") from None
        yield source, value


def collect(kind: PluginKind[T], found: Iterable[tuple[str, object]]) -> dict[str, T]:
    """The plug-ins ``found`` by name; one that is not of the kind's type is a PluginError, a taken name a PluginClash."""
    items: dict[str, T] = {}
    sources: dict[str, str] = {}
    for source, value in found:
        for item in value if isinstance(value, tuple) else (value,):
            if not isinstance(item, kind.type):
                raise PluginError(f"{source} is a {type(item).__name__}, not a {kind.type.__module__}."
                                 f"{kind.type.__qualname__}")
            name = kind.name(item)
            if name in items and items[name] is not item:
                raise PluginClash(f"{kind.word} name {name!r} of {source} clashes with the one of {sources[name]}")
            items[name], sources[name] = item, source
    return items

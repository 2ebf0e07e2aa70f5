"""JSON and YAML files parsed, then validated against the caller's pydantic model (or any type pydantic validates).

YAML goes through the safe loader, after a pass over its event stream (before any object is built) that refuses a
document with more than :data:`MAX_ALIASES` aliases, one whose aliases would expand it beyond :data:`MAX_NODES` nodes
(a "billion laughs" file) or refer to their own anchor, or one nested deeper than :data:`MAX_DEPTH`: each is refused
in one line, in milliseconds.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import TypeAdapter, ValidationError
from yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, ScalarEvent

from core.files.source import MIB, InputFileError, read_text

T = TypeVar("T")
Schema = type[T] | TypeAdapter[T]

MAX_JSON_BYTES = 16 * MIB  # a study's snapshot, a stored config or point description: kilobytes
MAX_YAML_BYTES = 16 * MIB  # a manifest or CRD file (KubeRay's largest CRD: 1.4 MB)
MAX_ALIASES = 100  # aliases in one YAML stream (putlab's manifests use none)
MAX_NODES = 1_000_000  # nodes of a YAML stream with every alias expanded (the largest CRD: about 60,000)
MAX_DEPTH = 100  # nesting of YAML collections (the CRDs nest 36 deep)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def validated(data: Any, schema: Schema[T], source: str) -> T:
    """``data`` validated against ``schema``; an InputFileError naming the first problem (and how many more)."""
    try:
        return _adapter(schema).validate_python(data)
    except ValidationError as exc:
        raise InputFileError(source, f"does not match its schema: {describe(exc)}") from None
    except RecursionError:
        raise InputFileError(source, "is nested too deeply to validate") from None


def describe(exc: ValidationError) -> str:
    """A validation error in a few words: where (a dotted path), what is wrong, what was found, how many more."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"]) or "the top level"
    found = first.get("input")
    got = f" (got {found!r:.60})" if isinstance(found, (str, int, float, bool)) or found is None else ""
    more = f" (and {len(errors) - 1} more problem{'s' * (len(errors) > 2)})" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{got}{more}"


def parse_json(text: str, schema: Schema[T], source: str) -> T:
    """The JSON ``text`` validated against ``schema`` (``source`` names it in messages)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(source, f"is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise InputFileError(source, f"is not usable JSON: {exc}") from None
    except RecursionError:
        raise InputFileError(source, "is not usable JSON: it is nested too deeply") from None
    return validated(data, schema, source)


def read_json(path: Path, schema: Schema[T], limit: int = MAX_JSON_BYTES, source: str | None = None) -> T:
    """The JSON file at ``path`` validated against ``schema``; an InputFileError for anything else."""
    shown = source or str(path)
    return parse_json(read_text(path, limit, shown), schema, shown)


def parse_yaml(text: str, schema: Schema[T], source: str) -> list[T]:
    """Every non-empty document of the YAML ``text``, each validated against ``schema`` (messages number the documents
    of a stream of several)."""
    documents = _documents(text, source)
    shown = [f"{source} (document {i})" if len(documents) > 1 else source for i in range(1, len(documents) + 1)]
    return [validated(document, schema, where) for document, where in zip(documents, shown, strict=True)
            if document is not None]


def parse_yaml_document(text: str, schema: Schema[T], source: str) -> T:
    """The one document of the YAML ``text`` (None when it is empty) validated against ``schema``."""
    documents = _documents(text, source)
    if len(documents) > 1:
        raise InputFileError(source, f"holds {len(documents)} YAML documents, not one")
    return validated(documents[0] if documents else None, schema, source)


def read_yaml(path: Path, schema: Schema[T], limit: int = MAX_YAML_BYTES, source: str | None = None) -> list[T]:
    """Every non-empty document of the YAML file at ``path``, validated; an InputFileError for anything else."""
    shown = source or str(path)
    return parse_yaml(read_text(path, limit, shown), schema, shown)


def _documents(text: str, source: str) -> list[Any]:
    """The documents of ``text`` built by the safe loader, once its event stream is within the limits."""
    try:
        check_limits(text, source)
        return list(yaml.load_all(text, Loader=_LOADER))
    except InputFileError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise InputFileError(source, f"is not YAML: {exc.problem or exc.context}{where}") from None
    except yaml.YAMLError as exc:
        raise InputFileError(source, f"is not YAML: {exc}") from None
    except (ValueError, TypeError, OverflowError) as exc:  # a scalar the safe constructor cannot convert
        raise InputFileError(source, f"is not usable YAML: {type(exc).__name__}: {exc}") from None


def check_limits(text: str, source: str) -> None:
    """Refuse ``text`` when its aliases, their expansion or its nesting exceed the limits, reading events only."""
    aliases = 0
    sizes: dict[str, int] = {}  # expanded nodes under each anchor
    open_: list[list[Any]] = [[None, 0]]  # [anchor, expanded nodes so far] per open collection; the stream first
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, CollectionStartEvent):
            open_.append([event.anchor, 1])
            if len(open_) - 1 > MAX_DEPTH:
                raise InputFileError(source, f"nests YAML collections deeper than {MAX_DEPTH} levels")
            continue
        if isinstance(event, AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise InputFileError(source, f"has more than {MAX_ALIASES} YAML aliases")
            if any(event.anchor == anchor for anchor, _ in open_):
                raise InputFileError(source, f"has a recursive YAML alias (*{event.anchor} inside &{event.anchor})")
            nodes = sizes.get(event.anchor or "", 1)
        elif isinstance(event, ScalarEvent):
            nodes = 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, CollectionEndEvent):
            anchor, nodes = open_.pop()
            if anchor:
                sizes[anchor] = nodes
        else:
            continue
        open_[-1][1] += nodes
        if open_[-1][1] > MAX_NODES:
            raise InputFileError(source, f"expands to more than {MAX_NODES:,} YAML nodes through its aliases "
                                         f"(a \"billion laughs\" file?)")


def _adapter(schema: Schema[T]) -> TypeAdapter[T]:
    """One pydantic adapter per schema (built once: building one is the slow part)."""
    if isinstance(schema, TypeAdapter):
        return schema
    if schema not in _ADAPTERS:
        _ADAPTERS[schema] = TypeAdapter(schema)
    return _ADAPTERS[schema]


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}

"""CSV tables read against a declared schema: the columns a table must have, and a type for every column (text, or a
number where a blank cell is a missing value), every row validated with pydantic before a DataFrame is made."""
from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from core.files.source import MIB, InputFileError, read_text
from core.files.structured import describe

MAX_TABLE_BYTES = 256 * MIB  # a sweep's trials table: about 10 kB per trial
SHOWN_MISSING = 10  # missing columns a message names (then how many more)
_INTEGER = re.compile(r"[+-]?\d{1,18}")


@dataclass(frozen=True)
class TableSchema:
    """What a table holds: the columns it must have, and which columns are text; every other column is a number (a
    blank cell is a missing value, ``inf`` and ``nan`` are numbers) and, where ``infinite`` is given, which number
    columns may hold ``inf`` or ``nan`` (in every other, a number is finite)."""

    required: tuple[str, ...]
    text: frozenset[str] = frozenset()
    infinite: frozenset[str] | None = None


def read_table(path: Path, schema: TableSchema, limit: int = MAX_TABLE_BYTES, source: str | None = None) -> pd.DataFrame:
    """The CSV file at ``path`` as a DataFrame once it meets ``schema``; an InputFileError (one line) otherwise."""
    shown = source or str(path)
    return parse_table(read_text(path, limit, shown), schema, shown)


def parse_table(text: str, schema: TableSchema, source: str) -> pd.DataFrame:
    """The CSV ``text`` as a DataFrame once it meets ``schema``: a header row naming every column once, the required
    columns among them, each row as long as the header and each cell of its column's type."""
    if not text.strip():
        raise InputFileError(source, "is empty (no header row)")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
        check_header(header, schema, source)
        row = _row_model(tuple(header), schema.text)
        cells: list[list[str]] = []
        values: list[BaseModel] = []
        for line in reader:
            if not line:
                continue  # a blank line
            if len(line) != len(header):
                raise InputFileError(source, f"line {reader.line_num} has {len(line)} cells, the header {len(header)}")
            try:
                values.append(row.model_validate({name: cell or None for name, cell in zip(header, line, strict=True)}))
            except ValidationError as exc:
                raise InputFileError(source, f"line {reader.line_num}, column {describe(exc)}") from None
            infinite = non_finite(header, line, values[-1], schema)
            if infinite:
                raise InputFileError(source, f"line {reader.line_num}, column {infinite}")
            cells.append(line)
    except csv.Error as exc:
        raise InputFileError(source, f"is not CSV: {exc} (line {reader.line_num})") from None
    return _frame(header, cells, [list(v.model_dump().values()) for v in values], schema.text)


def check_header(header: list[str], schema: TableSchema, source: str) -> None:
    """Every column named, none twice, none of the required ones missing."""
    if any(not name.strip() for name in header):
        raise InputFileError(source, f"has a column without a name (column {[n.strip() for n in header].index('') + 1})")
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise InputFileError(source, f"names the column {name!r} twice")
        seen.add(name)
    missing = [name for name in schema.required if name not in seen]
    if missing:
        shown = ", ".join(missing[:SHOWN_MISSING]) + (f" and {len(missing) - SHOWN_MISSING} more" if len(missing) > SHOWN_MISSING
                                                     else "")
        raise InputFileError(source, f"lacks {len(missing)} of its {len(schema.required)} required columns: {shown}")


def non_finite(header: list[str], cells: list[str], row: BaseModel, schema: TableSchema) -> str:
    """``column: must be finite (got cell)`` for the first number of ``row`` that is inf or nan outside the columns
    ``schema.infinite`` names, where it names them; else empty."""
    if schema.infinite is None:
        return ""
    for name, cell, value in zip(header, cells, row.model_dump().values(), strict=True):
        if isinstance(value, float) and not math.isfinite(value) and name not in schema.infinite:
            return f"{name}: must be finite (got {cell.strip()})"
    return ""


def _row_model(header: tuple[str, ...], text: frozenset[str]) -> type[BaseModel]:
    """A pydantic model of one row: a text or number field per column, under the column's name."""
    fields: dict = {f"c{i}": ((str | None) if name in text else (float | None), Field(alias=name))
                    for i, name in enumerate(header)}
    return create_model("Row", __config__=ConfigDict(extra="forbid"), **fields)


def _frame(header: list[str], cells: list[list[str]], values: list[list], text: frozenset[str]) -> pd.DataFrame:
    """The validated ``values`` as a DataFrame: text columns as strings, a number column as integers where every cell
    is a whole number written as one (``cells``: as ``pandas.read_csv`` reads it), else as floats."""
    columns: dict[str, object] = {}
    for i, name in enumerate(header):
        column = [row[i] for row in values]
        if name in text:
            columns[name] = pd.Series(column, dtype="str")
        elif cells and all(_INTEGER.fullmatch(line[i].strip()) for line in cells):
            columns[name] = np.array([int(line[i]) for line in cells], dtype=np.int64)
        else:
            columns[name] = np.array([np.nan if v is None else v for v in column], dtype=np.float64)
    return pd.DataFrame(columns, columns=header)

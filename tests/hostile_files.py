"""Hostile files for the tests of the readers and of the commands that read files: a "billion laughs" YAML, and
valid files mutated the way a disk, an editor or a person breaks them."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
SNAPSHOTS = REPO / "docs" / "reproduction"
ECO_SI = SNAPSHOTS / "eco-si"  # the smallest committed study snapshot (3 trials, 61 columns)


def examples(n: int) -> settings:
    """Hypothesis settings for ``n`` examples: no deadline (a loaded machine), no example database in the repo."""
    return settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def billion_laughs(levels: int = 9) -> str:
    """The classic: each level an anchor holding nine aliases of the level below (9^9 "lol"s once expanded)."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


@st.composite
def mutated(draw: st.DrawFn, original: bytes) -> bytes:
    """``original`` after 1–4 edits: bytes replaced, inserted or deleted, lines dropped or repeated, a tail cut."""
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["replace", "insert", "delete", "drop_line", "repeat_line", "truncate"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "replace" and data:
            data[at:at + 1] = draw(st.binary(min_size=1, max_size=3))
        elif kind == "insert":
            data[at:at] = draw(st.one_of(st.binary(max_size=8), st.sampled_from([b",", b"\n", b'"', b"&a ", b"*a", b"{"])))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 20))]
        elif kind in ("drop_line", "repeat_line"):
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            lines[i:i + 1] = [] if kind == "drop_line" else [lines[i], lines[i]]
            data = bytearray(b"\n".join(lines))
        elif kind == "truncate":
            del data[at:]
    return bytes(data)


def drop_columns(text: str, keep: list[bool]) -> str:
    """The CSV ``text`` without the columns whose ``keep`` flag is False (cycled over the header)."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([c for i, c in enumerate(row) if keep[i % len(keep)]] for row in rows)
    return out.getvalue()

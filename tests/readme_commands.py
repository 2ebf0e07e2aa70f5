"""The commands and links the README and ``docs/`` show, read from their Markdown as a reader sees it.

Shell commands come from the ```bash blocks: a line ending in a backslash continues on the next, ``#`` starts a
comment, and ``a && b`` is two commands. Links come from Markdown's ``[text](target)`` and HTML's ``src="target"``
outside code."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from conftest import REPO

README = REPO / "README.md"
PAGES = (README, *sorted((REPO / "docs").glob("*.md")))

FENCE = re.compile(r"^[ \t]*```(\w*)[^\n]*\n(.*?)^[ \t]*```", re.S | re.M)
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|\bsrc=\"([^\"]+)\"")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)


def code_blocks(text: str, lang: str = "bash") -> list[str]:
    return [body for found, body in FENCE.findall(text) if found == lang]


def without_code(text: str) -> str:
    """The text a reader sees as prose: fenced blocks and inline code spans blanked out."""
    text = FENCE.sub("", text)
    return re.sub(r"(`+).*?\1", "", text, flags=re.S)


def commands(text: str) -> list[str]:
    """Every command of the text's bash blocks, comments stripped, continuations joined, ``&&`` split."""
    found = []
    for block in code_blocks(text):
        for line in block.replace("\\\n", " ").splitlines():
            tokens = shlex.split(line, comments=True)
            if not tokens:
                continue
            command: list[str] = []
            for token in [*tokens, "&&"]:
                if token == "&&":
                    if command:
                        found.append(shlex.join(command))
                    command = []
                else:
                    command.append(token)
    return found


def readme_commands() -> list[str]:
    return commands(README.read_text())


def links(text: str) -> list[str]:
    return [a or b for a, b in LINK.findall(without_code(text))]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped (letters of any script, digits, ``_`` and ``-``
    kept), spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading anchors on its text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings (repeated headings get -1, -2, ... as on GitHub)."""
    seen: dict[str, int] = {}
    found = set()
    for _, heading in HEADING.findall(FENCE.sub("", page.read_text())):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found

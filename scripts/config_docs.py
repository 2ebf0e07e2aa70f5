"""Write docs/configuration.md from the trial config models' JSON schemas (one table per model).

    .venv/bin/python scripts/config_docs.py [--check]

``--check`` writes nothing and exits 1 when the page differs from what the models say (the tests run it).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # putlab's modules from this checkout; first, so `platform` is putlab's package

from platform.plan.schema import config_model, markdown_table  # noqa: E402
from search_spaces import presets  # noqa: E402

PAGE = REPO / "docs" / "configuration.md"
INTRO = """# Trial configuration

Every preset's trials are configured by one flat dict, validated by the mechanism's config model before any trial
is scheduled: unknown keys are refused, whole numbers must be whole, NaN is never accepted and infinity only where
a field says so, every number has the bounds listed here, and every problem is reported at once, one line each
(`alpha: must be > 0 (got -1)`). Set a value with `--set KEY=VALUE`; a preset's own values (and its grid axes) are
listed by `python -m platform.sweep PRESET --config-schema` (`--config-schema json` prints the JSON schema).

This page is generated from the models by `scripts/config_docs.py`; edit the `Field(description=...)` there.
"""


def page() -> str:
    """The whole Markdown page: one section per config model, naming the presets that use it."""
    users: dict[type, list[str]] = {}
    for name, preset in presets().items():
        users.setdefault(config_model(preset), []).append(name)
    sections = [INTRO]
    for model, names in users.items():
        summary = " ".join((model.__doc__ or "").split("\n\n")[0].split())
        sections.append(f"## {model.__name__}\n\nPresets: {', '.join(f'`{n}`' for n in names)}. {summary}\n\n"
                        f"{markdown_table(model)}\n")
    return "\n".join(sections)


def main() -> int:
    """Write the page, or with ``--check`` compare it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/configuration.md is out of date")
    text = page()
    if parser.parse_args().check:
        current = PAGE.read_text() if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE.relative_to(REPO)} is out of date: run scripts/config_docs.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

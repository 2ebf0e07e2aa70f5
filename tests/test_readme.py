"""The README is a front door and means what it says: short, its links and the docs' links resolve, its quick
commands run as written, and every ``python -m`` command it or ``docs/`` shows uses options its command accepts.
(``ray job submit`` as the README writes it: tests/test_ray_job.py; the install and test commands: ``.ci/run``.)"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from readme_commands import PAGES, README, anchors, commands, links, readme_commands

MAX_LINES = 300
INSTALL_AND_RUN = "bash scripts/install.sh && .venv/bin/python -m platform.sweep amnist"
TESTS = ".venv/bin/python -m pytest"
QUICK = (  # the README's commands that finish in seconds and write nothing
    ".venv/bin/python -m platform.sweep --help",
    ".venv/bin/python -m platform.sweep amnist --config-schema",
    ".venv/bin/python -m k8s.checker",
)
BARE = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}


def test_readme_is_a_front_door() -> None:
    lines = README.read_text().count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines; move reference material and measurements into docs/"


def test_readme_keeps_its_two_commands() -> None:
    """The install-and-run command and the test command, exactly as the README's first two code blocks."""
    shown = readme_commands()
    assert shown[:3] == ["bash scripts/install.sh", ".venv/bin/python -m platform.sweep amnist", TESTS], shown[:3]
    assert f"```bash\n{INSTALL_AND_RUN}\n```" in README.read_text() and f"```bash\n{TESTS}\n```" in README.read_text()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for link in links(page.read_text()):
        if link.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no file {target}")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            broken.append(f"{link}: no heading #{anchor} in {target.relative_to(REPO)}")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("command", QUICK)
def test_quick_readme_command_runs_as_written(command: str) -> None:
    """From the repository root in a bare shell (no venv on PATH, no PYTHONPATH), as a reader would paste it."""
    assert command in readme_commands(), f"{command!r} is no longer in the README: update QUICK"
    out = subprocess.run(shlex.split(command), cwd=REPO, env=BARE, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, (command, out.stdout[-2000:], out.stderr[-2000:])
    assert out.stdout.strip(), command


HELP = """
import contextlib, io, json, runpy, sys
helps = {}
for module in sys.argv[1:]:
    sys.argv = [module, "--help"]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.suppress(SystemExit):
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    helps[module] = buffer.getvalue()
print(json.dumps(helps))
"""


def module_commands() -> list[tuple[str, str, list[str]]]:
    """(page, module, options) of every ``python -m platform.X`` or ``python -m serve`` command in the pages."""
    found = []
    for page in PAGES:
        for command in commands(page.read_text()):
            argv = shlex.split(command)
            for i, token in enumerate(argv[:-1]):
                module = argv[i + 1]
                if token == "-m" and argv[i - 1].endswith("python") and module.split(".")[0] in ("platform", "serve"):
                    options = [a.split("=")[0] for a in argv[i + 2:] if a.startswith("-") and a not in ("-", "--")]
                    found.append((page.name, module, options))
    return found


def test_shown_commands_use_options_their_command_accepts() -> None:
    """Every option a ``python -m`` command of the README or docs/ passes is one its ``--help`` lists (the long
    commands are not run; a renamed or removed option would leave them failing as written)."""
    shown = module_commands()
    modules = sorted({module for _, module, _ in shown})
    assert "platform.sweep" in modules and "serve" in modules
    out = subprocess.run([sys.executable, "-c", HELP, *modules], cwd=REPO, env=BARE | {"PYTHONPATH": str(REPO)},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    helps = json.loads(out.stdout.splitlines()[-1])
    unknown = [f"{page}: python -m {module} {option}" for page, module, options in shown for option in options
               if f"{option} " not in helps[module] and f"{option}," not in helps[module]
               and f"{option}\n" not in helps[module] and f"[{option}]" not in helps[module]]
    assert not unknown, "\n".join(unknown)

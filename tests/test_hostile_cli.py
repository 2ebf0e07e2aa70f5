"""Property-based tests (hypothesis) of the commands that read a store: ``platform.sweep``, ``platform.attack``,
``platform.select``, ``platform.report`` and ``platform.compare`` on random command lines that name nothing that
exists (a preset or a sweep no one made) beside random values of their options and flags; and of ``--budget``'s
durations.

Each command runs in-process (its ``main``): never an exception, never exit 0, one ``error:`` line or argparse's usage,
and the store's bytes unchanged."""
from __future__ import annotations

import contextlib
import hashlib
import io
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from stores import RawStore

from platform.attack import main as attack_cli
from platform.compare import main as compare_cli
from platform.errors import UsageError
from platform.report import main as report_cli
from platform.run.budget import seconds_of
from platform.select import main as select_cli
from platform.sweep import main as sweep_cli
from search_spaces import presets

OPTIONS: dict[str, tuple[str, ...]] = {  # options that take a value
    "sweep": ("--profile", "--set", "--search", "--samples", "--seeds", "--attackers", "--experiment",
              "--gpus-per-trial", "--max-concurrent", "--max-failures", "--budget"),
    "attack": ("--attackers",),
    "select": ("--max-attack", "--trial", "--name", "--attack-records"),
    "report": ("--out",),
    "compare": (),
}
FLAGS: dict[str, tuple[str, ...]] = {  # options that take none
    "sweep": ("--no-reuse", "--no-comparison-grids", "--learning-curve", "--no-learning-curve", "--yes"),
    "attack": ("--learning-curve",),
    "select": ("--sweep-budget",),
    "report": (),
    "compare": (),
}
COMMANDS: dict[str, Callable[[list[str]], int]] = {"sweep": sweep_cli, "attack": attack_cli, "select": select_cli,
                                                  "report": report_cli, "compare": compare_cli}
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=24)


def unknown_name(known: set[str]) -> st.SearchStrategy[str]:
    """A name no preset or sweep has: not known, not an option, not a path that exists."""
    return TEXT.filter(lambda s: s.strip() != "" and s not in known and not s.startswith("-") and not Path(s).exists())


@st.composite
def command_line(draw: st.DrawFn, command: str) -> list[str]:
    """The command's positional argument naming nothing, then a few of its options with random values."""
    argv = [draw(unknown_name(set(presets())))]
    for option in draw(st.lists(st.sampled_from(OPTIONS[command] + FLAGS[command]), max_size=4)) if OPTIONS[command] else []:
        argv += [option] if option in FLAGS[command] else [option, draw(TEXT)]
    return draw(st.permutations(argv)) if command != "sweep" else argv


def digest(folder: Path) -> str:
    """Every file under ``folder`` (names and bytes) hashed."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def run(main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, list[str]]:
    """``main(argv)`` in-process: its exit code (argparse's SystemExit included) and its non-blank stderr lines."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    return code, [line for line in err.getvalue().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An MLflow sqlite store with its tables and nothing in them."""
    folder = tmp_path_factory.mktemp("store")
    RawStore(f"sqlite:///{folder / 'mlflow.db'}").search_experiments()
    return folder


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_command_line_naming_nothing_is_refused_and_stores_nothing(command: str, store: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(store)  # default paths (reports/, putlab_runs/) land in the store's folder, which is hashed
    before = digest(store)
    uri = ["--tracking-uri", f"sqlite:///{store / 'mlflow.db'}"]

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(command_line(command))
    @example(["x'y"]).via("a quote, which MLflow's filter strings cannot hold")
    @example(["\\"]).via("a lone backslash, which escapes a filter string's closing quote")
    @example(["0", "--out", "0/\r"]).via("a carriage return in a path, which the error quotes")
    def refused(argv: list[str]) -> None:
        code, lines = run(COMMANDS[command], [*argv, *uri])
        assert code != 0, argv
        # one line: ours ("error: ...") or argparse's usage then its error
        assert lines and (lines[-1].startswith("error: ") or ": error: " in lines[-1]), (argv, lines)
        assert not any(line.startswith("Traceback") for line in lines), (argv, lines)
        assert digest(store) == before, argv

    refused()


@given(st.text(max_size=16) | st.from_regex(r"\A\s*[0-9.e+-]*[hms]?[0-9.]*[hms]?\s*\Z"))
@example("0m").via("a duration of nothing")
@example("1e400s").via("a number that is not a plain decimal")
@example("99999999999999999999999h").via("a huge one")
def test_a_budget_is_a_positive_duration_or_a_one_line_refusal(text: str) -> None:
    """``--budget``: any text is either a positive, finite number of seconds or a UsageError of one line."""
    try:
        seconds = seconds_of(text)
    except UsageError as refused:
        assert "--budget" in str(refused) and "\n" not in str(refused)
        return
    assert math.isfinite(seconds) and seconds > 0


@given(st.integers(0, 99), st.integers(0, 999), st.integers(0, 9999))
def test_a_budget_counts_its_hours_minutes_and_seconds(hours: int, minutes: int, seconds: int) -> None:
    parts = {"h": hours, "m": minutes, "s": seconds}
    text = "".join(f"{value}{unit}" for unit, value in parts.items() if value)
    if not text:
        return
    assert seconds_of(text) == 3600 * hours + 60 * minutes + seconds

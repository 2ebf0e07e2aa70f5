"""The validated readers every file putlab reads back goes through (core/files): hand-counted limits and messages, the
committed snapshots read exactly as pandas reads them, and property-based tests (hypothesis) on random bytes and
mutated valid files: a reader returns a value that an independent parser agrees with, or raises InputFileError with
one line naming the file, never anything else."""
from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from hostile_files import ECO_SI, REPO, SNAPSHOTS, billion_laughs, drop_columns, examples, mutated
from hypothesis import event, given
from hypothesis import strategies as st

from core.files import structured
from core.files.source import InputFileError, read_bytes, read_text
from core.files.structured import parse_json, parse_yaml, read_json, read_yaml
from core.files.tables import TableSchema, parse_table, read_table
from core.messages import first_line
from platform.papers.snapshot import BASELINE, BASELINE_IDENTITY, BASELINE_TEXT, IDENTITY, TEXT, StudyFile

# --- the file itself: exists, is a file, within its limit, text -------------------------------------------------

def test_a_file_is_read_within_its_limit_and_refused_beyond_it(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 10)
    assert read_bytes(path, limit=10) == b"x" * 10
    with pytest.raises(InputFileError, match=r"f.txt is 10 bytes, over the limit of 9$"):
        read_bytes(path, limit=9)
    with pytest.raises(InputFileError, match=r"nowhere.json does not exist$"):
        read_bytes(tmp_path / "nowhere.json", 10)
    with pytest.raises(InputFileError, match=r"is a folder, not a file$"):
        read_bytes(tmp_path, 10)
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(InputFileError, match=r"pipe is not a regular file$"):  # never blocks on a pipe
        read_bytes(tmp_path / "pipe", 10)


def test_text_is_utf8_and_binary_is_named(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b"\xef\xbb\xbfa,b\n")  # a byte-order mark is dropped
    assert read_text(path, 100) == "a,b\n"
    path.write_bytes(b"a,b\n\xff\xfe")
    with pytest.raises(InputFileError) as refused:
        read_text(path, 100, source="the table")
    assert str(refused.value) == "the table is not UTF-8 text (undecodable byte at offset 4): a binary file?"
    path.write_bytes(b"a\x00b")
    with pytest.raises(InputFileError, match=r"^the table is binary \(it holds NUL bytes\), not text$"):
        read_text(path, 100, source="the table")


def test_a_message_is_one_line_whatever_the_file_is_called(tmp_path: Path) -> None:
    with pytest.raises(InputFileError) as refused:
        read_bytes(tmp_path / "two\nlines", 10)
    assert "\n" not in str(refused.value) and str(refused.value).endswith("two lines does not exist")


def test_first_line_never_fails_on_an_empty_message() -> None:
    assert first_line(ValueError("")) == "ValueError" and first_line(KeyError()) == "KeyError"
    assert first_line(OSError("\n\n  second\nthird")) == "second" and first_line("") == ""


# --- JSON --------------------------------------------------------------------------------------------------------

def test_json_is_parsed_then_validated_with_the_first_problem_named() -> None:
    assert parse_json('{"a": [1, 2]}', dict[str, list[int]], "x.json") == {"a": [1, 2]}
    cases = [
        ("{", "x.json is not JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
        ("[1]", "x.json does not match its schema: the top level: Input should be a valid dictionary"),
        ('{"a": ["1", "b", "c"]}', "x.json does not match its schema: a.1: Input should be a valid integer, unable to "
                                   "parse string as an integer (got 'b') (and 1 more problem)"),
        ("[" * 100_000 + "]" * 100_000, "x.json is not usable JSON: it is nested too deeply"),
        ('{"a": [' + "9" * 5000 + "]}", "x.json is not usable JSON: Exceeds the limit (4300 digits)"),
    ]
    for text, message in cases:
        with pytest.raises(InputFileError) as refused:
            parse_json(text, dict[str, list[int]], "x.json")
        assert str(refused.value).startswith(message), text[:30]


def test_a_committed_study_json_validates_and_an_extra_key_or_wrong_type_does_not() -> None:
    meta = read_json(ECO_SI / "study.json", StudyFile)
    assert meta.label_keys == ("alpha", "lam", "adv_steps", "releaser_si") and meta.columns is not None
    raw = json.loads((ECO_SI / "study.json").read_text())
    for change, message in [({"extra": 1}, "extra: Extra inputs are not permitted (got 1)"),
                            ({"planned": "many"}, "planned: Input should be a valid integer"),
                            ({"label_keys": 5}, "label_keys: Input should be a valid tuple (got 5)"),
                            ({"status": "DONE"}, "status: Input should be 'RUNNING', 'SCHEDULED', 'FINISHED', 'FAILED' or "
                                                 "'KILLED' (got 'DONE')"),
                            ({"config": {"n_train": "inf"}}, "config: Value error, n_train must be None or a number of "
                                                             "records (got 'inf')")]:
        with pytest.raises(InputFileError, match="does not match its schema: " + message.replace("(", r"\(")
                           .replace(")", r"\)")):
            parse_json(json.dumps(raw | change), StudyFile, "study.json")


# --- YAML --------------------------------------------------------------------------------------------------------

def test_a_billion_laughs_file_is_refused_in_milliseconds(tmp_path: Path) -> None:
    path = tmp_path / "laughs.yaml"
    path.write_text(billion_laughs())
    started = time.perf_counter()
    with pytest.raises(InputFileError) as refused:
        read_yaml(path, dict[str, Any])
    assert time.perf_counter() - started < 0.5
    assert str(refused.value) == (f"{path} expands to more than 1,000,000 YAML nodes through its aliases "
                                  '(a "billion laughs" file?)')


def test_expanded_nodes_are_counted_as_the_document_holds_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """{a: [1, 2], b: [[1, 2], [1, 2]]} once its aliases are expanded: the mapping, 2 keys, a list of 2 (3 nodes) and
    a list of two such lists (7 nodes): 13 nodes."""
    text = "a: &x [1, 2]\nb: [*x, *x]\n"
    monkeypatch.setattr(structured, "MAX_NODES", 13)
    assert parse_yaml(text, dict[str, Any], "f") == [{"a": [1, 2], "b": [[1, 2], [1, 2]]}]
    monkeypatch.setattr(structured, "MAX_NODES", 12)
    with pytest.raises(InputFileError, match="expands to more than 12 YAML nodes"):
        parse_yaml(text, dict[str, Any], "f")


def test_aliases_nesting_and_tags_have_their_limits() -> None:
    aliases = "a: &x 1\nb: [" + ", ".join(["*x"] * structured.MAX_ALIASES) + "]\n"
    assert len(parse_yaml(aliases, dict[str, Any], "f")[0]["b"]) == structured.MAX_ALIASES
    deep = "[" * structured.MAX_DEPTH + "]" * structured.MAX_DEPTH
    assert len(parse_yaml(deep, Any, "f")) == 1  # the deepest nesting allowed
    for text, message in [
        (aliases.replace("]", ", *x]"), f"f has more than {structured.MAX_ALIASES} YAML aliases"),
        ("[" + deep + "]", f"f nests YAML collections deeper than {structured.MAX_DEPTH} levels"),
        ("a: &x [1, *x]", "f has a recursive YAML alias (*x inside &x)"),
        ("a: !!python/object/apply:os.system [echo planted]", "f is not YAML: could not determine a constructor for "
                                                              "the tag 'tag:yaml.org,2002:python/object/apply:os.system'"),
        ("a: [1\n", "f is not YAML: did not find expected ',' or ']' (line 2, column 1)"),
        ("a: 2024-13-45", "f is not usable YAML: ValueError: month must be in 1..12"),
        ("- 1\n---\n- 2\n", "f (document 1) does not match its schema: the top level: Input should be a valid dictionary"),
    ]:
        with pytest.raises(InputFileError) as refused:
            parse_yaml(text, dict[str, Any], "f")
        assert str(refused.value).startswith(message), text


# --- tables ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("table", sorted(SNAPSHOTS.glob("*/*.csv")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_committed_snapshot_table_reads_exactly_as_pandas_reads_it(table: Path) -> None:
    """Read with the schema the report reads it with: a joined study's part column and a baseline's name are text."""
    schema = (TableSchema(BASELINE_IDENTITY, BASELINE_TEXT) if table.name == BASELINE
              else TableSchema(IDENTITY, TEXT))
    read = read_table(table, schema)
    pd.testing.assert_frame_equal(read, pd.read_csv(table))


def test_a_table_names_what_is_wrong_with_it() -> None:
    schema = TableSchema(("run_id", "lam"), frozenset({"run_id"}))
    assert parse_table("run_id,lam\nr1,1\nr2,\n", schema, "t.csv")["lam"].isna().tolist() == [False, True]
    for text, message in [
        ("", "t.csv is empty (no header row)"),
        (" \n\n", "t.csv is empty (no header row)"),
        ("run_id\nr1\n", "t.csv lacks 1 of its 2 required columns: lam"),
        ("run_id,lam,lam\n", "t.csv names the column 'lam' twice"),
        ("run_id,,lam\n", "t.csv has a column without a name (column 2)"),
        ("run_id,lam\nr1,1\nr2\n", "t.csv line 3 has 1 cells, the header 2"),
        ("run_id,lam\nr1,1\nr2,lots\n", "t.csv line 3, column lam: Input should be a valid number, unable to parse "
                                        "string as a number (got 'lots')"),
    ]:
        with pytest.raises(InputFileError) as refused:
            parse_table(text, schema, "t.csv")
        assert str(refused.value) == message, text


def test_many_missing_columns_are_named_ten_at_a_time() -> None:
    required = tuple(f"m{i}" for i in range(25))
    with pytest.raises(InputFileError) as refused:
        parse_table("run_id\nr\n", TableSchema(required), "t.csv")
    assert str(refused.value) == "t.csv lacks 25 of its 25 required columns: " + ", ".join(required[:10]) + " and 15 more"


# --- properties: random bytes and mutated valid files ------------------------------------------------------------

def refused_in_one_line(exc: InputFileError, source: str) -> None:
    event("refused")
    assert str(exc).startswith(source + " ") and "\n" not in str(exc) and "\r" not in str(exc)


STUDY_JSON = (ECO_SI / "study.json").read_bytes()
TRIALS_CSV = (ECO_SI / "trials.csv").read_bytes()
MANIFEST = (REPO / "k8s" / "networkpolicy-serve.yaml").read_bytes()
TRIALS_SCHEMA = TableSchema(tuple(json.loads(STUDY_JSON)["columns"]), frozenset(IDENTITY))


@examples(400)
@given(data=st.one_of(st.binary(max_size=400), mutated(STUDY_JSON)))
def test_property_json_reader(tmp_path: Path, data: bytes) -> None:
    """Accepted only as what json.loads and the model make of it; otherwise one line naming the file."""
    path = tmp_path / "study.json"
    path.write_bytes(data)
    try:
        meta = read_json(path, StudyFile)
    except InputFileError as exc:
        refused_in_one_line(exc, str(path))
        return
    assert meta == StudyFile.model_validate(json.loads(data.decode("utf-8-sig")))


@examples(400)
@given(data=st.one_of(st.binary(max_size=400), mutated(MANIFEST), st.just(billion_laughs().encode())))
def test_property_yaml_reader(tmp_path: Path, data: bytes) -> None:
    """Accepted only as what PyYAML's safe loader makes of it (every document a mapping); else one line."""
    path = tmp_path / "m.yaml"
    path.write_bytes(data)
    try:
        documents = read_yaml(path, dict[str, Any])
    except InputFileError as exc:
        refused_in_one_line(exc, str(path))
        return
    # the reader's loader: libyaml's safe loader where PyYAML has it (it takes a tab the pure-Python one refuses)
    safe = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    expected = [d for d in yaml.load_all(data.decode("utf-8-sig"), Loader=safe) if d is not None]
    assert documents == expected and all(isinstance(d, dict) for d in documents)


@examples(400)
@given(data=st.one_of(st.binary(max_size=400), mutated(TRIALS_CSV),
                      st.lists(st.booleans(), min_size=1, max_size=8).map(
                          lambda keep: drop_columns(TRIALS_CSV.decode(), keep).encode())))
def test_property_table_reader(tmp_path: Path, data: bytes) -> None:
    """Accepted only with every declared column, every number cell a number, and then read as pandas reads it."""
    path = tmp_path / "trials.csv"
    path.write_bytes(data)
    try:
        table = read_table(path, TRIALS_SCHEMA)
    except InputFileError as exc:
        refused_in_one_line(exc, str(path))
        return
    assert set(TRIALS_SCHEMA.required) <= set(table.columns)
    assert all(pd.api.types.is_numeric_dtype(table[c]) for c in table.columns if c not in IDENTITY)
    pd.testing.assert_frame_equal(table, pd.read_csv(io.BytesIO(data)), check_dtype=False)


def test_tune_files_read_back_are_checked_line_by_line(tmp_path: Path) -> None:
    """The farm's catch-up reads Tune's result.json beside a trial's checkpoints: a line that is not a result is named
    with its number; a binary file is refused, not decoded into nonsense."""
    from mlflow.entities import Run, RunData, RunInfo, RunTag

    from platform.results.tracking import TAG_CHECKPOINT
    from platform.run.catch_up import checkpoints_of

    trial = tmp_path / "trial"
    (trial / "checkpoint_000001").mkdir(parents=True)
    info = RunInfo("r", "0", "u", "FINISHED", 0, 0, "active")
    run = Run(info, RunData(tags=[RunTag(TAG_CHECKPOINT, str(trial / "checkpoint_000001"))]))
    results = trial / "result.json"
    results.write_text('{"training_iteration": 1, "checkpoint_dir_name": "checkpoint_000001"}\n\n')
    assert checkpoints_of(run) == [(1, str(trial / "checkpoint_000001"))]
    results.write_text('{"training_iteration": 1}\n{"training_iteration": "two"}\n')
    with pytest.raises(InputFileError, match=rf"^{results} \(line 2\) does not match its schema: training_iteration: "):
        checkpoints_of(run)
    results.write_bytes(b"\x89PNG\r\n\x1a\n\x00")
    with pytest.raises(InputFileError, match=rf"^{results} is binary"):
        checkpoints_of(run)


def test_a_checkpoint_whose_result_line_was_lost_is_found_by_its_epoch_file(tmp_path: Path) -> None:
    """A trial restored on another worker can lose the result lines its first worker reported (Tune restores the
    results file from storage, where the newest lines may not be yet): its checkpoints are still found, each at the
    epoch its own epoch file states; a folder without one, or one the results already name, is not counted twice."""
    from mlflow.entities import Run, RunData, RunInfo, RunTag

    from platform.results.tracking import TAG_CHECKPOINT
    from platform.run.catch_up import checkpoints_of
    from trainables.shared.mechanism import EPOCH_FILE

    trial = tmp_path / "trial"
    for index, epoch in enumerate((2, 4, 6)):
        folder = trial / f"checkpoint_{index:06d}"
        folder.mkdir(parents=True)
        (folder / EPOCH_FILE).write_text(json.dumps({"epoch": epoch}))
    (trial / "checkpoint_000003").mkdir()  # no epoch file (an older store): only the results can name it
    lines = [{"training_iteration": i, "checkpoint_dir_name": f"checkpoint_{n:06d}"} for i, n in ((4, 1), (6, 2))]
    (trial / "result.json").write_text("".join(json.dumps(line) + "\n" for line in lines))
    run = Run(RunInfo("r", "0", "u", "FINISHED", 0, 0, "active"),
              RunData(tags=[RunTag(TAG_CHECKPOINT, str(trial / "checkpoint_000002"))]))
    assert checkpoints_of(run) == [(2, str(trial / "checkpoint_000000")), (4, str(trial / "checkpoint_000001")),
                                   (6, str(trial / "checkpoint_000002"))]

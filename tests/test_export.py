"""Exporting trials (original columns plus labels and notes, three formats), one trial as Markdown,
and the `export` / `labels` subcommands."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tracetui.data import export
from tracetui.data.errors import SourceError
from tracetui.data.export import export_trials, trial_markdown
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.store.labels import LabelStore
from tracetui.store.trial_keys import trial_key

from .conftest import GOLDEN, golden_rows, trial_rows, write_parquet

VERIFIER_LOG = (Path(__file__).parent / "fixtures" / "verifier" / "tb_pytest_rA.txt").read_text()


def session_of(*paths: Path):
    return open_session(prepare([SourceSpec(str(p)) for p in paths]))


def with_extras(rows: list[dict], score: int) -> list[dict]:
    """Columns the viewer ignores, which an export must keep."""
    return [{**row, "score": score, "extra": {"seed": score, "tags": ["a", "b"]}} for row in rows]


@pytest.fixture
def sharded(tmp_path) -> Path:
    """Three trials over two parquet shards (one trial split across them), with extra columns."""
    alpha = with_extras(trial_rows("alpha", "alpha__1", 2, "1.0"), 1)
    beta = with_extras(trial_rows("beta", "beta__1", 3, "0.0", verifier=VERIFIER_LOG), 2)
    gamma = with_extras(trial_rows("gamma", "gamma__1", 2, None), 3)
    write_parquet(tmp_path / "ds" / "data" / "train-00000-of-00002.parquet", alpha + beta[:1])
    write_parquet(tmp_path / "ds" / "data" / "train-00001-of-00002.parquet", beta[1:] + gamma)
    return tmp_path / "ds"


def trial_named(session, name: str) -> int:
    return next(t for t in range(len(session)) if session.info(t).trial_name == name)


def test_parquet_round_trip_keeps_original_columns_labels_and_notes(sharded, tmp_path):
    session = session_of(sharded)
    beta, gamma = trial_named(session, "beta__1"), trial_named(session, "gamma__1")
    progress = []
    out = tmp_path / "out.parquet"
    rows = export_trials(
        session,
        [gamma, beta],
        out,
        {beta: {"reward-hack", "bad-task"}},
        {gamma: "look"},
        progress=lambda f, m: progress.append(f),
    )
    assert rows == 5 and progress[-1] == 1.0

    table = pq.read_table(out)
    assert table.column_names[-2:] == ["tracetui_labels", "tracetui_note"]
    assert {"conversations", "score", "extra", "verifier_output", "episode"} <= set(table.column_names)
    got = table.to_pylist()
    assert [(r["trial_name"], r["episode"]) for r in got] == [
        ("beta__1", "episode-0"),
        ("beta__1", "episode-1"),
        ("beta__1", "episode-2"),
        ("gamma__1", "episode-0"),
        ("gamma__1", "episode-1"),
    ]
    assert got[0]["extra"] == {"seed": 2, "tags": ["a", "b"]} and got[0]["score"] == 2
    assert [r["tracetui_labels"] for r in got] == [["bad-task", "reward-hack"]] * 3 + [[]] * 2
    assert [r["tracetui_note"] for r in got] == [None] * 3 + ["look"] * 2

    reopened = session_of(out)
    assert sorted(reopened.info(t).trial_name for t in range(len(reopened))) == ["beta__1", "gamma__1"]
    again = trial_named(reopened, "beta__1")
    assert reopened.info(again).episodes == 3 and reopened.info(again).result == "0.0"
    assert reopened.history(again).messages == session.history(beta).messages


@pytest.mark.parametrize("kind", ["parquet", "arrow"])
def test_rows_are_found_across_row_groups_and_batches(tmp_path, monkeypatch, kind):
    rows = []
    for name, episodes in (("a", 3), ("b", 4), ("c", 3)):
        rows += trial_rows(name, f"{name}__1", episodes, "0.0")
    table = pa.Table.from_pylist(rows)
    path = tmp_path / f"ds.{kind}"
    if kind == "parquet":
        pq.write_table(table, path, row_group_size=3)
        monkeypatch.setattr(export, "BATCH_BYTES", 1)  # one row per batch inside each row group
    else:
        with pa.ipc.new_file(str(path), table.schema) as writer:
            for batch in table.to_batches(max_chunksize=3):
                writer.write_batch(batch)
    session = session_of(path)
    out = tmp_path / "b.jsonl"
    assert export_trials(session, [trial_named(session, "b__1")], out) == 4
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["trial_name"], r["episode"]) for r in got] == [("b__1", f"episode-{k}") for k in range(4)]
    assert got[2]["conversations"] == rows[5]["conversations"]


def test_jsonl_writes_json_originals_back_as_they_were(tmp_path):
    name = "terminus-2_hello-world-invalid-json.traces.json"
    session = session_of(GOLDEN / name)
    out = tmp_path / "trial.jsonl"
    assert export_trials(session, [0], out, {0: {"env-issue"}}, {0: "a note"}) == 4
    lines = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    originals = golden_rows(name)
    assert [{k: v for k, v in line.items() if not k.startswith("tracetui_")} for line in lines] == originals
    assert all(line["tracetui_labels"] == ["env-issue"] and line["tracetui_note"] == "a note" for line in lines)


def test_jsonl_from_parquet_and_csv_flatten_what_they_must(sharded, tmp_path):
    session = session_of(sharded)
    alpha = trial_named(session, "alpha__1")
    export_trials(session, [alpha], tmp_path / "a.jsonl", {alpha: {"x"}}, None)
    lines = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert [line["episode"] for line in lines] == ["episode-0", "episode-1"]
    assert lines[1]["conversations"][-1] == {"role": "assistant", "content": "alpha__1 reply 1"}

    export_trials(session, [alpha], tmp_path / "a.csv", {alpha: {"x", "y"}}, {alpha: "line one\nline two"})
    with open(tmp_path / "a.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == 2
    assert rows[0]["tracetui_labels"] == "x;y" and rows[0]["tracetui_note"] == "line one\nline two"
    assert json.loads(rows[0]["extra"]) == {"seed": 1, "tags": ["a", "b"]}
    assert json.loads(rows[0]["conversations"])[0] == {"role": "user", "content": "prompt for alpha"}
    assert rows[0]["score"] == "1"


def test_datasets_with_conflicting_column_types_export_together(tmp_path):
    first = write_parquet(tmp_path / "one.parquet", [{**r, "score": 1} for r in trial_rows("a", "a__1", 1, "1.0")])
    second = write_parquet(
        tmp_path / "two.parquet", [{**r, "score": [1, 2]} for r in trial_rows("b", "b__1", 1, "0.0")]
    )
    session = session_of(first, second)
    out = tmp_path / "both.parquet"
    assert export_trials(session, range(len(session)), out) == 2
    assert sorted(pq.read_table(out).column("score").to_pylist()) == ["1", "[1,2]"]


def test_bad_suffix_cancel_and_vanished_originals(sharded, tmp_path):
    session = session_of(sharded)
    with pytest.raises(SourceError, match="jsonl"):
        export_trials(session, [0], tmp_path / "out.xlsx")
    assert export_trials(session, [0, 1], tmp_path / "out.parquet", cancelled=lambda: True) == 0
    assert list(tmp_path.glob("*out.parquet*")) == []
    (sharded / "data" / "train-00000-of-00002.parquet").unlink()
    with pytest.raises(SourceError, match="gone"):
        export_trials(session, [trial_named(session, "alpha__1")], tmp_path / "out.jsonl")


def test_markdown_of_a_golden_trial():
    session = session_of(GOLDEN / "terminus-2_hello-world-invalid-json.traces.json")
    text = trial_markdown(session, 0)
    history = session.history(0)
    assert text.splitlines()[:8] == [
        "# hello-world",
        "",
        "| field | value |",
        "|---|---|",
        "| dataset | terminus-2_hello-world-invalid-json.traces |",
        "| trial | NORMALIZED_TRIAL_NAME |",
        "| task | hello-world |",
        "| model | openai/gpt-4o |",
    ]
    assert "## Result\n\nUNKNOWN · no result · the verifier did not run\n" in text
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert headings[:3] == ["### 1. user · episode 0", "### 2. assistant · episode 0", "### 3. user · episode 1"]
    assert len(headings) == len(history.messages)
    assert history.messages[-1].content.strip().splitlines()[-1] in text
    assert text.count("```\n") == 2 * len(history.messages)


def test_markdown_verifier_summary_sub_agents_and_hostile_text(tmp_path):
    rows = trial_rows("regex", "regex__1", 1, "0.0", verifier=VERIFIER_LOG)
    rows[0]["conversations"][1]["content"] = "see ```code``` \x1b]52;c;ZXZpbA==\x07and \x1b[31mred\x1b[0m | pipe"
    rows[0]["task"] = "regex | log\x1b[2J"
    session = session_of(write_parquet(tmp_path / "t.parquet", rows))
    text = trial_markdown(session, 0)
    assert "\x1b" not in text and "\x07" not in text
    assert text.startswith("# regex \\| log\n")
    assert "FAIL · 0.0 · pytest · 2 passed, 1 failed" in text
    assert "- `test_regex_matches_dates`: AssertionError: expected 3 dates, got 2" in text
    assert "````\nsee ```code``` and red | pipe\n````" in text

    golden = session_of(GOLDEN)
    summarized = next(t for t in range(len(golden)) if golden.info(t).episodes == 7)
    assert "## Sub-agent: summarization-1-summary" in trial_markdown(golden, summarized)


def tracetui(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tracetui", *args], capture_output=True, text=True, timeout=120)


def test_export_and_labels_commands(sharded, tmp_path):
    session = session_of(sharded)
    store = LabelStore.open(writer=True)
    beta = trial_key(session, trial_named(session, "beta__1"))
    store.toggle(beta, "reward-hack")
    store.set_note(beta, "deletes the tests")
    store.set_note(trial_key(session, trial_named(session, "gamma__1")), "flaky")
    store.close()

    done = tracetui("export", str(sharded), "--label", "reward-hack", "-o", str(tmp_path / "hacks.jsonl"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"exported 1 trial (3 rows) to {tmp_path / 'hacks.jsonl'}\n"
    lines = [json.loads(line) for line in (tmp_path / "hacks.jsonl").read_text().splitlines()]
    assert {line["trial_name"] for line in lines} == {"beta__1"} and lines[0]["tracetui_note"] == "deletes the tests"

    done = tracetui(
        "export", str(sharded), "--filter", "result=0.0", "--filter", "label=(noted)", "-o", str(tmp_path / "x.csv")
    )
    assert done.returncode == 0 and done.stdout.startswith("exported 1 trial (3 rows)")

    listed = tracetui("labels", str(sharded), "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert [(r["trial_name"], r["labels"], r["note"]) for r in json.loads(listed.stdout)] == [
        ("beta__1", ["reward-hack"], "deletes the tests"),
        ("gamma__1", [], "flaky"),
    ]
    table = tracetui("labels", str(sharded)).stdout.splitlines()
    assert table[0].split() == ["trial_name", "task", "model", "labels", "note", "updated"]
    assert table[2].startswith("beta__1") and "reward-hack" in table[2]
    assert (
        list(csv.DictReader(tracetui("labels", str(sharded), "--format", "csv").stdout.splitlines()))[1]["note"]
        == "flaky"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("export", "SRC", "-o", "out.xlsx"),
        ("export", "SRC"),
        ("export", "SRC", "--filter", "nonsense=1", "-o", "out.jsonl"),
        ("export", "SRC", "--filter", "noequals", "-o", "out.jsonl"),
        ("labels", "SRC", "--format", "xml"),
        ("labels", "/no/such/dataset"),
    ],
)
def test_commands_reject_bad_arguments_in_one_line(sharded, tmp_path, args):
    done = tracetui(*[str(sharded) if a == "SRC" else str(tmp_path / a) if a.startswith("out.") else a for a in args])
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_export_refuses_an_existing_file_without_force(sharded, tmp_path):
    out = tmp_path / "mine.jsonl"
    out.write_text("the user's own file\n")
    done = tracetui("export", str(sharded), "-o", str(out))
    assert done.returncode == 2 and done.stderr.strip() == f"tracetui: -o {out}: the file exists; --force overwrites it"
    assert out.read_text() == "the user's own file\n"
    done = tracetui("export", str(sharded), "-o", str(out), "--force")
    assert done.returncode == 0 and done.stdout.startswith("exported ") and out.read_text() != "the user's own file\n"

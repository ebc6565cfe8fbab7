"""A bad value spoils its cell, not the dataset: mutated copies of a harbor export open with the same trials
and the same numbers as the original (`tracetui stats` and the app), the bad value shown as U+FFFD or read
as missing, and every failure is one line."""

from __future__ import annotations

import json
import zlib

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracetui.cli import main
from tracetui.data import convert as convert_module
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.data.utf8 import python_values, valid_utf8
from tracetui.demo import write_demo
from tracetui.ui.app import StartOptions

from .conftest import GOLDEN
from .ui_helpers import make_app, wait_loaded

BASE_ROWS = 185


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> pa.Table:
    """A demo harbor export: trials with summarization restarts and sub-agent rows, in export order."""
    folder = write_demo(tmp_path_factory.mktemp("base"), rows=BASE_ROWS, seed=0)
    return pq.read_table(next((folder / "data").glob("*.parquet")))


@pytest.fixture(scope="module")
def base_numbers(base, tmp_path_factory) -> list[dict]:
    path = tmp_path_factory.mktemp("unmutated") / "rows.parquet"
    pq.write_table(base, path)
    return stats_of(path)


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def stats_of(path) -> list[dict]:
    """`tracetui stats PATH --format json` (in process)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["stats", str(path), "--format", "json"])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def histories(path) -> dict[str, list]:
    """Each trial's rebuilt history (roles, contents, restarts, episode numbers) by trial name."""
    session = open_session(prepare([SourceSpec(str(path))]))
    found: dict[str, list] = {}
    for trial in range(len(session)):
        history = session.history(trial)
        messages = [(m.role, m.content, m.restart, m.episode) for m in history.messages]
        found.setdefault(session.info(trial).trial_name, []).append((messages, len(history.subagents)))
    return found


def with_column(table: pa.Table, name: str, values: pa.Array) -> pa.Table:
    return table.set_column(table.column_names.index(name), name, values)


def invalid_strings(values: list[bytes | None]) -> pa.Array:
    """A string column holding these bytes as they are (Arrow does not check them when told not to)."""
    return pa.array(values, pa.binary()).view(pa.string())


async def app_trials(path, trial: str | None = None) -> tuple[int, str]:
    """The app's trial count on `path` and its message line, once loaded (opened at `trial`)."""
    app = make_app(prepare([SourceSpec(str(path))]), StartOptions(trial=trial))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.pause()
        assert app.is_running
        if trial is not None:
            assert app.session.info(screen.trial).trial_name == trial
            assert screen.conversation.messages
        return len(screen.trial_list.order), screen.status_line.text


# --- invalid UTF-8 -------------------------------------------------------------------------------


async def test_bytes_flipped_near_the_head_of_a_parquet_file(base, base_numbers, tmp_path):
    """Four bytes flipped in the first data page (uncompressed: they reach the strings as they are)."""
    path = tmp_path / "flipped.parquet"
    pq.write_table(base, path, compression="none")
    data = bytearray(path.read_bytes())
    at = data.index(b"New Terminal Output")
    data[at : at + 4] = bytes(b ^ 0xFF for b in data[at : at + 4])
    path.write_bytes(bytes(data))
    with pytest.raises(pa.ArrowInvalid, match="UTF8"):
        pq.read_table(path).validate(full=True)  # the reader lets the bad bytes through
    assert stats_of(path) == base_numbers
    session = open_session(prepare([SourceSpec(str(path))]))
    spoiled = [t for t in range(len(session)) if any("\ufffd" in m.content for m in session.history(t).messages)]
    assert len(spoiled) == 1
    name = session.info(spoiled[0]).trial_name
    count, _ = await app_trials(path, name)
    assert count == sum(row["trials"] for row in base_numbers)


def test_invalid_utf8_in_metadata_and_text_columns(base, base_numbers, tmp_path):
    providers = [None if v is None else v.encode() + b"\xff\xfe" for v in base.column("model_provider").to_pylist()]
    logs = [None if v is None else v.encode() for v in base.column("verifier_output").to_pylist()]
    last_main = max(i for i, source in enumerate(base.column("trace_source").to_pylist()) if source == "main")
    logs[last_main] = b"PASSED \xc3 ok"  # the log of a trial's last main row: the one the app shows
    table = with_column(base, "model_provider", invalid_strings(providers))
    path = tmp_path / "columns.parquet"
    pq.write_table(with_column(table, "verifier_output", invalid_strings(logs)), path)
    assert stats_of(path) == base_numbers
    session = open_session(prepare([SourceSpec(str(path))]))
    assert all(session.info(t).provider.endswith("\ufffd\ufffd") for t in range(len(session)))
    logs_read = [session.verifier_output(t) or "" for t in range(len(session))]
    assert sum("PASSED \ufffd ok" in log for log in logs_read) == 1


def test_invalid_utf8_read_from_the_hub_is_the_same_as_converted(base, tmp_path, monkeypatch):
    """Before the download: the metadata, the row groups of a trial and the streamed verifier column."""
    from tracetui.data.verifier_index import build_verifier_index

    from .hub_server import FakeHub, use_hub

    providers = [None if v is None else v.encode() + b"\xff" for v in base.column("model_provider").to_pylist()]
    logs = [b"PASSED t::a \xc3\n=== 1 passed in 1s ===" for _ in range(base.num_rows)]
    table = with_column(
        with_column(base, "model_provider", invalid_strings(providers)), "verifier_output", invalid_strings(logs)
    )
    contents = table.column("conversations").combine_chunks()
    raw = [v.encode() + b"\xfe" for v in contents.values.field("content").to_pylist()]
    messages = pa.StructArray.from_arrays([contents.values.field("role"), invalid_strings(raw)], ["role", "content"])
    table = with_column(table, "conversations", pa.ListArray.from_arrays(contents.offsets, messages))
    (tmp_path / "hub" / "data").mkdir(parents=True)
    pq.write_table(table, tmp_path / "hub" / "data" / "train-00000-of-00001.parquet", row_group_size=50)
    with FakeHub({"org/bad": tmp_path / "hub"}) as hub:
        use_hub(monkeypatch, hub.url)
        remote = open_session(prepare([SourceSpec("org/bad")], progressive=True))
        assert remote.remote == [0]
        local = open_session(prepare([SourceSpec(str(tmp_path / "hub"))]))
        assert build_verifier_index(remote).short == build_verifier_index(local).short  # the streamed logs
        for trial in range(len(remote)):
            assert remote.info(trial).provider.endswith("\ufffd")
            remote.fetch(trial)
            assert remote.history(trial) == local.history(trial)
            assert (
                remote.verifier_output(trial)
                == local.verifier_output(trial)
                == "PASSED t::a \ufffd\n=== 1 passed in 1s ==="
            )


def test_data_converted_before_it_was_checked_reads_as_replacement_characters(base, tmp_path, monkeypatch):
    """A conversion cache written with invalid UTF-8 in it (as conversions were before they validated)."""
    contents = base.column("conversations").combine_chunks()
    path = tmp_path / "old.parquet"
    texts = contents.values.field("content")
    raw = [v.encode() for v in texts.to_pylist()]
    raw[0] = raw[0][:10] + b"\xff" + raw[0][10:]
    messages = pa.StructArray.from_arrays([contents.values.field("role"), invalid_strings(raw)], ["role", "content"])
    table = with_column(base, "conversations", pa.ListArray.from_arrays(contents.offsets, messages))
    for name in ("date", "model_provider"):
        table = with_column(table, name, invalid_strings([b"\xff" + v.encode() for v in base.column(name).to_pylist()]))
    pq.write_table(table, path)
    monkeypatch.setattr(convert_module, "valid_utf8", lambda array: array)
    session = open_session(prepare([SourceSpec(str(path))]))
    monkeypatch.undo()
    first = next(t for t in range(len(session)) if 0 in session.trials.rows(t))
    assert "\ufffd" in session.history(first).messages[0].content
    assert session.info(first).date.startswith("\ufffd") and session.info(first).provider.startswith("\ufffd")


def test_utf8_repair_keeps_the_valid_values_and_the_shape():
    strings = invalid_strings([b"ok", b"caf\xe9", None, b"\xff\xfe"] * 50)
    assert python_values(strings)[:4] == ["ok", "caf\ufffd", None, "\ufffd\ufffd"]
    valid = pa.array(["a", "b"])
    assert valid_utf8(valid) is valid  # nothing to fix: the same array, no copy
    content = invalid_strings([b"a", b"\xff", b"c", b"d"])
    messages = pa.StructArray.from_arrays([pa.array(["u", "a", "u", "a"]), content], ["role", "content"])
    lists = pa.ListArray.from_arrays(pa.array([0, 2, 2, 4]), messages, mask=pa.array([False, True, False]))
    assert python_values(lists.slice(0, 3)) == [
        [{"role": "u", "content": "a"}, {"role": "a", "content": "\ufffd"}],
        None,
        [{"role": "u", "content": "c"}, {"role": "a", "content": "d"}],
    ]
    coded = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0]), invalid_strings([b"\xff", b"ok"]))
    assert python_values(coded) == ["\ufffd", "ok", "\ufffd"]
    mapped = pa.MapArray.from_arrays(pa.array([0, 1, 2]), pa.array(["k", "j"]), invalid_strings([b"\xff", b"ok"]))
    assert python_values(mapped) == [None, [("j", "ok")]]  # a type without a rebuild: the bad value is null


# --- episode numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    ["99999999999", "9" * 100_000, "-1", "episode-0.5", "episode--1"],
    ids=["above-2^31", "100000-digits", "minus-one", "fraction", "double-dash"],
)
def test_an_out_of_range_or_non_numeric_episode_is_missing(base, base_numbers, tmp_path, capsys, bad):
    episodes = base.column("episode").to_pylist()
    episodes[3] = bad
    path = tmp_path / "episode.parquet"
    pq.write_table(with_column(base, "episode", pa.array(episodes)), path)
    code, out, err = run_cli(capsys, "stats", str(path), "--format", "json")
    assert (code, err) == (0, "")
    assert json.loads(out) == base_numbers
    unmutated = tmp_path / "unmutated.parquet"
    pq.write_table(base, unmutated)
    assert histories(path) == histories(unmutated)


# --- rows without a usable episode ------------------------------------------------------------------


def episode_less(base: pa.Table, how: str) -> pa.Table:
    if how == "dropped":
        return base.drop(["episode"])
    if how == "renamed":
        return base.rename_columns(["step" if n == "episode" else n for n in base.column_names])
    shuffled = base.take(np.random.default_rng(7).permutation(base.num_rows))
    table = base if how == "null" else shuffled
    return with_column(table, "episode", pa.nulls(base.num_rows, pa.string()))


@pytest.mark.parametrize("how", ["dropped", "renamed", "null", "null and shuffled"])
async def test_rows_without_episodes_group_by_trial_and_conversation(base, base_numbers, tmp_path, how):
    path = tmp_path / "no-episodes.parquet"
    pq.write_table(episode_less(base, how), path)
    assert stats_of(path) == base_numbers
    unmutated = tmp_path / "unmutated.parquet"
    pq.write_table(base, unmutated)
    found, expected = histories(path), histories(unmutated)
    if how == "null and shuffled":  # which of two restarts came first is not in their first messages
        assert found.keys() == expected.keys()
        twice = {name for name, h in expected.items() if sum(m[2] for m in h[0][0]) > 1}
        assert twice and all(len(found[name][0][0]) > 0 for name in twice)
        found, expected = ({n: h for n, h in d.items() if n not in twice} for d in (found, expected))
    assert found == expected  # restarts and episode numbers included
    if how == "dropped":
        count, _ = await app_trials(path)
        assert count == sum(row["trials"] for row in base_numbers)


def test_trials_sharing_a_name_split_by_their_conversations_without_episodes(tmp_path):
    """Harbor's golden rows share one normalized trial name: without episodes, each conversation that does
    not start with a hand-off starts a trial, and the summarization restart stays with its trial."""
    folder = tmp_path / "golden"
    folder.mkdir()
    for file in GOLDEN.glob("*.json"):
        rows = json.loads(file.read_text())
        (folder / file.name).write_text(json.dumps([{k: v for k, v in r.items() if k != "episode"} for r in rows]))
    assert histories(folder) == histories(GOLDEN)
    assert len(histories(folder)["NORMALIZED_TRIAL_NAME"]) == 3


# --- JSON Lines -------------------------------------------------------------------------------------


def jsonl_lines(table: pa.Table) -> list[bytes]:
    return [orjson.dumps(row) for row in table.to_pylist()]


async def test_a_bad_json_lines_line_is_skipped_and_counted(base, base_numbers, tmp_path, capsys):
    lines = jsonl_lines(base)
    lines.insert(50, lines[50][:40])  # line 51: a row cut short
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    code, out, err = run_cli(capsys, "stats", str(path), "--format", "json")
    assert code == 0 and json.loads(out) == base_numbers
    assert err == "tracetui: rows.jsonl: skipped 1 bad line: 51 (invalid JSON at column 41: unexpected end of data)\n"
    code, out, err = run_cli(capsys, "stats", str(path), "--format", "json")  # the cached conversion says it too
    assert code == 0 and err.count("skipped 1 bad line: 51") == 1
    count, message = await app_trials(path)
    assert count == sum(row["trials"] for row in base_numbers)
    assert message == "rows.jsonl: skipped 1 bad line: 51 (invalid JSON at column 41: unexpected end of data)"


def test_lone_surrogates_are_replaced(base, base_numbers, tmp_path, capsys):
    lines = jsonl_lines(base)
    lines[0] = lines[0].replace(b'"content":"', b'"content":"\\ud800 lone \\udfff ', 1)
    lines[1] = lines[1].replace(b'"content":"', b'"content":"\\ud83d\\ude00 a pair ', 1)
    path = tmp_path / "surrogates.jsonl"
    path.write_bytes(b"\n".join(lines))
    code, out, err = run_cli(capsys, "stats", str(path), "--format", "json")
    assert (code, err) == (0, "") and json.loads(out) == base_numbers
    session = open_session(prepare([SourceSpec(str(path))]))
    texts = [session.datasets[0].messages(row)[0][1] for row in (0, 1)]
    assert texts[0].startswith("\ufffd lone \ufffd ") and texts[1].startswith("\U0001f600 a pair ")


def test_json_errors_name_the_file_and_the_line(tmp_path, capsys):
    (tmp_path / "rows.json").write_text('[\n  {"conversations": []},\n  {"task": ]\n]')
    code, _, err = run_cli(capsys, "stats", str(tmp_path / "rows.json"))
    assert code == 2
    assert err == "tracetui: rows.json: invalid JSON at line 3 column 12: unexpected character, expected a JSON value\n"
    (tmp_path / "all-bad.jsonl").write_text("nope\n[1]\n{\n")
    code, _, err = run_cli(capsys, "stats", str(tmp_path / "all-bad.jsonl"))
    assert code == 2
    assert err.startswith("tracetui: all-bad.jsonl: invalid JSON at line 1 column 1: ")
    assert err.endswith(" (2 more bad lines, no good one)\n") and err.count("\n") == 1


# --- random damage: never a traceback ---------------------------------------------------------------


class Originals(dict):
    """The undamaged bytes of each small file, by suffix (a short repr for Hypothesis' reports)."""

    def __repr__(self) -> str:
        return f"Originals({', '.join(self)})"


@pytest.fixture(scope="module")
def small_files(tmp_path_factory) -> Originals:
    """A small parquet file and a JSON Lines file of the same rows (the golden terminus-2 trial)."""
    rows = json.loads((GOLDEN / "terminus-2_hello-world-invalid-json.traces.json").read_text())
    folder = tmp_path_factory.mktemp("small")
    pq.write_table(pa.Table.from_pylist(rows), folder / "small.parquet", compression="none")
    return Originals(
        {".parquet": (folder / "small.parquet").read_bytes(), ".jsonl": b"\n".join(orjson.dumps(row) for row in rows)}
    )


flips = st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(suffix=st.sampled_from([".parquet", ".jsonl"]), changes=flips)
def test_random_byte_flips_never_give_a_traceback(small_files, tmp_path, capsys, suffix, changes):
    data = bytearray(small_files[suffix])
    for where, mask in changes:
        data[int(where * len(data))] ^= mask
    path = tmp_path / f"flipped-{zlib.crc32(data)}{suffix}"
    path.write_bytes(bytes(data))
    for command in ("stats", "findings"):
        code, _, err = run_cli(capsys, command, str(path))
        assert code in (0, 2), err
        said = [line for line in err.splitlines() if line.startswith("tracetui: ")]
        assert len(said) <= 1 and all(len(line) < 400 for line in said), err
        assert "Traceback" not in err and "--debug" not in err, err  # a known failure, told plainly
        if code == 2:
            assert said, err
            break

"""The data layer on its own: golden rows, generated rows, schema tolerance, trials, facets, ordering."""

from __future__ import annotations

import json
import math
import types
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tracetui.data.errors import SourceError
from tracetui.data.facets import FilterState
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.data.trials import outcome_of

from .conftest import GOLDEN, conversation, golden_rows, trial_rows, write_parquet


def session_of(*sources: str):
    return open_session(prepare([SourceSpec(s) for s in sources]))


def test_golden_folder_groups_into_three_trials():
    session = session_of(str(GOLDEN))
    assert session.num_rows == 16
    assert len(session) == 3
    by_agent = {session.info(t).agent + ":" + str(session.info(t).episodes): t for t in range(3)}
    assert set(by_agent) == {"openhands:2", "terminus-2:7", "terminus-2:4"}


def test_summarization_history_restarts_and_keeps_subagents():
    session = session_of(str(GOLDEN))
    trial = next(t for t in range(len(session)) if session.info(t).episodes == 7)
    history = session.history(trial)
    # rows of 2, 4, 6, then 5, 7, 9, 11 messages: 6 + 4 new after the hand-off + 2 + 2 + 2
    assert len(history.messages) == 16
    assert session.info(trial).messages == 16
    restarts = [m for m in history.messages if m.restart]
    assert len(restarts) == 1 and restarts[0].episode == 3
    assert restarts[0].content.startswith("You are picking up work from a previous AI agent")
    assert [m.episode for m in history.messages[:6]] == [0, 0, 1, 1, 2, 2]
    assert history.messages[-1].episode == 6 and history.messages[-1].role == "assistant"
    assert [s.trace_source for s in history.subagents] == [
        "summarization-1-summary",
        "summarization-1-questions",
        "summarization-1-answers",
    ]
    assert len(history.subagents[2].messages) == 9
    assert history.episode_start(3) == 6


def test_history_matches_the_last_row_for_plain_trials():
    session = session_of(str(GOLDEN / "terminus-2_hello-world-invalid-json.traces.json"))
    rows = golden_rows("terminus-2_hello-world-invalid-json.traces.json")
    history = session.history(0)
    assert [(m.role, m.content) for m in history.messages] == [
        (m["role"], m["content"]) for m in rows[-1]["conversations"]
    ]
    # each message knows the episode it first appears in
    assert [m.episode for m in history.messages] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_openhands_rows_keep_consecutive_user_messages():
    session = session_of(str(GOLDEN / "openhands_hello-world.traces.json"))
    history = session.history(0)
    assert [m.role for m in history.messages[:4]] == ["user"] * 4
    assert len(history.messages) == 7


def test_trials_from_parquet_with_outcomes_and_facets(tmp_path):
    rows = (
        trial_rows("regex-log", "regex-log__aaaaaaa", 3, "1.0", model="openai/gpt-5")
        + trial_rows("regex-log", "regex-log__bbbbbbb", 2, "0.0", model="anthropic/claude")
        + trial_rows("chess-best-move", "chess-best-move__ccccccc", 4, "AgentTimeoutError", model="openai/gpt-5")
        + trial_rows("chess-best-move", "chess-best-move__ddddddd", 1, "0.5", model="anthropic/claude")
        + trial_rows("fix-git", "fix-git__eeeeeee", 2, None, model="openai/gpt-5")
    )
    write_parquet(tmp_path / "data" / "train-00000-of-00001.parquet", rows)
    session = session_of(str(tmp_path))
    assert len(session) == 5 and session.num_rows == 12
    outcomes = {session.info(t).trial_name: session.info(t).outcome for t in range(5)}
    assert outcomes == {
        "regex-log__aaaaaaa": "pass",
        "regex-log__bbbbbbb": "fail",
        "chess-best-move__ccccccc": "error",
        "chess-best-move__ddddddd": "partial",
        "fix-git__eeeeeee": "unknown",
    }
    info = session.info(session.find_trial("chess-best-move__ccccccc"))
    assert (info.episodes, info.messages) == (4, 8)

    facets = session.facets
    result = facets.apply(FilterState({"model": frozenset({"openai/gpt-5"})}))
    assert int(result.visible.sum()) == 3
    outcome_counts = dict(zip(facets.facets["outcome"].labels, result.counts["outcome"].tolist()))
    assert outcome_counts == {"pass": 1, "partial": 0, "fail": 0, "error": 1, "unknown": 1, "running": 0}
    # the model facet's own counts ignore the model selection (faceted search)
    model_counts = dict(zip(facets.facets["model"].labels, result.counts["model"].tolist()))
    assert model_counts == {"openai/gpt-5": 3, "anthropic/claude": 2}
    both = facets.apply(FilterState({"model": frozenset({"openai/gpt-5"}), "outcome": frozenset({"pass", "error"})}))
    assert int(both.visible.sum()) == 2
    assert int(facets.apply(FilterState(text="CHESS")).visible.sum()) == 2
    assert int(facets.apply(FilterState({"result": frozenset({"0.0"})})).visible.sum()) == 1


def test_ordering_sorts_visible_trials(tmp_path):
    rows = (
        trial_rows("b-task", "b__1", 5, "1.0")
        + trial_rows("a-task", "a__1", 1, "0.0")
        + trial_rows("c-task", "c__1", 3, "0.0")
    )
    write_parquet(tmp_path / "t.parquet", rows)
    session = session_of(str(tmp_path / "t.parquet"))
    everything = np.ones(len(session), dtype=bool)
    tasks = lambda order: [session.info(int(t)).task for t in order]  # noqa: E731
    assert tasks(session.ordering.sort(everything, "task")) == ["a-task", "b-task", "c-task"]
    assert tasks(session.ordering.sort(everything, "episodes", reverse=True)) == ["b-task", "c-task", "a-task"]
    assert tasks(session.ordering.sort(everything, "outcome")) == ["b-task", "a-task", "c-task"]


def test_repeated_keys_split_by_export_order_and_shuffled_rows_regroup(tmp_path):
    first = trial_rows("t", "NORMALIZED", 3, "1.0")
    second = trial_rows("t", "NORMALIZED", 2, "0.0")
    write_parquet(tmp_path / "repeat.parquet", first + second)
    session = session_of(str(tmp_path / "repeat.parquet"))
    assert sorted(session.info(t).episodes for t in range(len(session))) == [2, 3]
    shuffled = trial_rows("t", "x__1", 4, "1.0")
    write_parquet(tmp_path / "shuffled.parquet", [shuffled[i] for i in (2, 0, 3, 1)])
    session = session_of(str(tmp_path / "shuffled.parquet"))
    assert len(session) == 1
    assert [m.episode for m in session.history(0).messages] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_schema_tolerance(tmp_path):
    base = trial_rows("t", "t__1", 2, "1.0")
    # sharegpt only, no optional columns, an extra column, an all-null column
    sharegpt = [
        {
            "conversations_sharegpt": [
                {"from": "human" if m["role"] == "user" else "gpt", "value": m["content"]} for m in r["conversations"]
            ],
            "episode": r["episode"],
            "task": "t",
            "extra_analysis": "x",
            "result": None,
        }
        for r in base
    ]
    write_parquet(tmp_path / "sharegpt.parquet", sharegpt)
    session = session_of(str(tmp_path / "sharegpt.parquet"))
    assert [m.role for m in session.history(0).messages] == ["user", "assistant", "user", "assistant"]
    # content as a list of parts, and `messages` as the column name
    parts = [
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "image"}]}], "task": "p"}
    ]
    (tmp_path / "parts.jsonl").write_text("\n".join(json.dumps(r) for r in parts))
    session = session_of(str(tmp_path / "parts.jsonl"))
    assert session.history(0).messages[0].content == "hello\n[image part]"
    # conversations given as a JSON string
    as_string = [{"conversations": json.dumps(conversation(("user", "hi"), ("assistant", "yo"))), "task": "s"}]
    write_parquet(tmp_path / "string.parquet", as_string)
    assert [m.content for m in session_of(str(tmp_path / "string.parquet")).history(0).messages] == ["hi", "yo"]
    # a null conversation shows as an empty history, not a crash
    write_parquet(
        tmp_path / "null.parquet",
        [{"conversations": None, "task": "n"}],
        schema=pa.schema(
            [
                ("conversations", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
                ("task", pa.string()),
            ]
        ),
    )
    assert session_of(str(tmp_path / "null.parquet")).history(0).messages == ()


def test_no_conversation_column_is_one_clear_error(tmp_path):
    write_parquet(tmp_path / "bad.parquet", [{"task": "x", "result": "1.0"}])
    with pytest.raises(SourceError, match="no conversation column"):
        prepare([SourceSpec(str(tmp_path / "bad.parquet"))])


def test_bad_sources_raise_source_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "corrupt.parquet").write_bytes(b"PAR1 this is not parquet")
    write_parquet(
        tmp_path / "zero.parquet",
        [],
        schema=pa.schema([("conversations", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())])))]),
    )
    cases = {
        str(tmp_path / "missing.parquet"): "no such file",
        str(tmp_path / "empty"): "no dataset found",
        str(tmp_path / "corrupt.parquet"): "not a readable parquet",
        str(tmp_path / "zero.parquet"): "0 rows",
        "someone/unknown-dataset": "not in the local Hugging Face cache",
    }
    for source, message in cases.items():
        with pytest.raises(SourceError, match=message):
            prepare([SourceSpec(source)])


def test_conversion_is_cached_and_reused(tmp_path):
    write_parquet(tmp_path / "a.parquet", trial_rows("t", "t__1", 2, "1.0"))
    sources = prepare([SourceSpec(str(tmp_path / "a.parquet"))])
    first = open_session(sources).datasets[0].folder
    calls = []
    second = open_session(sources, lambda f, m: calls.append(f)).datasets[0].folder
    assert first == second and calls == []  # no conversion the second time


def test_metadata_is_small_and_text_is_read_lazily(tmp_path):
    big = "x" * 200_000
    rows = trial_rows("t", "t__1", 3, "1.0", verifier="== 1 passed in 0.1s ==")
    for row in rows:
        row["conversations"][0]["content"] = big
    write_parquet(tmp_path / "big.parquet", rows)
    session = session_of(str(tmp_path / "big.parquet"))
    ds = session.datasets[0]
    assert ds.meta.nbytes < 20_000  # the text never enters the metadata table
    assert "_reader" not in ds.__dict__  # the data file is not even opened until a conversation is read
    assert session.history(0).messages[0].content == big
    assert session.verifier_output(0) == "== 1 passed in 0.1s =="
    assert session.info(0).size >= 200_000


@pytest.mark.parametrize(
    "result,expected",
    [
        ("1.0", "pass"),
        ("0.0", "fail"),
        ("0.61", "partial"),
        ("AgentTimeoutError", "error"),
        (None, "unknown"),
        ("", "unknown"),
        ("nan", "unknown"),
    ],
)
def test_outcome_of(result, expected):
    from tracetui.data.trials import OUTCOMES

    outcome, reward = outcome_of(result)
    assert OUTCOMES[outcome] == expected
    assert math.isnan(reward) == (expected in ("error", "unknown"))


def test_label_ranks_fold_case_put_no_label_last_and_keep_ties_in_label_order():
    """What the trial list sorts by: a label's place among the column's labels, case folded (a control
    character or NUL compares as Python compares it), a trial without the label last."""
    from tracetui.data.ordering import Ordering

    labels = ["beta", None, "Alpha", "a\x00", "a", "ALPHA", "", None, "gamma"]
    codes = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, -1], dtype=np.int32)
    trials = types.SimpleNamespace(labels={"task": labels}, codes={"task": codes})
    rank = Ordering(trials)._label_rank("task")  # type: ignore[arg-type]
    by_rank = [labels[c] if c >= 0 else "(no label)" for c in codes[np.argsort(rank, kind="stable")]]
    assert by_rank == ["", "a", "a\x00", "Alpha", "ALPHA", "beta", "gamma", None, None, "(no label)"]


def _anonymous_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("RssAnon:")).split()[1]) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_memory_freed_on_many_threads_is_given_back():
    """What reader threads allocate and free (response bodies, here 2 KB each) stays in the C heap until
    `give_back`: ~100 MB at 400,000 rows through the hub, held for a whole session."""
    from concurrent.futures import ThreadPoolExecutor

    from tracetui.data.heap import _malloc_trim, give_back

    if _malloc_trim() is None:
        pytest.skip("no glibc malloc_trim here: only pyarrow's pool is given back")

    survivors: list[bytes] = []

    def churn(seed: int) -> None:
        made = [bytes([seed % 251]) * 2048 for _ in range(20_000)]  # 40 MB a thread
        survivors.extend(made[::16])  # a few live on between the freed ones, as a session's data does

    give_back()
    before = _anonymous_mb()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(churn, range(8)))
    held = _anonymous_mb()
    give_back()
    assert held - before > 40 and _anonymous_mb() < held - 40
    assert len(survivors) == 8 * 1250


def test_small_row_groups_convert_to_few_batches_and_large_ones_split(tmp_path, monkeypatch):
    """Row groups of a few rows are read as runs (a batch costs its measuring whatever its size), a row
    group larger than a batch is split; either way every trial reads as from one row group."""
    from tracetui.data import convert

    rows = [row for t in range(8) for row in trial_rows("task-a", f"t{t}", 4, "pass", verifier=f"log {t}")]
    table = pa.Table.from_pylist(rows)
    for name, size in (("small", 3), ("whole", len(rows))):
        (tmp_path / name).mkdir()
        pq.write_table(table, tmp_path / name / "data.parquet", row_group_size=size)

    def opened(name: str):
        session = open_session(prepare([SourceSpec(str(tmp_path / name / "data.parquet"))]))
        batches = session.datasets[0]._reader.num_record_batches
        return batches, [(session.history(t).messages, session.verifier_output(t)) for t in range(len(session))]

    small, whole = opened("small"), opened("whole")
    assert small[0] == whole[0] == 1 and small[1] == whole[1] and len(small[1]) == 8
    monkeypatch.setattr(convert, "BATCH_BYTES", 1)  # each row over the bound: a batch each
    (tmp_path / "cache").mkdir()
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(tmp_path / "cache"))
    split = opened("whole")
    assert split[0] == len(rows) and split[1] == whole[1]

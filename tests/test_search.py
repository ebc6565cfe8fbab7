"""Full-text search across a session: options, nested-prefix rows, sub-agents, verifier logs, matches that
would span two messages, the search text beside a conversion (healed when missing or damaged), cancellation."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from tracetui.data.facets import FilterState
from tracetui.data.search import SearchCancelled, search
from tracetui.data.search_text import path_of
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec

from .conftest import GOLDEN, conversation, trial_rows, write_parquet


def session_of(*sources):
    return open_session(prepare([SourceSpec(str(s)) for s in sources]))


def subagent_row(task: str, trial: str, text: str) -> dict:
    row = trial_rows(task, trial, 1, None)[0]
    row["conversations"] = conversation(("user", "summarize"), ("assistant", text))
    row["trace_source"] = "summarization-1-summary"
    return row


@pytest.fixture
def traces(tmp_path):
    """Three files (so several batches): four trials, one with a sub-agent row, one with a verifier log."""
    folder = tmp_path / "traces"
    write_parquet(
        folder / "a.parquet", trial_rows("alpha", "alpha__1", 4, "1.0") + trial_rows("beta", "beta__1", 2, "0.0")
    )
    write_parquet(
        folder / "b.parquet",
        trial_rows("a.b(c)*[x]", "special__1", 1, "0.0", verifier="FAILED tests/test_x.py::test_deep - boom")
        + trial_rows("aXb", "axb__1", 3, "1.0"),
    )
    write_parquet(folder / "c.parquet", [subagent_row("beta", "beta__1", "a hidden Needle in the summary")])
    session = session_of(folder)
    assert len(session) == 4
    return session


def names(session, mask) -> set[str]:
    return {session.info(int(t)).trial_name for t in np.nonzero(mask)[0]}


def test_a_message_repeated_by_later_rows_is_found(traces):
    # "prompt for" is in every episode row (4 + 2 + 1 + 3 rows), new only in each trial's first
    result = search(traces, "prompt for", verifier=False)
    assert result.matched_trials == 4 and result.trials.all()
    assert result.bytes_scanned > 0
    # a message of episode 1 repeats in the later rows of its trial; the last episode's is new in its row
    result = search(traces, "reply 1")
    assert names(traces, result.trials) == {"alpha__1", "beta__1", "axb__1"}
    assert names(traces, search(traces, "alpha__1 reply 3").trials) == {"alpha__1"}
    trial = traces.find_trial("alpha__1")
    assert result.messages_in(traces, trial) == [3]


def test_case_and_regex_options(traces):
    assert search(traces, "PROMPT FOR ALPHA").matched_trials == 0
    assert names(traces, search(traces, "PROMPT FOR ALPHA", ignore_case=True).trials) == {"alpha__1"}
    result = search(traces, r"reply [23]$", regex=True)
    assert names(traces, result.trials) == {"alpha__1", "axb__1"}
    assert result.messages_in(traces, traces.find_trial("alpha__1")) == [5, 7]


def test_a_literal_needle_keeps_regex_characters_literal(traces):
    assert names(traces, search(traces, "a.b(c)*[x]").trials) == {"special__1"}
    assert search(traces, "a.b").matched_trials == 1  # not "aXb"
    assert search(traces, "a.b", regex=True).matched_trials == 2


def test_sub_agent_rows_and_verifier_logs_are_searched(traces):
    result = search(traces, "needle", ignore_case=True)
    beta = traces.find_trial("beta__1")
    assert names(traces, result.trials) == {"beta__1"}
    assert result.messages_in(traces, beta) == []
    assert result.subagent_messages_in(traces, beta) == [(0, 1)]

    logs = search(traces, "test_deep")
    assert names(traces, logs.trials) == {"special__1"}
    assert names(traces, logs.in_verifier) == {"special__1"}
    assert search(traces, "test_deep", verifier=False).matched_trials == 0


def test_search_spans_datasets_and_filters_the_trials(traces, tmp_path):
    other = write_parquet(tmp_path / "other" / "o.parquet", trial_rows("gamma", "gamma__1", 2, "0.0"))
    session = session_of(tmp_path / "traces", other)
    result = search(session, "reply 1")
    assert names(session, result.trials) == {"alpha__1", "beta__1", "axb__1", "gamma__1"}
    visible = session.facets.apply(FilterState(), extra=result.trials).visible  # as the triage screen filters
    assert np.array_equal(visible, result.trials)
    assert int(session.facets.apply(FilterState(), extra=~result.trials).visible.sum()) == 1


@pytest.mark.parametrize(
    ("needle", "options"),
    [
        ("the", {}),
        ("ERROR", {"ignore_case": True}),
        ("summary", {}),
        (" the ", {}),
        (r"^New", {"regex": True}),
        (r"\bls\b", {"regex": True}),
        (r"x*", {"regex": True}),  # an empty match, in every message
    ],
)
def test_the_mask_agrees_with_the_rebuilt_histories(needle, options):
    """Golden rows include a summarization restart and sub-agent rows: the scan must agree with histories."""
    session = session_of(GOLDEN)
    result = search(session, needle, verifier=False, **options)
    per_trial = [
        len(result.messages_in(session, t)) + len(result.subagent_messages_in(session, t)) for t in range(len(session))
    ]
    assert result.trials.tolist() == [n > 0 for n in per_trial]
    assert result.matched_trials > 0


def test_progress_and_cancellation(traces):
    seen: list[float] = []
    search(traces, "reply", progress=seen.append)
    # small consecutive pieces are scanned as one job: its contents, then its verifier logs
    assert len(seen) == 2 and seen == sorted(seen) and seen[-1] == pytest.approx(1.0)

    with pytest.raises(SearchCancelled):
        search(traces, "reply", cancelled=lambda: True)
    seen.clear()
    with pytest.raises(SearchCancelled):
        search(traces, "reply", progress=seen.append, cancelled=lambda: bool(seen))
    assert len(seen) == 1  # stopped at the first check after the first batch


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(abc", "missing"),  # both engines reject it
        ("(?=x)y", "invalid perl operator"),  # Python accepts look-ahead, RE2 does not
        (r"\pL", "bad escape"),  # RE2 accepts it, Python's re (used by messages_in) does not
    ],
)
def test_an_invalid_regex_is_a_one_line_value_error(traces, pattern, message):
    with pytest.raises(ValueError, match=message) as caught:
        search(traces, pattern, regex=True)
    assert "\n" not in str(caught.value) and pattern in str(caught.value)
    assert search(traces, pattern).matched_trials == 0  # the same text as a literal is fine


def test_an_empty_pattern_is_refused(traces):
    with pytest.raises(ValueError, match="empty"):
        search(traces, "")


def test_literal_with_surrounding_blanks_is_confirmed_whole(tmp_path):
    """The scan looks for the trimmed needle first; only messages with the whole needle count."""
    from tracetui.data.search import search
    from tracetui.data.session import open_session, prepare
    from tracetui.data.sources import SourceSpec

    from .conftest import trial_rows, write_parquet

    rows = trial_rows("a", "a__1", 1, "1.0") + trial_rows("b", "b__1", 1, "1.0")
    rows[0]["conversations"][0]["content"] = "value: 42 here"
    rows[1]["conversations"][0]["content"] = "value:42 here"
    write_parquet(tmp_path / "s.parquet", rows)
    session = open_session(prepare([SourceSpec(str(tmp_path / "s.parquet"))]))
    result = search(session, " 42 ")
    assert [session.info(t).task for t in result.trials.nonzero()[0]] == ["a"]
    assert search(session, "42").matched_trials == 2


def one_row_trials(tmp_path, *conversations: list[str]):
    """A session of one-row trials `t0`, `t1`…, each of the given messages (user and assistant in turn)."""
    rows = []
    for index, texts in enumerate(conversations):
        row = trial_rows(f"task{index}", f"t{index}", 1, "1.0")[0]
        row["conversations"] = conversation(*((("user", "assistant")[i % 2], text) for i, text in enumerate(texts)))
        rows.append(row)
    return session_of(write_parquet(tmp_path / "rows.parquet", rows))


@pytest.mark.parametrize(
    ("pattern", "options", "expected"),
    [
        ("cdef", {}, set()),  # "abc" + "def": only the two messages together
        ("abcd", {}, {"t1"}),  # t1's first "abcd" spans "xx ab" + "cd"; its third message holds one
        ("ABCD", {"ignore_case": True}, {"t1"}),
        ("dab", {}, set()),  # "cd" + "abcd"
        (" 42 ", {}, {"t2"}),  # t2: "a 42" + " b 42 c"; t3: "a 42" + " b"
        (r"c.?d", {"regex": True}, {"t1"}),
        (r"^def", {"regex": True}, {"t0"}),  # anchors hold at each message's ends
        (r"abc$", {"regex": True}, {"t0"}),
        (r"\bcd\b", {"regex": True}, {"t1"}),
    ],
)
def test_a_match_spanning_two_messages_is_no_match(tmp_path, pattern, options, expected):
    session = one_row_trials(tmp_path, ["abc", "def"], ["xx ab", "cd", "abcd"], ["a 42", " b 42 c"], ["a 42", " b"])
    assert names(session, search(session, pattern, **options).trials) == expected


def search_files(session) -> list:
    return [path_of(ds.folder) for ds in session.datasets]


def test_the_conversion_writes_the_search_text_and_an_old_cache_gets_it_on_its_first_search(tmp_path, traces):
    needles = [("reply 1", {}), ("NEEDLE", {"ignore_case": True}), ("test_deep", {}), (r"reply [23]$", {"regex": True})]
    expected = [search(traces, pattern, **options) for pattern, options in needles]
    (text,) = search_files(traces)
    assert text.is_file()  # written by the conversion
    older = text.with_name("search-v1.2.arrow")
    text.rename(older)  # as a conversion made before this version of the search text is
    old = session_of(tmp_path / "traces")
    seen: list[float] = []
    results = [search(old, needles[0][0], progress=seen.append)]
    assert text.is_file() and not older.exists()  # the older version's, which nothing reads, is gone
    assert len(seen) > 2 and seen == sorted(seen) and seen[-1] == pytest.approx(1.0)  # writing it, then the scan
    results += [search(old, pattern, **options) for pattern, options in needles[1:]]
    for want, got in zip(expected, results):
        assert np.array_equal(want.trials, got.trials) and np.array_equal(want.in_verifier, got.in_verifier)
        assert want.bytes_scanned == got.bytes_scanned


def test_writing_the_search_text_is_cancelled_with_the_search(tmp_path, traces):
    (text,) = search_files(traces)
    text.unlink()
    old = session_of(tmp_path / "traces")
    seen: list[float] = []
    with pytest.raises(SearchCancelled):
        search(old, "reply 1", progress=seen.append, cancelled=lambda: bool(seen))
    assert len(seen) == 1 and seen[0] < 0.5  # stopped while writing it
    assert not text.exists() and not list(text.parent.glob(f".{text.name}*"))  # nothing half-written
    assert names(old, search(old, "reply 1").trials) == {"alpha__1", "beta__1", "axb__1"}
    assert text.is_file()


@pytest.mark.parametrize("damage", ["cut", "other rows", "a run with no start"])
def test_a_damaged_search_text_is_written_again(tmp_path, traces, caplog, damage):
    (text,) = search_files(traces)
    if damage == "cut":
        text.write_bytes(text.read_bytes()[: text.stat().st_size // 2])
    elif damage == "a run with no start":  # its first text's trials lost: the trials of none
        reader = pa.ipc.open_file(pa.BufferReader(text.read_bytes()))  # not mapped: rewritten below
        batches = [reader.get_batch_with_custom_metadata(i) for i in range(reader.num_record_batches)]
        with pa.OSFile(str(text), "wb") as sink, pa.ipc.new_file(sink, reader.schema) as writer:
            for index, (batch, meta) in enumerate(batches):
                rows = batch.column(1)
                if index == 0:
                    rows = pa.ListArray.from_arrays(
                        rows.offsets, rows.values, mask=pa.array([True] + [False] * (len(rows) - 1))
                    )
                writer.write_batch(pa.record_batch([batch.column(0), rows], schema=reader.schema), custom_metadata=meta)
    else:  # a sound file of other data (one trial's rows)
        other = session_of(write_parquet(tmp_path / "other" / "o.parquet", trial_rows("gamma", "gamma__1", 2, "0.0")))
        text.write_bytes(search_files(other)[0].read_bytes())
    again = session_of(tmp_path / "traces")
    assert names(again, search(again, "reply 1").trials) == {"alpha__1", "beta__1", "axb__1"}
    assert any("was damaged" in r.getMessage() and text.name in r.getMessage() for r in caplog.records)
    assert search_files(session_of(tmp_path / "traces"))[0].stat().st_size > 0
    caplog.clear()
    assert names(session_of(tmp_path / "traces"), search(again, "reply 1").trials) == {"alpha__1", "beta__1", "axb__1"}
    assert not caplog.records  # written whole the second time


@pytest.mark.parametrize(
    ("pattern", "options"), [("exit code 3", {}), (r"exit code \d+", {"regex": True}), (" 42 ", {})]
)
def test_a_needle_is_looked_for_by_a_part_of_it_then_confirmed_whole(tmp_path, pattern, options):
    """The scan looks for a part of the needle (from a rare character: `xit code 3`; the regex's literal
    prefix; the trimmed `42`): a message holding only that part is no match, and the trial's later
    messages are still looked at."""
    session = one_row_trials(
        tmp_path,
        ["Exit code 3", "x42 y", "exit code x"],
        ["Exit code 3", "x42 y", "exit code x", "an exit code 3", "a 42 b"],
    )
    assert names(session, search(session, pattern, **options).trials) == {"t1"}


def kept_texts(session) -> list[str]:
    """The texts of the session's one search text file, messages then logs."""
    (ds,) = session.datasets
    found = ds.search_text()
    return [text for batch in found.messages + found.logs for text in batch.column(0).to_pylist()]


def test_a_text_that_trials_share_is_kept_once_and_found_in_each(tmp_path):
    session = one_row_trials(
        tmp_path,
        ["shared prompt", "only zero", "more zero", "tail"],
        ["shared prompt", "only one", "tail"],
        ["shared prompt", "only zero", "more zero", "tail"],  # t0 again: its two new texts are one run
        ["other", "shared prompt"],
    )
    assert sorted(kept_texts(session)) == ["more zero", "only one", "only zero", "other", "shared prompt", "tail"]
    for pattern, options, expected in [
        ("shared prompt", {}, {"t0", "t1", "t2", "t3"}),
        ("only zero", {}, {"t0", "t2"}),
        ("ONLY ZERO", {"ignore_case": True}, {"t0", "t2"}),
        ("more zero", {}, {"t0", "t2"}),  # the second of the run
        ("zeromore", {}, set()),  # two messages of the run
        ("zerotail", {}, set()),
        ("tail", {}, {"t0", "t1", "t2"}),
        ("promptonly", {}, set()),
        ("othershared", {}, set()),
        ("only one", {}, {"t1"}),
        (r"^only \w+$", {"regex": True}, {"t0", "t1", "t2"}),
        (r"ta.l", {"regex": True}, {"t0", "t1", "t2"}),
    ]:
        assert names(session, search(session, pattern, **options).trials) == expected, pattern


def test_attempts_at_one_task_share_its_prompt_and_a_log(tmp_path):
    log = "FAILED tests/test_x.py::test_same - same for both"
    rows = trial_rows("same", "same__1", 3, "0.0", verifier=log) + trial_rows("same", "same__2", 2, "0.0", verifier=log)
    rows += trial_rows("same", "same__3", 2, "1.0", verifier="1 passed")
    session = session_of(write_parquet(tmp_path / "rows.parquet", rows))
    assert kept_texts(session).count("prompt for same") == 1 and kept_texts(session).count(log) == 1
    assert names(session, search(session, "prompt for same").trials) == {"same__1", "same__2", "same__3"}
    assert names(session, search(session, "same__2 reply 1").trials) == {"same__2"}
    result = search(session, "test_same")
    assert names(session, result.trials) == names(session, result.in_verifier) == {"same__1", "same__2"}
    assert names(session, search(session, "test_same", verifier=False).trials) == set()

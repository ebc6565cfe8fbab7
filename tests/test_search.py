"""Full-text search across a session: options, nested-prefix rows, sub-agents, verifier logs, cancellation."""

from __future__ import annotations

import numpy as np
import pytest

from tracetui.data.facets import FilterState
from tracetui.data.search import SearchCancelled, search
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


def test_literal_search_counts_a_repeated_message_once_per_trial(traces):
    # "prompt for" is in every episode row (4 + 2 + 1 + 3 rows) but once per history
    result = search(traces, "prompt for", verifier=False)
    assert result.matched_trials == 4 and result.trials.all()
    assert result.matched_messages == 4
    assert result.bytes_scanned > 0
    # a message of episode 1 repeats in the later rows of its trial, and counts once
    result = search(traces, "reply 1")
    assert names(traces, result.trials) == {"alpha__1", "beta__1", "axb__1"}
    assert result.matched_messages == 3
    trial = traces.find_trial("alpha__1")
    assert result.messages_in(traces, trial) == [3]


def test_case_and_regex_options(traces):
    assert search(traces, "PROMPT FOR ALPHA").matched_trials == 0
    assert names(traces, search(traces, "PROMPT FOR ALPHA", ignore_case=True).trials) == {"alpha__1"}
    result = search(traces, r"reply [23]$", regex=True)
    assert names(traces, result.trials) == {"alpha__1", "axb__1"}
    assert result.matched_messages == 3  # alpha: reply 2, reply 3; aXb: reply 2
    assert result.messages_in(traces, traces.find_trial("alpha__1")) == [5, 7]
    assert result.matched_messages == sum(len(result.messages_in(traces, t)) for t in range(len(traces)))


def test_a_literal_needle_keeps_regex_characters_literal(traces):
    assert names(traces, search(traces, "a.b(c)*[x]").trials) == {"special__1"}
    assert search(traces, "a.b").matched_trials == 1  # not "aXb"
    assert search(traces, "a.b", regex=True).matched_trials == 2


def test_sub_agent_rows_and_verifier_logs_are_searched(traces):
    result = search(traces, "needle", ignore_case=True)
    beta = traces.find_trial("beta__1")
    assert names(traces, result.trials) == {"beta__1"} and result.matched_messages == 1
    assert result.messages_in(traces, beta) == []
    assert result.subagent_messages_in(traces, beta) == [(0, 1)]

    logs = search(traces, "test_deep")
    assert names(traces, logs.trials) == {"special__1"} and logs.matched_messages == 0
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


@pytest.mark.parametrize("needle", ["the", "error", "summary"])
def test_mask_and_message_count_agree_with_the_rebuilt_histories(needle):
    """Golden rows include a summarization restart and sub-agent rows: the scan must agree with histories."""
    session = session_of(GOLDEN)
    result = search(session, needle, ignore_case=True, verifier=False)
    per_trial = [
        len(result.messages_in(session, t)) + len(result.subagent_messages_in(session, t)) for t in range(len(session))
    ]
    assert result.matched_messages == sum(per_trial)
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

"""The findings index over a dataset: per-trial findings, the facet, markers, and the stored index."""

from __future__ import annotations

import pytest

from tracetui.data import findings_index
from tracetui.data.facets import FilterState
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.findings import engine

from .conftest import golden_rows, write_parquet
from .findings_helpers import history, output, reply, trial_rows_of

LOG = "collected 2 items\n\n../tests/test_outputs.py .F\n=========== 1 failed, 1 passed in 0.09s ==========="


def planted_rows() -> list[dict]:
    tamper = history(
        reply("ls tests"),
        output("test_outputs.py", "ls tests"),
        reply("sed -i 's/assert/assert True or/' tests/test_outputs.py"),
        output(),
        reply("pytest -q"),
        output("2 passed"),
        reply(analysis="Done.", complete=True),
    )
    claim = history(
        reply("python3 solve.py"), output("ok"), reply(analysis="All tests pass. The task is complete.", complete=True)
    )
    clean = history(
        reply("cat tests/test_outputs.py"),
        output("def test_a(): ..."),
        reply("pytest -q"),
        output("2 passed"),
        reply(analysis="Finished.", complete=True),
    )
    return (
        trial_rows_of(tamper, "fix-parser", "fix-parser__tamper1", "1.0", verifier=LOG)
        + trial_rows_of(claim, "fix-parser", "fix-parser__claim01", "0.0", verifier=LOG)
        + trial_rows_of(clean, "fix-parser", "fix-parser__clean01", "1.0", model="gpt-4o", verifier=LOG)
    )


@pytest.fixture
def planted(tmp_path):
    path = write_parquet(tmp_path / "planted.parquet", planted_rows())
    return open_session(prepare([SourceSpec(str(path))]))


def by_name(session) -> dict[str, int]:
    return {session.info(t).trial_name: t for t in range(len(session))}


def test_index_facet_and_markers(planted):
    progress = []
    index = findings_index.build_findings_index(planted, progress.append)
    trials = by_name(planted)
    assert [f.kind for f in index.of(trials["fix-parser__tamper1"])] == ["test-tampering"]
    assert [f.kind for f in index.of(trials["fix-parser__claim01"])] == ["false-claim", "no-tests-run"]
    assert index.of(trials["fix-parser__clean01"]) == []
    assert index.marker(trials["fix-parser__claim01"]) == "Cn" and index.marker(trials["fix-parser__clean01"]) == ""
    assert progress and all(0 <= p <= 1 for p in progress)

    state = FilterState({"finding": frozenset({"false-claim"})})
    unregistered = planted.facets.apply(state).visible  # a filter on a facet not registered yet: ignored
    assert unregistered.all()
    planted.facets.add(index.facet())
    result = planted.facets.apply(state)
    assert [planted.info(int(t)).trial_name for t in result.visible.nonzero()[0]] == ["fix-parser__claim01"]
    counts = dict(zip(planted.facets.facets["finding"].labels, result.counts["finding"].tolist()))
    assert counts["test-tampering"] == 1 and counts["false-claim"] == 1 and counts["timeout"] == 0
    excluded = planted.facets.apply(FilterState(excluded={"finding": frozenset({"test-tampering", "false-claim"})}))
    assert [planted.info(int(t)).trial_name for t in excluded.visible.nonzero()[0]] == ["fix-parser__clean01"]


def test_stored_index_is_read_back_and_rebuilt_for_new_rules(planted, monkeypatch):
    first = findings_index.build_findings_index(planted)
    assert (planted.datasets[0].folder / findings_index.INDEX_FILE).is_file()

    def refuse(*args, **kwargs):
        raise AssertionError("found again")

    monkeypatch.setattr(engine, "find_findings", refuse)  # the index loads the engine when it needs it
    assert findings_index.build_findings_index(planted).findings == first.findings
    monkeypatch.setattr(engine, "RULES_VERSION", engine.RULES_VERSION + 1)
    with pytest.raises(AssertionError, match="found again"):
        findings_index.build_findings_index(planted)


def test_cancelled_build_stores_nothing(planted):
    with pytest.raises(InterruptedError):
        findings_index.build_findings_index(planted, cancelled=lambda: True)
    assert not (planted.datasets[0].folder / findings_index.INDEX_FILE).exists()


def test_summarized_trial_reads_its_whole_history(tmp_path):
    """The golden summarization trial restarts its history: the hand-off is found where the rebuilt
    history has it, and the sub-agent rows make it `summarized` too."""
    rows = golden_rows("terminus-2_hello-world-context-summarization.traces.json")
    for name in ("summary", "questions", "answers"):
        sub = golden_rows(f"terminus-2_hello-world-context-summarization.summarization-1-{name}.traces.json")
        rows += [{**row, "trace_source": f"summarization-1-{name}"} for row in sub]
    for row in rows:
        row.setdefault("trace_source", "main")
    session = open_session(prepare([SourceSpec(str(write_parquet(tmp_path / "s.parquet", rows)))]))
    # read from the last row of each stretch between restarts: the same history as reading every row
    fast = findings_index._history(session, 0).messages
    assert [(m.role, m.content, m.index, m.restart) for m in fast] == [
        (m.role, m.content, m.index, m.restart) for m in session.history(0).messages
    ]
    index = findings_index.build_findings_index(session)
    [summarized] = [f for f in index.of(0) if f.kind == "summarized"]
    handoff = session.history(0).messages[summarized.message]
    assert handoff.content.startswith("You are picking up work from a previous AI agent")


def test_broken_and_extreme_rows_get_findings_or_none(tmp_path):
    """The rows the viewer must survive (null columns, odd roles, 10 MB messages, deep JSON): the index
    builds, every trial gets a list, none an error."""
    from .test_bad_rows import SCHEMA, bad_rows

    session = open_session(
        prepare([SourceSpec(str(write_parquet(tmp_path / "bad.parquet", bad_rows(), schema=SCHEMA)))])
    )
    index = findings_index.build_findings_index(session)
    assert len(index.findings) == len(session) and all(isinstance(found, list) for found in index.findings)

"""The per-trial verifier summaries: the tests column, the failed-test facet, and the stored index."""

from __future__ import annotations

from tracetui.data import verifier_index
from tracetui.data.facets import FilterState
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec

from .conftest import trial_rows, write_parquet

LOG = """collected 3 items

../tests/test_outputs.py {marks}                                        [100%]

=========================== short test summary info ============================
{lines}
========================= {summary} in 0.09s =========================
"""


def log(results: dict[str, bool]) -> str:
    marks = "".join("." if ok else "F" for ok in results.values())
    lines = "\n".join(
        f"{'PASSED' if ok else 'FAILED'} ../tests/test_outputs.py::{name}" for name, ok in results.items()
    )
    failed = sum(not ok for ok in results.values())
    passed = len(results) - failed
    summary = ", ".join(p for p in (f"{failed} failed" if failed else "", f"{passed} passed" if passed else "") if p)
    return LOG.format(marks=marks, lines=lines, summary=summary)


def test_index_summaries_and_failed_test_facet(tmp_path, monkeypatch):
    rows = (
        trial_rows("a", "a__1", 2, "0.0", verifier=log({"test_dates": False, "test_ok": True, "test_x": True}))
        + trial_rows("a", "a__2", 1, "1.0", verifier=log({"test_dates": True, "test_ok": True, "test_x": True}))
        + trial_rows("b", "b__1", 1, "0.0", verifier=log({"test_dates": False, "test_ok": False, "test_x": True}))
        + trial_rows("c", "c__1", 1, "AgentTimeoutError", verifier=None)
    )
    write_parquet(tmp_path / "v.parquet", rows)
    session = open_session(prepare([SourceSpec(str(tmp_path / "v.parquet"))]))
    index = verifier_index.build_verifier_index(session)
    by_name = {session.info(t).trial_name: t for t in range(len(session))}
    assert index.short[by_name["a__1"]] == "2/3 tests"
    assert index.short[by_name["a__2"]] == "3/3 tests"
    assert index.short[by_name["c__1"]] == ""
    assert index.failed[by_name["b__1"]] == ["test_dates", "test_ok"]
    session.facets.add(index.facet())
    result = session.facets.apply(FilterState({"failed_test": frozenset({"test_dates"})}))
    assert {session.info(int(t)).trial_name for t in result.visible.nonzero()[0]} == {"a__1", "b__1"}
    counts = dict(zip(session.facets.facets["failed_test"].labels, result.counts["failed_test"].tolist()))
    assert counts == {"test_dates": 2, "test_ok": 1}

    # a second open reads the stored index instead of parsing the logs again
    def refuse(text):
        raise AssertionError("parsed again")

    import tracetui.verifier

    monkeypatch.setattr(tracetui.verifier, "parse_verifier", refuse)
    again = verifier_index.build_verifier_index(open_session(prepare([SourceSpec(str(tmp_path / "v.parquet"))])))
    assert again.short == index.short and again.failed == index.failed

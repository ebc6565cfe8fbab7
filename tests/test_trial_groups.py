"""The grouping of rows into trials is kept beside the metadata: a later open reads it back, the same."""

from __future__ import annotations

import tracemalloc
from dataclasses import fields

import numpy as np
import pyarrow as pa

from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.data.trial_groups import VERSION
from tracetui.data.trials import group_rows

from .conftest import GOLDEN


def test_a_second_open_reads_the_grouping_back_unchanged():
    sources = prepare([SourceSpec(str(GOLDEN))])
    first = open_session(sources)
    folder = first.datasets[0].folder
    assert (folder / f"trials-v{VERSION}.npz").is_file()
    assert not [path for path in folder.iterdir() if path.name.endswith(".tmp")]  # written whole, renamed
    again = open_session(sources).trials
    fresh = group_rows(first.datasets[0].meta)
    for field in fields(type(fresh)):
        a, b = getattr(fresh, field.name), getattr(again, field.name)
        if field.name == "codes":
            assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
        elif isinstance(a, np.ndarray) and len(a) == len(b) and field.name not in ("outcome", "reward"):
            assert np.array_equal(a, b), field.name
        elif field.name in ("labels", "date"):
            assert a == b
    reopened = open_session(sources)
    assert [repr(first.info(t)) for t in range(len(first))] == [repr(reopened.info(t)) for t in range(len(first))]


def _metadata(rows: int, per_trial: int = 16) -> pa.Table:
    """A metadata table of `rows` episode rows, `per_trial` to a trial (as `meta_batch` makes it)."""
    trial = np.arange(rows) // per_trial

    def labels(values: list[str]) -> pa.Array:
        return pa.array(values).dictionary_encode()

    return pa.table(
        {
            "agent": labels(["terminus-2"] * rows),
            "model": labels([f"model-{t % 7}" for t in trial]),
            "model_provider": labels(["provider"] * rows),
            "task": labels([f"task-{t % 89}" for t in trial]),
            "result": labels([("pass", "fail")[t % 2] for t in trial]),
            "run_id": labels(["run"] * rows),
            "trial_name": labels([f"trial-{t}" for t in trial]),
            "trace_source": labels(["main"] * rows),
            "episode_num": pa.array((np.arange(rows) % per_trial).astype(np.int32)),
            "n_messages": pa.array((np.arange(rows) % per_trial * 2 + 2).astype(np.int32)),
            "n_bytes": pa.array(np.arange(rows, dtype=np.int64) % per_trial * 1000),
            "first_bytes": pa.array(np.full(rows, 100, dtype=np.int64)),
            "date": pa.array(["2026-01-01"] * rows),
        }
    )


def test_grouping_lets_each_phases_per_row_arrays_go_before_the_next_phase():
    """At 400,000 rows the grouping is on the way to a hub dataset's first screen: its peak is that
    screen's peak memory. Every per-row array held to the end made it 229 bytes a row; 165 now."""
    rows = 50_000
    meta = _metadata(rows)
    tracemalloc.start()
    try:
        trials = group_rows(meta)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(trials) == rows // 16 and trials.episodes.tolist() == [16] * len(trials)
    assert peak / rows < 24 * 8  # fewer than 24 int64 values a row at once

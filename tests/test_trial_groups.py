"""The grouping of rows into trials is kept beside the metadata: a later open reads it back, the same."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

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
    fresh = group_rows(first.datasets[0])
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

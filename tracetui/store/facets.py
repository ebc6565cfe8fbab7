"""The `label` facet: filter trials by the labels users gave them, and by whether they have a note."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..data.facets import MultiFacet
from ..data.session import Session
from .labels import LabelStore
from .records import Record
from .trial_keys import session_records

LABEL_FACET = "label"
NOTED = "(noted)"


def label_facet(
    session: Session, store: LabelStore, order: Sequence[str] = (), records: dict[int, Record] | None = None
) -> MultiFacet:
    """A multi-valued facet of the labels in use (those of `order` first, the configured ones) plus
    `(noted)`. Rebuild it after each change: it reads the store, so it also shows other instances' work.
    Pass `records` (from `session_records`) when you have them already."""
    records = session_records(session, store) if records is None else records
    used = {label for record in records.values() for label in record.labels}
    names = [name for name in order if name in used] + sorted(used - set(order))
    if any(record.note for record in records.values()):
        names.append(NOTED)
    code = {name: i for i, name in enumerate(names)}
    pairs = [(trial, code[label]) for trial, record in records.items() for label in record.labels]
    pairs += [(trial, code[NOTED]) for trial, record in records.items() if record.note]
    array = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    return MultiFacet(LABEL_FACET, "Label", names, array[:, 0].copy(), array[:, 1].copy())

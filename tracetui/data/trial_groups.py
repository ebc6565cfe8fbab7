"""A dataset's rows grouped into trials, kept beside its metadata so that opening it stays flat in rows.

Grouping sorts and deduplicates keys over every row: ~0.05 s at 40,000 rows, ~0.5 s at 400,000. Its
result depends only on the metadata file, so it is worked out once (on the first open) and read back
on later ones: arrays from an `.npz`, labels and dates from JSON.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from ..paths import write_atomically
from .cache import read_kept
from .heap import give_back
from .trials import Trials, group_rows

if TYPE_CHECKING:  # Storage.group() is this module's `grouped`: a type here, not an import at run time
    from .dataset import Storage

VERSION = 2
"""Bump when `trials.group_rows` changes what it computes."""
_TEXT = ("labels", "date")


def grouped(ds: Storage) -> Trials:
    """`group_rows(ds.meta)`, read back from the dataset's folder when a previous open stored it."""
    arrays, texts = ds.folder / f"trials-v{VERSION}.npz", ds.folder / f"trials-v{VERSION}.json"
    kept = read_kept(arrays, lambda arrays: _load(arrays, texts))  # a damaged pair is grouped again
    if kept is not None:
        return kept
    trials = group_rows(ds.meta)
    give_back()  # grouping's per-row temporaries (~50 MB at 400,000 rows): else kept by the C heap
    _store(trials, arrays, texts)
    return trials


def _load(arrays: Path, texts: Path) -> Trials:
    with np.load(arrays) as stored:
        found = {name: stored[name] for name in stored.files}
    found.update(orjson.loads(texts.read_bytes()))
    found["codes"] = {name[len("codes.") :]: found.pop(name) for name in list(found) if name.startswith("codes.")}
    return Trials(**found)


def _store(trials: Trials, arrays: Path, texts: Path) -> None:
    """Best effort: a read-only folder only means grouping again next time."""
    values = {f.name: getattr(trials, f.name) for f in fields(Trials) if f.name not in (*_TEXT, "codes")}
    values.update({f"codes.{name}": codes for name, codes in trials.codes.items()})
    try:
        write_atomically(texts, orjson.dumps({name: getattr(trials, name) for name in _TEXT}))
        write_atomically(arrays, lambda temporary: _save_arrays(temporary, values))  # last: they mark the pair complete
    except OSError:
        pass


def _save_arrays(path: Path, values: dict[str, Any]) -> None:
    with path.open("wb") as f:  # a file, not a name: np.savez would add `.npz` to the temporary's name
        np.savez(f, **values)

"""Trial keys from a live session: whom a label belongs to (dataset id, revision, trial name or a
row-based fallback), and the session's trials the stored records belong to.

Real trial names match across revisions; null, normalized (`NORMALIZED_TRIAL_NAME`) or repeated names
fall back to `run_id:task#first-row`, which only holds within one revision.
"""

from __future__ import annotations

import numpy as np

from ..data.dataset import Storage
from ..data.session import Session
from ..data.trials import Trials
from .labels import LabelStore
from .records import Record, TrialKey

NORMALIZED_TRIAL_NAME = "NORMALIZED_TRIAL_NAME"
"""What Harbor's golden exports put in `trial_name`: a placeholder, not a name."""


def dataset_revision(ds: Storage) -> str:
    """The hub commit; for local files their conversion's cache key (it changes when a file does)."""
    return ds.source.revision or f"local-{ds.folder.name}"


def dataset_ids(session: Session) -> list[str]:
    """The session's dataset ids, in order: what the saved view is kept under."""
    return [ds.source.dataset_id for ds in session.datasets]


def trial_key(session: Session, trial: int) -> TrialKey:
    t = session.trials
    return _key(session, trial, _name_counts(t, int(t.dataset[trial])))


def find_trials(session: Session, keys: list[TrialKey]) -> list[int | None]:
    """The trial each key names (None when the session has none), ignoring the key's revision."""
    found: list[int | None] = [None] * len(keys)
    for index, ds in enumerate(session.datasets):
        wanted = [i for i, key in enumerate(keys) if key.dataset_id == ds.source.dataset_id and found[i] is None]
        for i, trial in zip(wanted, _match(session, index, [keys[i] for i in wanted])):
            found[i] = trial
    return found


def session_records(session: Session, store: LabelStore) -> dict[int, Record]:
    """Trial id → the record that applies to it, for every labelled or noted trial of the session."""
    out: dict[int, Record] = {}
    for index, ds in enumerate(session.datasets):
        records = store.effective(ds.source.dataset_id, dataset_revision(ds))
        if records:
            for record, trial in zip(records, _match(session, index, [r.key for r in records])):
                if trial is not None:
                    out[trial] = record
    return out


def _name_counts(t: Trials, dataset: int) -> np.ndarray:
    """How many trials of one dataset carry each trial_name code: a repeated name is no identity."""
    codes = t.codes["trial_name"][t.dataset == dataset]
    return np.bincount(codes[codes >= 0], minlength=len(t.labels["trial_name"]))


def _key(session: Session, trial: int, counts: np.ndarray) -> TrialKey:
    t = session.trials
    ds = session.datasets[int(t.dataset[trial])]
    code = int(t.codes["trial_name"][trial])
    name = t.labels["trial_name"][code] if code >= 0 else None
    task = t.label("task", trial) or ""
    named = bool(name and name.strip() and name != NORMALIZED_TRIAL_NAME and counts[code] == 1)
    if name is None or not named:
        rows = t.rows(trial)
        first = int(rows[0]) if len(rows) else t.sub_agent_rows(trial)[0][0]
        name = f"{t.label('run_id', trial) or '-'}:{task or '-'}#{first}"
    return TrialKey(ds.source.dataset_id, dataset_revision(ds), name, named, task, t.label("model", trial) or "")


def _match(session: Session, dataset: int, keys: list[TrialKey]) -> list[int | None]:
    """The trial of `dataset` each key names (None when it has none), ignoring the key's revision."""
    t = session.trials
    ids = np.nonzero(t.dataset == dataset)[0]
    if not len(ids) or not keys:
        return [None] * len(keys)
    counts = _name_counts(t, dataset)
    codes = t.codes["trial_name"][ids]
    by_code = np.full(len(counts), -1, dtype=np.int64)
    by_code[codes[codes >= 0]] = ids[codes >= 0]
    code_of = {name: i for i, name in enumerate(t.labels["trial_name"]) if name is not None}
    rows, owners = t.rows_of_dataset(dataset)
    owner = np.full(session.datasets[dataset].num_rows, -1, dtype=np.int64)
    owner[rows] = owners
    found: list[int | None] = []
    for key in keys:
        if key.named:
            candidate = int(by_code[code_of[key.trial]]) if key.trial in code_of else -1
        else:
            row = key.trial.rpartition("#")[2]
            candidate = int(owner[int(row)]) if row.isdigit() and int(row) < len(owner) else -1
        if candidate >= 0:
            actual = _key(session, candidate, counts)
            candidate = candidate if (actual.trial, actual.named) == (key.trial, key.named) else -1
        found.append(candidate if candidate >= 0 else None)
    return found

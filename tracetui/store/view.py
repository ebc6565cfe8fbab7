"""The view to resume, saved per set of datasets: the filters (every field of `FilterState`, in its
own JSON form) and the selected trial by key, not by index, so it survives a new revision."""

from __future__ import annotations

import json

from ..data.facets import FilterState
from ..data.session import Session
from .records import TrialKey
from .trial_keys import find_trials, trial_key


def encode_view(session: Session, filters: FilterState, trial: int | None) -> str:
    key = trial_key(session, trial) if trial is not None else None
    saved = None if key is None else [key.dataset_id, key.trial, key.named]
    return json.dumps({**filters.to_json(), "trial": saved})


def decode_view(session: Session, state_json: str | None) -> tuple[FilterState, int | None]:
    """The saved view, keeping only filter values the session still has (add the label facet first)."""
    try:
        data = json.loads(state_json) if state_json else {}
    except ValueError:
        data = {}
    data = data if isinstance(data, dict) else {}
    saved = data.get("trial")
    trial = None
    if isinstance(saved, list) and len(saved) == 3 and all(isinstance(v, str) for v in saved[:2]):
        trial = find_trials(session, [TrialKey(saved[0], "", saved[1], bool(saved[2]))])[0]
    return FilterState.from_json(data, session.facets.facets), trial

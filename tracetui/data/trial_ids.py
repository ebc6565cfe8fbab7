"""Trial ids that stay put while sources grow (a harbor job folder gains trials while the app runs).

A session's trial ids are positions in its per-trial arrays. Built afresh, those arrays list each
dataset's trials in turn, so a trial added to the first of two datasets would shift every trial of the
second. `StableIds` keeps, per dataset, the id of each of its trials (by its position in the dataset,
which a job folder that grows never changes) and gives new trials the next ids; `reordered` puts the
freshly built arrays in id order. A hub dataset whose metadata is still coming in groups its rows again
as files arrive, which may put its trials in another order: `moved_trials` says where each one went
(`Regrown`), and `StableIds.remap` keeps their ids.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .trials import Trials


@dataclass(frozen=True, slots=True)
class Regrown:
    """A dataset's trials grouped again with more rows: old trial i is now trial `moved[i]` (of `count`);
    `changed` are the new positions of trials that are new or gained rows."""

    moved: np.ndarray
    changed: np.ndarray
    count: int


def moved_trials(old: Trials, new: Trials) -> Regrown | None:
    """Where each of `old`'s trials is in `new` (the same rows and more, grouped again): the trial that
    holds its first row. None when two old trials are now one (rows that joined their key changed how it
    splits into trials): their ids cannot both stay."""
    rows = max(_last_row(new) + 1, _last_row(old) + 1)
    owner = np.full(rows, -1, dtype=np.int64)
    count = len(new.episodes)
    owner[new.main_rows] = np.repeat(np.arange(count), np.diff(new.main_offsets))
    owner[new.sub_rows] = np.repeat(np.arange(count), np.diff(new.sub_offsets))
    moved = owner[_first_rows(old)]
    if (moved < 0).any() or len(np.unique(moved)) != len(moved):
        return None
    grew = (new.episodes[moved] != old.episodes) | (np.diff(new.sub_offsets)[moved] != np.diff(old.sub_offsets))
    fresh = np.ones(count, dtype=bool)
    fresh[moved] = False
    return Regrown(moved, np.union1d(moved[grew], np.flatnonzero(fresh)), count)


def _first_rows(trials: Trials) -> np.ndarray:
    """Each trial's first main row, or first sub-agent row when it has no main row."""
    has_main = np.diff(trials.main_offsets) > 0
    main = (
        trials.main_rows[np.minimum(trials.main_offsets[:-1], max(len(trials.main_rows) - 1, 0))]
        if len(trials.main_rows)
        else 0
    )
    sub = (
        trials.sub_rows[np.minimum(trials.sub_offsets[:-1], max(len(trials.sub_rows) - 1, 0))]
        if len(trials.sub_rows)
        else 0
    )
    return np.where(has_main, main, sub).astype(np.int64)


def _last_row(trials: Trials) -> int:
    return int(max(trials.main_rows.max(initial=-1), trials.sub_rows.max(initial=-1)))


class StableIds:
    def __init__(self, counts: list[int]) -> None:
        starts = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
        self.ids: list[np.ndarray] = [np.arange(starts[d], starts[d + 1], dtype=np.int64) for d in range(len(counts))]
        self.total = int(starts[-1])

    def grow(self, counts: list[int]) -> np.ndarray | None:
        """Datasets now have `counts` trials (never fewer; new datasets at the end): the new trials get the
        next ids. Returns the positional index of each id (None when ids are positions)."""
        for dataset, count in enumerate(counts):
            have = self.ids[dataset] if dataset < len(self.ids) else np.zeros(0, np.int64)
            extra = count - len(have)
            if extra > 0:
                have = np.concatenate([have, np.arange(self.total, self.total + extra, dtype=np.int64)])
                self.total += extra
            if dataset < len(self.ids):
                self.ids[dataset] = have
            else:
                self.ids.append(have)
        return self.order(counts)

    def remap(self, dataset: int, regrown: Regrown) -> None:
        """Dataset `dataset`'s trials grouped again (`moved_trials`): each keeps its id at its new
        position; the new ones get the next ids."""
        ids = np.full(regrown.count, -1, dtype=np.int64)
        ids[regrown.moved] = self.ids[dataset]
        fresh = ids < 0
        ids[fresh] = np.arange(self.total, self.total + int(fresh.sum()), dtype=np.int64)
        self.total += int(fresh.sum())
        self.ids[dataset] = ids

    def order(self, counts: list[int]) -> np.ndarray | None:
        starts = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
        order = np.empty(self.total, dtype=np.int64)
        for dataset, ids in enumerate(self.ids):
            order[ids] = starts[dataset] + np.arange(len(ids))
        return None if np.array_equal(order, np.arange(self.total)) else order


def reordered(trials: Trials, order: np.ndarray) -> Trials:
    """`trials` with trial i of the result being trial `order[i]` of `trials`."""

    def take(offsets: np.ndarray, *members: np.ndarray) -> tuple[np.ndarray, ...]:
        lengths = np.diff(offsets)[order]
        new_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        index = np.repeat(offsets[:-1][order] - new_offsets[:-1], lengths) + np.arange(int(new_offsets[-1]))
        return (new_offsets, *(m[index] for m in members))

    main_offsets, main_rows, main_episodes = take(trials.main_offsets, trials.main_rows, trials.main_episodes)
    sub_offsets, sub_rows, sub_sources = take(trials.sub_offsets, trials.sub_rows, trials.sub_sources)
    return replace(
        trials,
        dataset=trials.dataset[order],
        codes={name: codes[order] for name, codes in trials.codes.items()},
        outcome=trials.outcome[order],
        reward=trials.reward[order],
        episodes=trials.episodes[order],
        messages=trials.messages[order],
        size=trials.size[order],
        restarts=trials.restarts[order],
        date=[trials.date[i] for i in order],
        main_offsets=main_offsets,
        main_rows=main_rows,
        main_episodes=main_episodes,
        sub_offsets=sub_offsets,
        sub_rows=sub_rows,
        sub_sources=sub_sources,
    )

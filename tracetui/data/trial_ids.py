"""Trial ids that stay put while sources grow (a harbor job folder gains trials while the app runs).

A session's trial ids are positions in its per-trial arrays. Built afresh, those arrays list each
dataset's trials in turn, so a trial added to the first of two datasets would shift every trial of the
second. `StableIds` keeps, per dataset, the id of each of its trials (by its position in the dataset,
which a growing dataset never changes) and gives new trials the next ids; `reordered` puts the freshly
built arrays in id order.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .trials import Trials


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

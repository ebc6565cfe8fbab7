"""Sort orders of the trial list, computed with numpy over the visible trials."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .trials import Trials

SORT_KEYS = ("task", "model", "outcome", "episodes", "messages", "date")


class Ordering:
    def __init__(self, trials: Trials) -> None:
        self.trials = trials

    @cached_property
    def _ranks(self) -> dict[str, np.ndarray]:
        """Per-trial sort keys; label columns rank by their label's alphabetical position."""
        t = self.trials

        def label_rank(column: str) -> np.ndarray:
            labels = t.labels[column]
            order = sorted(range(len(labels)), key=lambda i: (labels[i] is None, (labels[i] or "").lower()))
            rank = np.empty(len(labels) + 1, dtype=np.int64)
            rank[order] = np.arange(len(labels))
            rank[-1] = len(labels)  # null codes (-1) sort last
            return rank[t.codes[column]]

        dates = np.array(t.date, dtype=object)
        date_rank = np.empty(len(t), dtype=np.int64)
        date_rank[np.argsort(dates, kind="stable")] = np.arange(len(t))
        return {
            "task": label_rank("task"),
            "model": label_rank("model"),
            "outcome": t.outcome.astype(np.int64),
            "episodes": t.episodes.astype(np.int64),
            "messages": t.messages.astype(np.int64),
            "date": date_rank,
            "name": label_rank("trial_name"),
        }

    def sort(self, visible: np.ndarray, key: str, reverse: bool = False) -> np.ndarray:
        """Trial ids of the `visible` mask, ordered by `key` then task and trial name (stable)."""
        ids = np.nonzero(visible)[0]
        ranks = self._ranks
        primary = ranks[key][ids]
        if reverse:
            primary = -primary
        order = np.lexsort((ids, ranks["name"][ids], ranks["task"][ids], primary))
        return ids[order]

"""Sort orders of the trial list, computed with numpy over the visible trials."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .trials import Trials
from .usage import UsageTable

SORT_KEYS = ("task", "model", "outcome", "episodes", "messages", "date")
USAGE_KEYS = ("tokens", "cost", "agent_time")
"""Sort orders offered only when some trial records the figure (harbor job folders): trials without it
sort last, either way round."""


class Ordering:
    def __init__(self, trials: Trials, usage: UsageTable | None = None) -> None:
        self.trials = trials
        self.usage = usage
        self._ranks: dict[str, np.ndarray] = {}

    @cached_property
    def usage_figures(self) -> dict[str, np.ndarray]:
        """Per usage sort key the sessions' trials record: the figure per trial (NaN: not recorded);
        tokens are input plus output."""
        if self.usage is None:
            return {}
        columns = self.usage.columns
        figures = {
            "tokens": np.where(
                np.isnan(columns["input_tokens"]) & np.isnan(columns["output_tokens"]),
                np.nan,
                np.nan_to_num(columns["input_tokens"]) + np.nan_to_num(columns["output_tokens"]),
            ),
            "cost": columns["cost_usd"],
            "agent_time": columns["agent_seconds"],
        }
        return {key: values for key, values in figures.items() if np.isfinite(values).any()}

    @property
    def keys(self) -> tuple[str, ...]:
        """The sort orders of these trials: SORT_KEYS, then the USAGE_KEYS they record."""
        return SORT_KEYS + tuple(key for key in USAGE_KEYS if key in self.usage_figures)

    def _rank(self, key: str) -> np.ndarray:
        """Per-trial sort key `key`, worked out when a sort first needs it (a sort by task needs only the
        task's and the trial name's: the dates and the rest wait until the list is sorted by them)."""
        rank = self._ranks.get(key)
        if rank is None:
            rank = self._ranks[key] = self._work_out(key)
        return rank

    def _work_out(self, key: str) -> np.ndarray:
        t = self.trials
        if key in ("task", "model", "name"):
            return self._label_rank("trial_name" if key == "name" else key)
        if key == "date":
            rank = np.empty(len(t), dtype=np.int64)
            rank[np.argsort(np.array(t.date, dtype=object), kind="stable")] = np.arange(len(t))
            return rank
        return {"outcome": t.outcome, "episodes": t.episodes, "messages": t.messages}[key].astype(np.int64)

    def _label_rank(self, column: str) -> np.ndarray:
        """Each trial's label's alphabetical position (case folded; no label last, ties in label order).
        Sorted on a list of the folded labels, not on a key function of tuples: twice as fast, and a
        trial name column has a label per trial."""
        labels = self.trials.labels[column]
        folded = [(label or "").lower() for label in labels]
        order = sorted(range(len(labels)), key=folded.__getitem__)
        order = [i for i in order if labels[i] is not None] + [i for i in order if labels[i] is None]
        rank = np.empty(len(labels) + 1, dtype=np.int64)
        rank[order] = np.arange(len(labels))
        rank[-1] = len(labels)  # null codes (-1) sort last
        return rank[self.trials.codes[column]]

    def sort(self, visible: np.ndarray, key: str, reverse: bool = False) -> np.ndarray:
        """Trial ids of the `visible` mask, ordered by `key` then task and trial name (stable)."""
        ids = np.nonzero(visible)[0]
        missing = np.zeros(len(ids), dtype=bool)
        if key in USAGE_KEYS:
            values = self.usage_figures.get(key, np.full(len(self.trials), np.nan))[ids]
            missing = np.isnan(values)
            primary = np.where(missing, 0.0, values)
        else:
            primary = self._rank(key)[ids]
        if reverse:
            primary = -primary
        order = np.lexsort((ids, self._rank("name")[ids], self._rank("task")[ids], primary, missing))
        return ids[order]

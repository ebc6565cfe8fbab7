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
        missing = np.zeros(len(ids), dtype=bool)
        if key in USAGE_KEYS:
            values = self.usage_figures.get(key, np.full(len(self.trials), np.nan))[ids]
            missing = np.isnan(values)
            primary = np.where(missing, 0.0, values)
        else:
            primary = ranks[key][ids]
        if reverse:
            primary = -primary
        order = np.lexsort((ids, ranks["name"][ids], ranks["task"][ids], primary, missing))
        return ids[order]

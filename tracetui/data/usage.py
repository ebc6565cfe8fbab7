"""Tokens, cost and time per trial, for the sources that record them (harbor job folders); NaN where a
source does not, so an exported dataset shows nothing rather than zeros.

Input tokens are harbor's `n_input_tokens`, which include the cached ones; uncached input is the
difference (what `harbor view` calls input).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

FIELDS = (  # per trial, as harbor counts them: input tokens include the cached ones
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "cost_usd",
    "agent_seconds",
    "verifier_seconds",
    "total_seconds",
)

if TYPE_CHECKING:
    from .dataset import Storage


@dataclass(frozen=True, slots=True)
class StepMetrics:
    """What the model reported for one agent step, from the trace (None: not reported)."""

    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    cost_usd: float | None


@dataclass(frozen=True, slots=True)
class TrialUsage:
    """One trial's figures (NaN: not recorded)."""

    input_tokens: float
    cached_tokens: float
    output_tokens: float
    cost_usd: float
    agent_seconds: float
    verifier_seconds: float
    total_seconds: float

    @property
    def uncached_tokens(self) -> float:
        return self.input_tokens - self.cached_tokens if not math.isnan(self.cached_tokens) else self.input_tokens

    @property
    def recorded(self) -> bool:
        return any(not math.isnan(getattr(self, name)) for name in FIELDS)


class UsageTable:
    """Per trial (by session trial id): one float64 array per field of FIELDS, NaN where not recorded."""

    def __init__(self, columns: dict[str, np.ndarray]) -> None:
        self.columns = columns

    @classmethod
    def of(cls, datasets: Sequence[Storage], counts: Sequence[int], order: np.ndarray | None) -> UsageTable:
        """The datasets' figures, in the order `build_trials` lists their trials (`counts` per dataset),
        then put in session id order (`order`: the positional index of each id, None when the same)."""
        parts = []
        for dataset, count in zip(datasets, counts):
            found = dataset.usage()
            parts.append(found if found is not None else {name: np.full(count, math.nan) for name in FIELDS})
        columns = {name: np.concatenate([p[name] for p in parts] or [np.zeros(0)]) for name in FIELDS}
        if order is not None:
            columns = {name: values[order] for name, values in columns.items()}
        return cls(columns)

    @property
    def uncached_tokens(self) -> np.ndarray:
        cached = self.columns["cached_tokens"]
        return self.columns["input_tokens"] - np.where(np.isnan(cached), 0.0, cached)

    def recorded(self, mask: np.ndarray | None = None) -> list[str]:
        """The fields some trial of `mask` (default: all) has a figure for."""
        return [
            name for name, values in self.columns.items() if np.isfinite(values if mask is None else values[mask]).any()
        ]

    def trial(self, trial: int) -> TrialUsage:
        return TrialUsage(**{name: float(values[trial]) for name, values in self.columns.items()})

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
    from .session import Session


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


GROUP_FIELDS = ("input_tokens", "cached_tokens", "output_tokens", "cost_usd", "agent_seconds")
"""What `tracetui stats` totals and averages per group, when the trials record them."""


@dataclass(frozen=True, slots=True)
class GroupUsage:
    """A group's figures: per field, the total and the mean over its trials that record it (NaN when
    none does), and the cost per passed trial."""

    totals: dict[str, float]
    means: dict[str, float]
    cost_per_pass: float


def group_usage(session: Session, mask: np.ndarray, by: tuple[str, ...]) -> dict[tuple[str, ...], GroupUsage]:
    """GROUP_FIELDS per group of `group_stats(session, mask, by)`, by its key; {} when no trial of
    `mask` records any of them."""
    from .stats import grouping
    from .trials import PASS

    if not mask.any() or not set(GROUP_FIELDS) & set(session.usage.recorded(mask)):
        return {}
    trials, group, keys = grouping(session, mask, by)
    totals, means = {}, {}
    for name in GROUP_FIELDS:
        values = session.usage.columns[name][trials]
        known = np.isfinite(values)
        count = np.bincount(group[known], minlength=len(keys))
        total = np.bincount(group[known], weights=values[known], minlength=len(keys))
        totals[name] = np.where(count > 0, total, math.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            means[name] = np.where(count > 0, total / np.maximum(count, 1), math.nan)
    passed = np.bincount(group[session.trials.outcome[trials] == PASS], minlength=len(keys))
    with np.errstate(invalid="ignore", divide="ignore"):
        per_pass = np.where(passed > 0, totals["cost_usd"] / np.maximum(passed, 1), math.nan)
    return {
        key: GroupUsage(
            {n: float(totals[n][g]) for n in GROUP_FIELDS},
            {n: float(means[n][g]) for n in GROUP_FIELDS},
            float(per_pass[g]),
        )
        for g, key in enumerate(keys)
    }


@dataclass(frozen=True, slots=True)
class ParetoPoint:
    """One model: its mean cost per trial and pass rate, and whether no other model is both cheaper (or
    as cheap) and better (or as good)."""

    model: str
    trials: int
    cost: float
    pass_rate: float
    frontier: bool


def pareto(session: Session, mask: np.ndarray) -> list[ParetoPoint]:
    """Per model with a recorded cost among the trials of `mask`: cost against pass rate, cheapest
    first, the frontier marked (what `harbor view` shows as its Pareto view)."""
    from .stats import group_stats

    usage = group_usage(session, mask, ("model",))
    points = []
    for row in group_stats(session, mask, ("model",)):
        figures = usage.get(row.key)
        if figures is None or math.isnan(figures.means["cost_usd"]) or math.isnan(row.counts.pass_rate):
            continue
        points.append((row.key[0], row.counts.trials, figures.means["cost_usd"], row.counts.pass_rate))
    out = []
    for model, trials, cost, rate in points:
        beaten = any(c <= cost and r >= rate and (c < cost or r > rate) for _, _, c, r in points)
        out.append(ParetoPoint(model, trials, cost, rate, not beaten))
    return sorted(out, key=lambda p: (p.cost, -p.pass_rate, p.model))

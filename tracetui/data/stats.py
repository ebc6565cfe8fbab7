"""The numbers of the stats screen and `tracetui stats`, for any set of trials (a bool mask).

Everything is counted with numpy on the trials' integer codes (np.unique over stacked codes, bincount),
so a re-filter recomputes in milliseconds and no text is read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .facets import NULL_LABEL, MultiFacet
from .trials import ERROR, FAIL, NOT_GRADED, OUTCOMES, PARTIAL, PASS, RUNNING, UNKNOWN

if TYPE_CHECKING:
    from .session import Session

GROUP_COLUMNS = ("dataset", "model", "task", "agent", "model_provider", "finding")
"""`finding` groups by a registered multi-valued facet: a trial counts once under each of its values."""


@dataclass(frozen=True, slots=True)
class OutcomeCounts:
    """Trials by outcome. An error (exception) is a graded failure worth 0; unknown is not graded, nor
    is a trial still running (a harbor job folder's)."""

    trials: int
    passed: int
    partial: int
    failed: int
    errors: int
    unknown: int
    mean_reward: float  # over graded trials, errors counting 0; nan when none is graded
    running: int = 0

    @property
    def graded(self) -> int:
        return self.trials - self.unknown - self.running

    @property
    def pass_rate(self) -> float:
        """pass / graded trials; nan when none is graded."""
        return self.passed / self.graded if self.graded else math.nan


@dataclass(frozen=True, slots=True)
class GroupRow:
    key: tuple[str, ...]  # one label per grouping column
    counts: OutcomeCounts


@dataclass(frozen=True, slots=True)
class Matrix:
    """Pass rates of row label x column label (model x task by default); cells without trials hold 0."""

    rows: list[str]
    columns: list[str]
    trials: np.ndarray  # int64 (rows, columns)
    passed: np.ndarray
    graded: np.ndarray

    @property
    def pass_rate(self) -> np.ndarray:
        """float (rows, columns); nan where nothing is graded."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.graded > 0, self.passed / self.graded, np.nan)


@dataclass(frozen=True, slots=True)
class Histogram:
    """counts[i] values fall in [edges[i], edges[i+1]) (the last bin includes its right edge)."""

    edges: np.ndarray
    counts: np.ndarray
    log: bool


@dataclass(frozen=True, slots=True)
class HeadToHeadRow:
    task: str
    a: OutcomeCounts
    b: OutcomeCounts

    @property
    def diff(self) -> float:
        """a's pass rate minus b's (nan when a side has nothing graded)."""
        return self.a.pass_rate - self.b.pass_rate


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """Tasks attempted by both sides, sorted by difference (a ahead first, undecidable last)."""

    column: str  # "dataset" or "model": what tells the sides apart
    a: str
    b: str
    rows: list[HeadToHeadRow]

    def only_a_passes(self) -> list[HeadToHeadRow]:
        return [r for r in self.rows if r.a.passed and not r.b.passed]

    def only_b_passes(self) -> list[HeadToHeadRow]:
        return [r for r in self.rows if r.b.passed and not r.a.passed]

    def both_pass(self) -> list[HeadToHeadRow]:
        return [r for r in self.rows if r.a.passed and r.b.passed]

    def both_fail(self) -> list[HeadToHeadRow]:
        return [r for r in self.rows if not r.a.passed and not r.b.passed]


@dataclass(frozen=True, slots=True)
class Overview:
    """Everything the stats screen shows for one set of trials."""

    total: OutcomeCounts
    by_dataset: list[GroupRow]
    by_model: list[GroupRow]
    by_task: list[GroupRow]
    matrix: Matrix
    results: dict[str, int]
    episodes: Histogram
    messages: Histogram
    size: Histogram


def overview(session: Session, mask: np.ndarray) -> Overview:
    t = session.trials
    return Overview(
        total=_counts(np.zeros(int(mask.sum()), np.int64), t.outcome[mask], t.reward[mask], 1)[0],
        by_dataset=group_stats(session, mask, ("dataset",)),
        by_model=group_stats(session, mask, ("model",)),
        by_task=group_stats(session, mask, ("task",)),
        matrix=matrix(session, mask),
        results=result_counts(session, mask),
        episodes=histogram(t.episodes[mask]),
        messages=histogram(t.messages[mask], log=True),
        size=histogram(t.size[mask], log=True),
    )


def group_stats(session: Session, mask: np.ndarray, by: tuple[str, ...] = ("model",)) -> list[GroupRow]:
    """Outcome counts per combination of GROUP_COLUMNS values present in `mask`, sorted by labels.

    A multi-valued column (`finding`) counts a trial once under each of its values, NULL_LABEL if none."""
    t = session.trials
    if not mask.any():
        return []
    trials, group, keys = grouping(session, mask, by)
    counts = _counts(group, t.outcome[trials], t.reward[trials], len(keys))
    return sorted((GroupRow(key, c) for key, c in zip(keys, counts)), key=lambda row: row.key)


def grouping(
    session: Session, mask: np.ndarray, by: tuple[str, ...]
) -> tuple[np.ndarray, np.ndarray, list[tuple[str, ...]]]:
    """The trials of `mask` grouped by `by` (as `group_stats` groups them): (trial, group) per member,
    one member per trial and value of a multi-valued column, and each group's key."""
    trials = np.nonzero(mask)[0]
    codes: list[np.ndarray] = []
    labels: list[list[str]] = []
    for name in by:
        column, names = _column(session, name)
        if isinstance(column, tuple):
            keep, column = _expand(trials, column)
            trials, codes = trials[keep], [c[keep] for c in codes]
        else:
            column = column[trials]
        codes.append(column)
        labels.append(names)
    if not len(trials):
        return trials, trials.copy(), []
    combos, group = np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)
    return trials, group.reshape(-1), [tuple(names[code] for code, names in zip(combo, labels)) for combo in combos]


def _expand(trials: np.ndarray, pairs: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """For rows of `trials` and a multi-valued facet's (trial, code) pairs: which row each output row
    repeats, and its code (-1 for a trial with no value), one output row per (row, value)."""
    owners, values = pairs
    order = np.argsort(owners, kind="stable")
    owners, values = owners[order], values[order]
    first = np.searchsorted(owners, trials, side="left")
    count = np.searchsorted(owners, trials, side="right") - first
    repeats = np.maximum(count, 1)
    keep = np.repeat(np.arange(len(trials)), repeats)
    within = np.arange(len(keep)) - np.repeat(np.cumsum(repeats) - repeats, repeats)
    has = count[keep] > 0
    picked = np.where(has, first[keep] + within, 0)
    codes = np.where(has, values[picked] if len(values) else -1, -1)
    return keep, codes.astype(np.int64)


def matrix(session: Session, mask: np.ndarray, rows: str = "model", columns: str = "task") -> Matrix:
    (row_codes, row_labels), (col_codes, col_labels) = _column(session, rows), _column(session, columns)
    row_values, r = np.unique(row_codes[mask], return_inverse=True)
    col_values, c = np.unique(col_codes[mask], return_inverse=True)
    cell = r.reshape(-1) * len(col_values) + c.reshape(-1)
    table = _outcome_table(cell, session.trials.outcome[mask], len(row_values) * len(col_values))
    shape = (len(row_values), len(col_values))
    row_names, col_names = [row_labels[v] for v in row_values], [col_labels[v] for v in col_values]
    row_order, col_order = np.argsort(row_names, kind="stable"), np.argsort(col_names, kind="stable")

    def grid(values: np.ndarray) -> np.ndarray:
        return values.reshape(shape)[row_order][:, col_order]

    return Matrix(
        rows=[row_names[i] for i in row_order],
        columns=[col_names[i] for i in col_order],
        trials=grid(table.sum(axis=1)),
        passed=grid(table[:, PASS]),
        graded=grid(table.sum(axis=1) - table[:, list(NOT_GRADED)].sum(axis=1)),
    )


def result_counts(session: Session, mask: np.ndarray) -> dict[str, int]:
    """Raw `result` label (reward or exception name) -> trials, most frequent first."""
    codes, labels = _column(session, "result")
    found = np.bincount(codes[mask] + 1, minlength=len(labels) + 1)  # code -1 (null) lands in bin 0
    pairs = [(labels[code - 1], int(n)) for code, n in enumerate(found) if n]
    return dict(sorted(pairs, key=lambda pair: (-pair[1], pair[0])))


def histogram(values: np.ndarray, bins: int = 20, log: bool = False) -> Histogram:
    """Integer-aligned linear bins (one per value when few), or power-of-two bins for sizes spanning decades."""
    values = np.asarray(values, dtype=np.int64)
    if not len(values):
        return Histogram(np.zeros(1, np.int64), np.zeros(0, np.int64), log)
    low, high = int(values.min()), int(values.max())
    if log:
        low, high = max(low, 1), max(high, 1)
        edges = 2 ** np.arange(low.bit_length() - 1, high.bit_length() + 1, dtype=np.int64)
        values = np.maximum(values, 1)  # zeros join the first bin rather than vanish off a log axis
    else:
        width = -(-(high - low + 1) // bins)
        edges = low + width * np.arange(-(-(high - low + 1) // width) + 1, dtype=np.int64)
    counts, _ = np.histogram(values, bins=edges)
    return Histogram(edges, counts.astype(np.int64), log)


def head_to_head(session: Session, mask: np.ndarray, a: str, b: str, column: str = "dataset") -> HeadToHead:
    """Per task attempted by both `a` and `b` (labels of `column`): each side's counts and the difference.

    Two datasets, or two models within one dataset (pass a mask restricted to that dataset).
    """
    codes, labels = _column(session, column)
    tasks, task_labels = _column(session, "task")
    t = session.trials
    sides = []
    for label in (a, b):
        if label not in labels:
            raise ValueError(f"no {column} {label!r}; known: {', '.join(sorted(set(labels)))}")
        side = mask & (codes == labels.index(label))
        sides.append(_counts(tasks[side] + 1, t.outcome[side], t.reward[side], len(task_labels) + 1))
    rows = [
        HeadToHeadRow(task_labels[code - 1], left, right)
        for code, (left, right) in enumerate(zip(*sides))
        if left.trials and right.trials
    ]
    rows.sort(key=lambda row: (math.inf if math.isnan(row.diff) else -row.diff, row.task))
    return HeadToHead(column, a, b, rows)


def _column(session: Session, name: str):
    """(code per trial, labels) of a grouping column, or ((trial, code) pairs, labels) of a multi-valued
    one; code -1 (no value) indexes the trailing NULL_LABEL."""
    t = session.trials
    if name == "dataset":
        return t.dataset.astype(np.int64), list(session.dataset_names) + [NULL_LABEL]
    facet = session.facets.facets.get(name)
    if name not in t.labels and isinstance(facet, MultiFacet):
        return (facet.trials, facet.codes), list(facet.labels) + [NULL_LABEL]
    if name not in t.labels:
        raise ValueError(f"cannot group by {name!r}; one of: {', '.join(GROUP_COLUMNS)}")
    labels = [NULL_LABEL if v is None else v for v in t.labels[name]]
    return t.codes[name].astype(np.int64), labels + [NULL_LABEL]


def _outcome_table(group: np.ndarray, outcome: np.ndarray, groups: int) -> np.ndarray:
    """(groups, len(OUTCOMES)) trial counts."""
    kinds = len(OUTCOMES)
    return np.bincount(group * kinds + outcome, minlength=groups * kinds).reshape(groups, kinds)


def _counts(group: np.ndarray, outcome: np.ndarray, reward: np.ndarray, groups: int) -> list[OutcomeCounts]:
    table = _outcome_table(group, outcome, groups)
    graded = ~np.isin(outcome, NOT_GRADED)
    score = np.where(outcome == ERROR, 0.0, reward)
    sums = np.bincount(group[graded], weights=score[graded], minlength=groups)
    counts = []
    for row, total in zip(table, sums):
        n_graded = int(row.sum() - row[list(NOT_GRADED)].sum())
        counts.append(
            OutcomeCounts(
                trials=int(row.sum()),
                passed=int(row[PASS]),
                partial=int(row[PARTIAL]),
                failed=int(row[FAIL]),
                errors=int(row[ERROR]),
                unknown=int(row[UNKNOWN]),
                running=int(row[RUNNING]),
                mean_reward=float(total) / n_graded if n_graded else math.nan,
            )
        )
    return counts

"""The numbers of the stats screen and `tracetui stats`, for any set of trials (a bool mask).

Everything is counted with numpy on the trials' integer codes (np.unique over stacked codes, bincount),
so a re-filter recomputes in milliseconds and no text is read. How far each figure can be trusted (the
Wilson interval, pass@k, the paired difference) is `estimates`; `hacked` (a bool per trial, from the
findings index: `hacked_trials`) adds the pass rate without reward hacks wherever a pass rate is counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .estimates import Difference, PassAtK, paired_difference, pass_at_ks, wilson
from .facets import NULL_LABEL, MultiFacet
from .trials import ERROR, FAIL, NOT_GRADED, OUTCOMES, PARTIAL, PASS, RUNNING, UNKNOWN

if TYPE_CHECKING:
    from .findings_index import FindingsIndex
    from .session import Session

GROUP_COLUMNS = ("dataset", "model", "task", "agent", "model_provider", "finding", "task_health")
"""`finding` and `task_health` group by a registered multi-valued facet: a trial counts once under each
of its values."""


def hacked_trials(findings: FindingsIndex) -> np.ndarray:
    """Per trial: whether it has a finding of a reward-hack kind (`findings.REWARD_HACKS`)."""
    from ..findings import REWARD_HACKS

    return np.array([any(f.kind in REWARD_HACKS for f in found) for found in findings.findings], dtype=bool)


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
    hacked: int | None = None
    """Passes of trials with a reward-hack finding; None while the findings are not known."""
    running: int = 0

    @property
    def graded(self) -> int:
        return self.trials - self.unknown - self.running

    @property
    def rewarded(self) -> int:
        """Trials the verifier gave a reward (an error has none: it counts 0 only beside graded ones)."""
        return self.passed + self.partial + self.failed

    @property
    def pass_rate(self) -> float:
        """pass / graded trials; nan when none is graded."""
        return self.passed / self.graded if self.graded else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        """The pass rate's 95% Wilson interval; nan with fewer than `estimates.MIN_GRADED` graded."""
        return wilson(self.passed, self.graded)

    @property
    def clean_passed(self) -> int | None:
        """Passes without a reward-hack finding; None while the findings are not known."""
        return None if self.hacked is None else self.passed - self.hacked

    @property
    def pass_rate_without_hacks(self) -> float:
        """Passes without a reward-hack finding / graded trials; nan when unknown or none is graded."""
        clean = self.clean_passed
        return clean / self.graded if clean is not None and self.graded else math.nan

    @property
    def interval_without_hacks(self) -> tuple[float, float]:
        clean = self.clean_passed
        return wilson(clean, self.graded) if clean is not None else (math.nan, math.nan)


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
        """a's pass rate minus b's; nan when a side has no reward on the task (only errors or
        ungraded attempts: the verifier said nothing of it)."""
        return self.a.pass_rate - self.b.pass_rate if self.a.rewarded and self.b.rewarded else math.nan

    @property
    def diff_without_hacks(self) -> float:
        if not (self.a.rewarded and self.b.rewarded):
            return math.nan
        return self.a.pass_rate_without_hacks - self.b.pass_rate_without_hacks


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """Tasks attempted by both sides, sorted by difference (a ahead first, undecidable last)."""

    column: str  # "dataset" or "model": what tells the sides apart
    a: str
    b: str
    rows: list[HeadToHeadRow]

    @property
    def compared(self) -> list[HeadToHeadRow]:
        """The shared tasks with a reward on both sides: the ones the difference is taken over."""
        return [r for r in self.rows if not math.isnan(r.diff)]

    def difference(self, without_hacks: bool = False) -> Difference:
        """The mean per-task difference of pass rates (A − B) with a paired bootstrap interval over the
        compared tasks (`estimates.paired_difference`, seeded)."""
        rows = self.compared
        if without_hacks:
            a = [r.a.pass_rate_without_hacks for r in rows]
            b = [r.b.pass_rate_without_hacks for r in rows]
        else:
            a, b = [r.a.pass_rate for r in rows], [r.b.pass_rate for r in rows]
        return paired_difference(np.array(a, np.float64), np.array(b, np.float64))

    def side_totals(self) -> tuple[OutcomeCounts, OutcomeCounts]:
        """Each side's counts summed over the shared tasks."""
        return _sum_counts([r.a for r in self.rows]), _sum_counts([r.b for r in self.rows])

    def only_a_passes(self) -> list[HeadToHeadRow]:
        return [r for r in self.rows if r.a.passed and _fails(r.b)]

    def only_b_passes(self) -> list[HeadToHeadRow]:
        return [r for r in self.rows if r.b.passed and _fails(r.a)]

    def both_pass(self) -> list[HeadToHeadRow]:
        return [r for r in self.rows if r.a.passed and r.b.passed]

    def both_fail(self) -> list[HeadToHeadRow]:
        return [r for r in self.rows if _fails(r.a) and _fails(r.b)]


def _fails(side: OutcomeCounts) -> bool:
    """A side fails a task when it was graded and never passed: attempts still running (or of unknown
    outcome) were not graded and say nothing either way; the task shows among all tasks only."""
    return bool(side.graded) and not side.passed


@dataclass(frozen=True, slots=True)
class PassAtKRow:
    """pass@1 … pass@k of one group (a model, or a model in a dataset), its attempts split by task."""

    key: tuple[str, ...]
    ks: list[PassAtK]
    without_hacks: list[PassAtK] | None
    """The same with a hacked pass counted as a failure; None while the findings are not known."""


@dataclass(frozen=True, slots=True)
class Overview:
    """Everything the stats screen shows for one set of trials."""

    total: OutcomeCounts
    by_dataset: list[GroupRow]
    by_model: list[GroupRow]
    by_task: list[GroupRow]
    pass_at_k: list[PassAtKRow]
    """Per model, then (with several datasets open) per model in each dataset."""
    matrix: Matrix
    results: dict[str, int]
    episodes: Histogram
    messages: Histogram
    size: Histogram


def overview(session: Session, mask: np.ndarray, hacked: np.ndarray | None = None) -> Overview:
    t = session.trials
    per_model = pass_at_k(session, mask, ("model",), hacked)
    if len(session.datasets) > 1:
        per_model += pass_at_k(session, mask, ("model", "dataset"), hacked)
    return Overview(
        total=_counts(np.zeros(int(mask.sum()), np.int64), t.outcome[mask], t.reward[mask], 1, _part(hacked, mask))[0],
        by_dataset=group_stats(session, mask, ("dataset",), hacked),
        by_model=group_stats(session, mask, ("model",), hacked),
        by_task=group_stats(session, mask, ("task",), hacked),
        pass_at_k=per_model,
        matrix=matrix(session, mask),
        results=result_counts(session, mask),
        episodes=histogram(t.episodes[mask]),
        messages=histogram(t.messages[mask], log=True),
        size=histogram(t.size[mask], log=True),
    )


def group_stats(
    session: Session, mask: np.ndarray, by: tuple[str, ...] = ("model",), hacked: np.ndarray | None = None
) -> list[GroupRow]:
    """Outcome counts per combination of GROUP_COLUMNS values present in `mask`, sorted by labels.

    A multi-valued column (`finding`, `task_health`) counts a trial once under each of its values,
    NULL_LABEL if none."""
    t = session.trials
    if not mask.any():
        return []
    trials, group, keys = grouping(session, mask, by)
    counts = _counts(group, t.outcome[trials], t.reward[trials], len(keys), _part(hacked, trials))
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


def pass_at_k(
    session: Session, mask: np.ndarray, by: tuple[str, ...] = ("model",), hacked: np.ndarray | None = None
) -> list[PassAtKRow]:
    """pass@k per combination of the single-valued columns `by`, sorted by labels: each group's graded
    trials are split into tasks (and models, when `by` has none: an attempt is a model's), and
    `estimates.pass_at_ks` averages over those. [] when `by` names a multi-valued column."""
    t = session.trials
    graded = mask & ~np.isin(t.outcome, NOT_GRADED)
    trials = np.nonzero(graded)[0]
    if not len(trials):
        return []
    columns = [_column(session, name) for name in by]
    if any(isinstance(codes, tuple) for codes, _ in columns):
        return []
    unit_columns = [codes for codes, _ in columns] + [
        _column(session, name)[0] for name in ("model", "task") if name not in by
    ]
    units, unit = np.unique(np.stack([c[trials] for c in unit_columns], axis=1), axis=0, return_inverse=True)
    unit = unit.reshape(-1)
    attempts = np.bincount(unit, minlength=len(units))
    passes = np.bincount(unit, weights=t.outcome[trials] == PASS, minlength=len(units)).astype(np.int64)
    clean = None
    if hacked is not None:
        clean_pass = (t.outcome[trials] == PASS) & ~hacked[trials]
        clean = np.bincount(unit, weights=clean_pass, minlength=len(units)).astype(np.int64)
    groups, group = np.unique(units[:, : len(by)], axis=0, return_inverse=True)
    group = group.reshape(-1)
    rows = []
    for index, combo in enumerate(groups):
        mine = group == index
        rows.append(
            PassAtKRow(
                tuple(labels[code] for code, (_, labels) in zip(combo, columns)),
                pass_at_ks(attempts[mine], passes[mine]),
                pass_at_ks(attempts[mine], clean[mine]) if clean is not None else None,
            )
        )
    return sorted(rows, key=lambda row: row.key)


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


def head_to_head(
    session: Session, mask: np.ndarray, a: str, b: str, column: str = "dataset", hacked: np.ndarray | None = None
) -> HeadToHead:
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
        sides.append(
            _counts(tasks[side] + 1, t.outcome[side], t.reward[side], len(task_labels) + 1, _part(hacked, side))
        )
    rows = [
        HeadToHeadRow(task_labels[code - 1], left, right)
        for code, (left, right) in enumerate(zip(*sides))
        if left.trials and right.trials
    ]
    rows.sort(key=lambda row: (math.inf if math.isnan(row.diff) else -row.diff, row.task))
    return HeadToHead(column, a, b, rows)


def _column(session: Session, name: str) -> tuple[Any, list[str]]:
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


def _part(hacked: np.ndarray | None, trials: np.ndarray) -> np.ndarray | None:
    return None if hacked is None else hacked[trials]


def _counts(
    group: np.ndarray, outcome: np.ndarray, reward: np.ndarray, groups: int, hacked: np.ndarray | None = None
) -> list[OutcomeCounts]:
    """Counts per group code; `hacked` (aligned with `outcome`) counts the hacked passes too."""
    table = _outcome_table(group, outcome, groups)
    graded = ~np.isin(outcome, NOT_GRADED)
    score = np.where(outcome == ERROR, 0.0, reward)
    sums = np.bincount(group[graded], weights=score[graded], minlength=groups)
    hacks = None if hacked is None else np.bincount(group[hacked & (outcome == PASS)], minlength=groups)
    counts = []
    for index, (row, total) in enumerate(zip(table, sums)):
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
                hacked=None if hacks is None else int(hacks[index]),
            )
        )
    return counts


def _sum_counts(counts: list[OutcomeCounts]) -> OutcomeCounts:
    graded = sum(c.graded for c in counts)
    reward = sum(c.mean_reward * c.graded for c in counts if c.graded)
    hacked = None if any(c.hacked is None for c in counts) else sum(c.hacked or 0 for c in counts)
    return OutcomeCounts(
        trials=sum(c.trials for c in counts),
        passed=sum(c.passed for c in counts),
        partial=sum(c.partial for c in counts),
        failed=sum(c.failed for c in counts),
        errors=sum(c.errors for c in counts),
        unknown=sum(c.unknown for c in counts),
        mean_reward=reward / graded if graded else math.nan,
        hacked=hacked if counts else None,
    )

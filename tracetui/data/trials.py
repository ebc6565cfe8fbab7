"""Group episode rows into trials, with numpy on dictionary codes (no Python loop over rows).

A trial is one attempt at one task. Its key is (run_id, trial_name, task, model, agent); when several
trials share a key (null or normalized names, as in Harbor's golden files) the export order splits them:
a trial's main rows come together with rising episode numbers, so a repeated or falling episode number
starts the next trial. A key with a row that has no usable episode number (the column dropped, null,
`-1`) is grouped and ordered by its conversations instead (the rows are nested prefixes, see
`_split_by_prefix`), so its trials stay whole. Sub-agent rows (`trace_source` other than `main`) attach to
their key's trial.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ..trace.outcome import (  # noqa: F401 (the data layer's names)
    ERROR,
    FAIL,
    NOT_GRADED,
    OUTCOMES,
    PARTIAL,
    PASS,
    RUNNING,
    UNKNOWN,
    outcome_of,
)
from .compute import pc
from .utf8 import python_values

if TYPE_CHECKING:  # the storages import this module: a type here, not an import at run time
    from .dataset import Storage

LABEL_COLUMNS = ("agent", "model", "model_provider", "task", "result", "run_id", "trial_name", "trace_source")
KEY_COLUMNS = ("run_id", "trial_name", "task", "model", "agent")


@dataclass(slots=True)
class Trials:
    """Per-trial arrays (index = trial id) and the CSR lists of each trial's rows."""

    dataset: np.ndarray  # int16: which opened dataset the trial comes from
    labels: dict[str, list[str | None]]  # global label lists per LABEL_COLUMNS column
    codes: dict[str, np.ndarray]  # int32 codes into labels, per LABEL_COLUMNS column
    outcome: np.ndarray  # int8, an index into OUTCOMES (a part given to build_trials may say -1: from `result`)
    reward: np.ndarray  # float64, nan when there is none
    episodes: np.ndarray  # int32: number of main episode rows
    messages: np.ndarray  # int32: messages in the rebuilt history
    size: np.ndarray  # int64: bytes of text in the rebuilt history
    restarts: np.ndarray  # int16: context summarizations (history restarts)
    date: list[str]
    main_offsets: np.ndarray  # trial t's main rows are main_rows[main_offsets[t]:main_offsets[t+1]]
    main_rows: np.ndarray  # dataset-local row numbers, sorted by episode
    main_episodes: np.ndarray  # int32, one per main row: its episode number (see `group_rows`)
    sub_offsets: np.ndarray
    sub_rows: np.ndarray
    sub_sources: np.ndarray  # int32 codes into labels["trace_source"], one per entry of sub_rows

    def __len__(self) -> int:
        return len(self.dataset)

    def label(self, column: str, trial: int) -> str | None:
        code = int(self.codes[column][trial])
        return self.labels[column][code] if code >= 0 else None

    def rows(self, trial: int) -> np.ndarray:
        return self.main_rows[self.main_offsets[trial] : self.main_offsets[trial + 1]]

    def episode_numbers(self, trial: int) -> list[int]:
        """The episode number of each of `rows(trial)`."""
        return self.main_episodes[self.main_offsets[trial] : self.main_offsets[trial + 1]].tolist()

    def rows_of_dataset(self, dataset: int) -> tuple[np.ndarray, np.ndarray]:
        """(row, trial) of every row, main and sub-agent, of one dataset's trials, in row order."""
        rows, owners = [], []
        for offsets, members in ((self.main_offsets, self.main_rows), (self.sub_offsets, self.sub_rows)):
            trial_of = np.repeat(np.arange(len(self)), np.diff(offsets))
            mine = self.dataset[trial_of] == dataset
            rows.append(members[mine])
            owners.append(trial_of[mine])
        row, owner = np.concatenate(rows), np.concatenate(owners)
        order = np.argsort(row, kind="stable")
        return row[order], owner[order]

    def sub_agent_rows(self, trial: int) -> list[tuple[int, str | None]]:
        """(row, trace_source) of the trial's sub-agent rows."""
        lo, hi = self.sub_offsets[trial], self.sub_offsets[trial + 1]
        sources = self.labels["trace_source"]
        return [(int(r), sources[c] if c >= 0 else None) for r, c in zip(self.sub_rows[lo:hi], self.sub_sources[lo:hi])]


def build_trials(datasets: list[Storage], group: Callable[[Storage], Trials] | None = None) -> Trials:
    """The trials of every dataset, as one list: each dataset's rows grouped (by `group`, e.g. a cached
    `group_rows`), their labels merged."""
    parts = [group(ds) if group is not None else group_rows(ds.meta) for ds in datasets]
    labels: dict[str, list[str | None]] = {}
    codes: dict[str, np.ndarray] = {}
    sub_sources = []
    for column in LABEL_COLUMNS:
        merged: dict[str | None, int] = {}
        remapped = []
        for part in parts:
            local = part.labels[column]
            remap = np.array([merged.setdefault(v, len(merged)) for v in local] + [-1], dtype=np.int32)
            remapped.append(remap[part.codes[column]])  # code -1 picks the trailing -1
            if column == "trace_source":
                sub_sources.append(remap[part.sub_sources])
        labels[column] = list(merged)
        codes[column] = np.concatenate(remapped) if remapped else np.zeros(0, np.int32)
    outcome_by_label = [outcome_of(v) for v in labels["result"]] + [(UNKNOWN, math.nan)]
    outcome_table = np.array([o for o, _ in outcome_by_label], dtype=np.int8)
    reward_table = np.array([r for _, r in outcome_by_label], dtype=np.float64)
    result = codes["result"]
    # a part may say a trial's outcome itself (a harbor trial still running, or unreadable): -1 defers
    own = np.concatenate(
        [p.outcome if len(p.outcome) == len(p) else np.full(len(p), -1, np.int8) for p in parts]
        or [np.zeros(0, np.int8)]
    )
    return Trials(
        dataset=np.concatenate([np.full(len(p), index, dtype=np.int16) for index, p in enumerate(parts)]),
        labels=labels,
        codes=codes,
        outcome=np.where(own >= 0, own, outcome_table[result]).astype(np.int8),
        reward=np.where(own >= 0, math.nan, reward_table[result]),
        episodes=np.concatenate([p.episodes for p in parts]),
        messages=np.concatenate([p.messages for p in parts]),
        size=np.concatenate([p.size for p in parts]),
        restarts=np.concatenate([p.restarts for p in parts]),
        date=[d for p in parts for d in p.date],
        main_offsets=_concat_offsets([p.main_offsets for p in parts]),
        main_rows=np.concatenate([p.main_rows for p in parts]),
        main_episodes=np.concatenate([p.main_episodes for p in parts]),
        sub_offsets=_concat_offsets([p.sub_offsets for p in parts]),
        sub_rows=np.concatenate([p.sub_rows for p in parts]),
        sub_sources=np.concatenate(sub_sources),
    )


def _concat_offsets(offsets: list[np.ndarray]) -> np.ndarray:
    out = [np.zeros(1, np.int64)]
    base = 0
    for item in offsets:
        out.append(item[1:] + base)
        base += int(item[-1])
    return np.concatenate(out)


def _codes(column: pa.ChunkedArray) -> tuple[np.ndarray, list[Any]]:
    array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if not pa.types.is_dictionary(array.type):
        array = pc.dictionary_encode(array)
    codes = pc.fill_null(array.indices, -1).to_numpy(zero_copy_only=False).astype(np.int32)
    return codes, python_values(array.dictionary)


def _combined_key(columns: list[np.ndarray], sizes: list[int]) -> np.ndarray:
    """Dense ids of the distinct tuples of codes: one int64 per row when the sizes fit (a 1-D unique is
    ~10x faster than a row-wise one), else unique rows."""
    if math.prod(sizes) < 2**62:
        combined = np.zeros(len(columns[0]), dtype=np.int64)
        for column, size in zip(columns, sizes):
            combined = combined * size + (column.astype(np.int64) + 1)
        _, key = np.unique(combined, return_inverse=True)
    else:
        _, key = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)
    return key.reshape(-1).astype(np.int64)


def _prefix_columns(meta: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """Each row's prefix digest and hand-off flag (`convert.prefixes`); zeros where the text was not read
    (metadata read from the hub, or converted before they were kept)."""
    if "prefix" not in meta.column_names:
        return np.zeros(meta.num_rows, dtype=np.int64), np.zeros(meta.num_rows, dtype=bool)
    return meta.column("prefix").to_numpy(), meta.column("handoff").to_numpy(zero_copy_only=False)


def _split_by_episode(k: np.ndarray, ep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(trial label, rank in the trial) of rows sorted by key then export order, every one numbered.

    Several trials may share a key (null or normalized names, as in Harbor's golden files): a trial's main
    rows come together with rising episode numbers, so where a key repeats an episode number, a number
    that does not rise starts the next trial."""
    span = int(ep.max(initial=0)) + 2
    pairs = np.sort(k * span + ep + 1)  # distinct by sorting: np.unique's hashing is ~20x slower here
    distinct = pairs[np.append(True, pairs[1:] != pairs[:-1])] if len(pairs) else pairs
    rows_per_key = np.bincount(k, minlength=int(k.max(initial=0)) + 1)
    unique_per_key = np.bincount(distinct // span, minlength=len(rows_per_key))
    repeated_key = rows_per_key > unique_per_key
    new_trial = np.ones(len(k), dtype=bool)
    if len(k) > 1:
        new_trial[1:] = (k[1:] != k[:-1]) | (repeated_key[k[1:]] & (ep[1:] <= ep[:-1]))
    return np.cumsum(new_trial) - 1, ep.astype(np.int64)


def _split_by_prefix(k: np.ndarray, prefix: np.ndarray, handoff: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(trial label, rank in the trial) of rows sorted by key then export order, without episode numbers.

    Rows that share their first two messages (`prefix`) are one conversation, each row extending the
    one before: they go by message count (the caller's next sort key). A conversation that starts with a
    hand-off continues the trial before it (a summarization restart) and comes after its conversations;
    another one starts a new trial of the key. A row of fewer than two messages (prefix 0) stays where it
    is, in the trial of the rows before it; with no prefixes at all (metadata without text), a key is one
    trial in export order."""
    position = np.arange(len(k))
    if not len(k):
        return position, position
    known = prefix != 0
    # Each row's conversation (key and prefix) by its first row: a sort, as np.unique of pairs is slow.
    by_chain = np.lexsort((position, prefix, k))
    opens_chain = np.ones(len(k), dtype=bool)
    opens_chain[1:] = (k[by_chain][1:] != k[by_chain][:-1]) | (prefix[by_chain][1:] != prefix[by_chain][:-1])
    first = np.empty(len(k), dtype=np.int64)
    first[by_chain] = by_chain[np.flatnonzero(opens_chain)][np.cumsum(opens_chain) - 1]
    key_start = np.ones(len(k), dtype=bool)
    key_start[1:] = k[1:] != k[:-1]
    opens = known & (first == position) & ~handoff  # the first row of a conversation that is not a restart
    opened = np.cumsum(opens)
    before_key = (opened - opens)[np.maximum.accumulate(np.where(key_start, position, 0))]
    new_trial = key_start | (opens & (opened - before_key >= 2))
    trial_at = np.cumsum(new_trial) - 1
    label = np.where(known, trial_at[first], trial_at)
    rank = np.where(known, first + handoff[first] * len(k), position)
    return label, rank


def group_rows(meta: pa.Table) -> Trials:
    """A dataset's rows (its metadata, `meta`) grouped into trials (the `dataset` array is zeros; `build_trials` numbers it).

    Worked out in phases, each a function of its own, so that each phase's per-row temporaries are freed
    when it returns: held to the end, they made its peak 229 bytes a row, not 165 (84 MB, not 60, at
    400,000 rows: on the way to a hub dataset's first screen)."""
    codes, labels = {}, {}
    for column in LABEL_COLUMNS:
        codes[column], labels[column] = _codes(meta.column(column))
    main_label = np.array([v in (None, "main") for v in labels["trace_source"]] + [True])
    is_main = main_label[codes["trace_source"]]
    key = _combined_key([codes[c] for c in KEY_COLUMNS], [len(labels[c]) + 1 for c in KEY_COLUMNS])
    main = _main_trials(meta, key, np.nonzero(is_main)[0])
    messages, size, restarts = _history_sizes(meta, main)
    count = len(main.offsets) - 1
    main_offsets = main.offsets

    # Sub-agent rows join the trial of their key; among trials sharing a key, one that restarted.
    subs = np.nonzero(~is_main)[0]
    key_to_trial = np.full(int(key.max(initial=0)) + 1, -1, dtype=np.int64)
    key_to_trial[main.keys] = np.arange(count)
    key_to_trial[main.keys[restarts > 0]] = np.arange(count)[restarts > 0]
    owner = key_to_trial[key[subs]] if len(subs) else np.zeros(0, np.int64)
    trial_rows = main.rows[main_offsets[1:] - 1] if count else np.zeros(0, np.int64)
    orphans = subs[owner < 0]
    if len(orphans):  # sub-agent rows whose main rows are missing make trials of their own
        orphan_keys, orphan_trial = np.unique(key[orphans], return_inverse=True)
        orphan_trial = orphan_trial.reshape(-1)
        owner[owner < 0] = count + orphan_trial
        extra = len(orphan_keys)
        trial_rows = np.concatenate([trial_rows, orphans[np.unique(orphan_trial, return_index=True)[1]]])
        main_offsets = np.append(main_offsets, np.full(extra, len(main.rows)))
        messages, size, restarts = (np.append(a, np.zeros(extra, np.int64)) for a in (messages, size, restarts))
        count += extra
    sub_order = np.lexsort((subs, owner))
    sub_rows, sub_owner = subs[sub_order], owner[sub_order]
    sub_offsets = np.searchsorted(sub_owner, np.arange(count + 1)).astype(np.int64)

    dates = python_values(meta.column("date").take(pa.array(trial_rows)).combine_chunks()) if count else []
    return Trials(
        dataset=np.zeros(count, dtype=np.int16),
        labels={c: labels[c] for c in LABEL_COLUMNS},
        codes={c: codes[c][trial_rows] for c in LABEL_COLUMNS},
        outcome=np.zeros(0, np.int8),
        reward=np.zeros(0),
        episodes=np.diff(main_offsets).astype(np.int32),
        messages=messages.astype(np.int32),
        size=size.astype(np.int64),
        restarts=restarts.astype(np.int16),
        date=[d or "" for d in dates],
        main_offsets=main_offsets,
        main_rows=main.rows,
        main_episodes=main.episodes,
        sub_offsets=sub_offsets,
        sub_rows=sub_rows,
        sub_sources=codes["trace_source"][sub_rows],
    )


@dataclass(frozen=True, slots=True)
class _MainTrials:
    """The main rows of a dataset's trials (see `Trials`), and each trial's key."""

    rows: np.ndarray
    offsets: np.ndarray
    episodes: np.ndarray
    keys: np.ndarray


def _main_trials(meta: pa.Table, key: np.ndarray, main: np.ndarray) -> _MainTrials:
    """The `main` rows, by key then export order, split into trials and ordered within each: by episode
    number where every row of the key has one, else by the conversations' prefixes."""
    episode = meta.column("episode_num").to_numpy()
    order = main[np.lexsort((main, key[main]))]
    k, ep = key[order], episode[order]
    unnumbered = np.zeros(int(key.max(initial=0)) + 1, dtype=bool)
    unnumbered[k[ep < 0]] = True
    by_prefix = unnumbered[k]
    label = np.zeros(len(order), dtype=np.int64)
    rank = np.zeros(len(order), dtype=np.int64)
    secondary = np.zeros(len(order), dtype=np.int64)
    numbered = ~by_prefix
    label[numbered], rank[numbered] = _split_by_episode(k[numbered], ep[numbered])
    prefix, handoff = _prefix_columns(meta)
    rows_p = order[by_prefix]
    label[by_prefix], rank[by_prefix] = _split_by_prefix(k[by_prefix], prefix[rows_p], handoff[rows_p])
    label[by_prefix] += int(label[numbered].max(initial=-1)) + 1
    secondary[by_prefix] = meta.column("n_messages").to_numpy()[rows_p]
    # Trials numbered by key, then first row (as one pass over the sorted rows would number them).
    _, first_position = np.unique(label, return_index=True)
    renumber = np.empty(len(first_position), dtype=np.int64)
    renumber[np.argsort(first_position)] = np.arange(len(first_position))
    trial_of = renumber[label] if len(label) else label
    within = np.lexsort((order, secondary, rank, trial_of))
    rows, trial_sorted = order[within], trial_of[within]
    count = int(trial_sorted[-1]) + 1 if len(trial_sorted) else 0
    starts = np.searchsorted(trial_sorted, np.arange(count))
    offsets = np.append(starts, len(rows)).astype(np.int64)
    # Episode numbers: the rows' own, or (placed by prefix) their position in the trial.
    position = np.arange(len(rows)) - np.repeat(starts, np.diff(offsets))
    episodes = np.where(by_prefix[within], position, ep[within]).astype(np.int32)
    return _MainTrials(rows, offsets, episodes, key[rows[starts]] if count else np.zeros(0, np.int64))


def _history_sizes(meta: pa.Table, main: _MainTrials) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(messages, bytes of text, restarts) of each trial's history, without reading text: a longer row
    extends the previous one; a shorter one restarts after a summarization and keeps only the first prompt."""
    starts = main.offsets[:-1]
    if not len(starts):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    sizes = meta.column("n_messages").to_numpy().astype(np.int64)[main.rows]
    n_bytes = meta.column("n_bytes").to_numpy()[main.rows]
    first = np.zeros(len(main.rows), dtype=bool)
    first[starts] = True
    prev = np.roll(sizes, 1)
    restart = ~first & (sizes <= prev)
    new_messages = np.where(first, sizes, np.where(restart, sizes - 1, sizes - prev))
    first_bytes = meta.column("first_bytes").to_numpy()[main.rows]
    new_bytes = np.where(first, n_bytes, np.where(restart, n_bytes - first_bytes, n_bytes - np.roll(n_bytes, 1)))
    messages = np.add.reduceat(np.maximum(new_messages, 0), starts)
    size = np.add.reduceat(np.maximum(new_bytes, 0), starts)
    restarts = np.add.reduceat(restart.astype(np.int64), starts)
    return messages, size, restarts

"""A harbor job folder as a Storage: its trials' summaries give the rows (one per episode, then one per
sub-agent conversation, as harbor's exporter writes them) and their metadata; the text is read from the
trial's files when a trial is opened, searched or exported. So the session, histories, search, stats,
the verifier and findings indexes and export work on a job folder as on its exported dataset.

Rows are laid out trial by trial, in the order the trials were first seen: a trial's position never
changes, which keeps its identity while the job runs (`apply`).
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pyarrow as pa

from ...trace.model import StepMetrics
from ...trace.outcome import ERROR
from ..dataset import Piece, Storage
from ..lru import LRU
from ..sources import ResolvedSource
from ..trials import Trials
from .columns import LABELS, Columns, encode
from .rows import TrialRows, exported_rows
from .summaries import job_folder
from .trial import TrialSummary, TrialText, summarize

TEXTS = 16
"""Trials whose text is kept read (the session keeps as many rebuilt histories)."""
RETRIES = 3
"""Reads of a trial that was fine and now is not (harbor rewriting a file): then the last good reading."""


@dataclass(frozen=True, slots=True)
class JobSource(ResolvedSource):
    """A harbor job folder (`dataset_id`, absolute), as given on the command line."""

    root: str = ""
    """The folder the user gave (a jobs root, this job, or one of its trials): where new jobs appear."""
    trial: str | None = None
    """Only this trial of the job (the user gave a trial folder)."""


@dataclass(frozen=True, slots=True)
class _Layout:
    """The rows of the trials, as one immutable value (readers take it once per call)."""

    first_row: np.ndarray  # int64, per trial position + 1: its rows are first_row[p]:first_row[p+1]
    mains: np.ndarray  # int64 per trial position: its episode rows (the first of its rows; then sub-agents)
    trial_of: np.ndarray  # int64 per row: the trial position
    local: np.ndarray  # int64 per row: the row within the trial (episodes, then sub-agents)


class JobStorage(Storage):
    local = True
    followed = True

    def __init__(
        self,
        source: JobSource,
        summaries: list[TrialSummary] | Callable[[], list[TrialSummary]],
        job_results: dict[str, str],
        job_finished: bool,
        columns: Columns | None = None,
        checked: bool = True,
    ) -> None:
        """`summaries`: the trials' summaries by position, or how to read them on first use (a reopen on
        the kept `columns`, which then say all that opening needs)."""
        self.source = source
        self.checked = checked
        """Whether the trials' stamps were compared with their files when the job was opened: if not (a
        reopen on the kept summaries alone), the follower's first look compares them all."""
        self.job = Path(source.dataset_id)
        self.folder = job_folder(self.job)
        self.files: list[str] = []
        self._entries = None if callable(summaries) else list(summaries)
        self._read_entries = summaries if callable(summaries) else None
        self._entries_lock = threading.Lock()
        self.results = job_results
        self.job_finished = job_finished
        self._texts: LRU[str, TrialText] = LRU(TEXTS)
        self.columns = columns if columns is not None else Columns.of(self.entries)
        self._relayout()

    @property
    def entries(self) -> list[TrialSummary]:
        """The trials' summaries, by position (the follower's thread may be the first to ask)."""
        entries = self._entries
        if entries is None:
            with self._entries_lock:
                if self._entries is None and self._read_entries is not None:
                    self._entries = self._read_entries()
                entries = self._entries
        assert entries is not None
        return entries

    @property
    def job_source(self) -> JobSource:
        assert isinstance(self.source, JobSource)
        return self.source

    # --- layout ------------------------------------------------------------------------------------
    def _relayout(self) -> None:
        columns = self.columns
        mains = columns.mains
        counts = mains + columns.subs
        first_row = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        trial_of = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        local = np.arange(len(trial_of), dtype=np.int64) - first_row[trial_of]
        episode = np.where(local < mains[trial_of], local, 0).astype(np.int32)
        self.take_meta(
            pa.Table.from_arrays([_int32(episode), _int32(columns.row_messages)], names=["episode_num", "n_messages"])
        )
        self.num_rows = len(trial_of)
        self._layout = _Layout(first_row, mains, trial_of, local)

    @property
    def index_folder(self) -> Path:
        """Indexes of this reading of the job (verifier, findings): a folder per content, since the
        trials change while the job runs."""
        identity = [self.columns.key, sorted(self.results.items())]
        key = hashlib.sha256(orjson.dumps(identity)).hexdigest()[:16]
        folder = self.folder / f"index-{key}"
        with contextlib.suppress(OSError):  # a cache that cannot be written: the indexes are not kept
            folder.mkdir(parents=True, exist_ok=True)
        return folder

    def forget_old_indexes(self) -> None:
        """Best effort: the indexes of earlier readings of the job go (each is a few files)."""
        keep = self.index_folder.name
        for old in self.folder.glob("index-*"):
            if old.name != keep:
                shutil.rmtree(old, ignore_errors=True)

    # --- trials ------------------------------------------------------------------------------------
    def result_of(self, summary: TrialSummary) -> str | None:
        """The exporter's `result`: the job's result.json first, then the trial's own."""
        if not summary.finished:
            return None
        return self.results.get(str(summary.labels.get("trial_name")), summary.result)

    def group(self) -> Trials:
        """The trials, one per trial folder, in position order, from the columns (a reopen builds them for
        every trial)."""
        columns, layout = self.columns, self._layout
        count = len(columns.names)
        labels: dict[str, list[str | None]] = {c: list(columns.labels[c]) for c in LABELS}
        codes = {c: columns.codes[c] for c in LABELS}
        own = columns.label_values("result")  # the exporter's `result`: the job's result.json first
        if self.results:
            names = columns.label_values("trial_name")
            own = [self.results.get(str(name), mine) for name, mine in zip(names, own)]
        labels["result"], codes["result"] = encode([v if done else None for v, done in zip(own, columns.finished)])
        sub_names = columns.label_values("sub_source")
        firsts = np.concatenate([[0], np.cumsum(columns.subs)])[:-1].tolist()
        labels["trace_source"], codes["trace_source"] = encode(
            [
                "main" if episodes else (sub_names[first] if subagents else None)
                for episodes, subagents, first in zip(columns.mains.tolist(), columns.subs.tolist(), firsts)
            ]
        )
        sources = labels["trace_source"]
        for source in columns.labels["sub_source"]:
            if source not in sources:
                sources.append(source)
        remap = np.array([sources.index(source) for source in columns.labels["sub_source"]] + [-1], dtype=np.int32)
        is_main = layout.local < layout.mains[layout.trial_of]
        return Trials(
            dataset=np.zeros(count, dtype=np.int16),
            labels=labels,
            codes=codes,
            outcome=columns.outcome,
            reward=np.zeros(0),
            episodes=columns.mains.astype(np.int32),
            messages=columns.messages,
            size=columns.size,
            restarts=columns.restarts,
            date=list(columns.date),
            main_offsets=np.concatenate([[0], np.cumsum(columns.mains)]).astype(np.int64),
            main_rows=np.flatnonzero(is_main).astype(np.int64),
            main_episodes=layout.local[is_main].astype(np.int32),
            sub_offsets=np.concatenate([[0], np.cumsum(columns.subs)]).astype(np.int64),
            sub_rows=np.flatnonzero(~is_main).astype(np.int64),
            sub_sources=remap[columns.codes["sub_source"]],
        )

    def usage(self) -> dict[str, np.ndarray]:
        return dict(self.columns.usage)

    def problems(self) -> list[str | None]:
        return list(self.columns.problems)

    def trial_folder(self, position: int) -> Path:
        return self.job / self.entries[position].name

    def episode_metrics(self, position: int) -> list[StepMetrics | None]:
        return self.text(position).episode_metrics()

    # --- text --------------------------------------------------------------------------------------
    def text(self, position: int) -> TrialText:
        """The trial's text: read from its files (kept for the last few trials), the last good reading
        while harbor rewrites a file. From the columns, not `entries`: the first frame shows a trial, and
        a reopen reads the summaries only after it."""
        name, outcome = self.columns.names[position], int(self.columns.outcome[position])
        kept = self._texts.get(name)
        if kept is not None:
            return kept
        folder = self.job / name
        for attempt in range(RETRIES):
            fresh, text = summarize(folder, self.job_finished)
            if fresh.outcome != ERROR or outcome == ERROR:
                self._texts.put(name, text)
                break
            time.sleep(0.05 * (attempt + 1))  # harbor is rewriting a file: not kept, read again next time
        return text

    def _rows_of(self, row: int) -> tuple[int, TrialRows, int]:
        layout = self._layout
        position = int(layout.trial_of[row])
        return position, TrialRows(self.text(position)), int(layout.local[row])

    def messages(self, row: int, start: int = 0, stop: int | None = None) -> list[tuple[str, str]]:
        """(role, content) of messages [start, stop) of a row, as many as its metadata says it has."""
        position, rows, local = self._rows_of(row)
        count = self.message_count(row)
        episodes = int(self.columns.mains[position])
        stop = count if stop is None else min(stop, count)
        if local >= episodes:  # a sub-agent row: the text may have fewer after a rewrite
            local = len(rows.main) + (local - episodes)
        if local >= rows.count:
            return []
        return rows.messages(local, start, stop)

    def verifier_output(self, row: int) -> str | None:
        return self.text(int(self._layout.trial_of[row])).verifier

    def pieces(self) -> int:
        return len(self.entries)

    def scan(self, conversations: bool, verifier: bool, cancelled: Callable[[], bool] | None = None) -> Iterator[Piece]:
        """Trial by trial, each row holding only the messages it adds to its trial's history (`fresh`):
        the nested-prefix repeats are never built."""
        from ..history import rebuild_history

        layout = self._layout
        for position, summary in enumerate(self.entries):
            if cancelled is not None and cancelled():
                raise InterruptedError("cancelled")
            start, stop = int(layout.first_row[position]), int(layout.first_row[position + 1])
            if stop == start:
                continue
            text = self.text(position)
            per_row: list[list[tuple[str, str]]] = [[] for _ in range(stop - start)]
            if conversations:
                rows = TrialRows(text)
                episodes = min(len(summary.rows), len(rows.main))
                history = rebuild_history(rows, list(range(episodes)), list(range(episodes)), [])
                for message in history.messages:
                    per_row[message.episode].append((message.role, message.content))
                for j, (_, messages, _) in enumerate(text.subagents[: len(summary.subs)]):
                    per_row[len(summary.rows) + j] = list(messages)
            yield Piece(
                start,
                _conversation_array(per_row) if conversations else None,
                pa.array([text.verifier] + [None] * (stop - start - 1), pa.string()) if verifier else None,
                fresh=True,
            )

    # --- export ------------------------------------------------------------------------------------
    makes_rows = True

    def exported_count(self, position: int) -> int:
        summary = self.entries[position]
        return len(summary.rows) + len(summary.subs) if summary.finished else 0

    def exported_rows(self, position: int) -> list[dict[str, Any]]:
        """The rows harbor's exporter writes for the trial at `position` (none for a trial it would not
        export: running, or with no result it can read)."""
        summary = self.entries[position]
        if not summary.finished:
            return []
        labels = summary.labels
        name, task = str(labels["trial_name"]), str(labels["task"])
        return exported_rows(self.text(position), labels, self.result_of(summary), name, task)

    # --- following the job -------------------------------------------------------------------------
    def apply(
        self, summaries: dict[str, TrialSummary], texts: dict[str, TrialText], results: dict[str, str], finished: bool
    ) -> list[int]:
        """Take new readings of some trials (by folder name; unknown names are new trials, added at the
        end) and of the job's result.json; returns the positions whose trials changed."""
        positions = {s.name: p for p, s in enumerate(self.entries)}
        changed = []
        for name, summary in summaries.items():
            if name in positions:
                self.entries[positions[name]] = summary
                changed.append(positions[name])
            else:
                changed.append(len(self.entries))
                self.entries.append(summary)
            if name in texts:
                self._texts.put(name, texts[name])
            else:
                self._texts.discard(name)
        if results != self.results or finished != self.job_finished:
            names = {
                p
                for p, s in enumerate(self.entries)
                if self.results.get(str(s.labels.get("trial_name"))) != results.get(str(s.labels.get("trial_name")))
            }
            changed += sorted(names - set(changed))
            self.results, self.job_finished = results, finished
        self.columns = Columns.of(self.entries)
        self._relayout()
        return sorted(set(changed))

    def recipe(self) -> tuple[Callable[..., Storage], tuple[Any, ...]]:
        return _restore, (self.source, [s.to_row() for s in self.entries], self.results, self.job_finished)


def _restore(source: JobSource, entries: list[list[Any]], results: dict[str, str], finished: bool) -> JobStorage:
    """A JobStorage as another process had it (the findings workers reopen the session)."""
    return JobStorage(source, [TrialSummary.from_row(e) for e in entries], results, finished)


def _int32(values: np.ndarray) -> pa.Array:
    """An int32 column over the array's buffer: `pa.array` would import pandas (a third of a reopen)."""
    values = np.ascontiguousarray(values, dtype=np.int32)
    return pa.Array.from_buffers(pa.int32(), len(values), [None, pa.py_buffer(values)])


def _conversation_array(per_row: list[list[tuple[str, str]]]) -> pa.Array:
    from ..convert import CONVERSATION_TYPE, MESSAGE_TYPE

    offsets = np.concatenate([[0], np.cumsum([len(r) for r in per_row])]).astype(np.int32)
    roles = pa.array([role for r in per_row for role, _ in r], pa.string())
    contents = pa.array([content for r in per_row for _, content in r], pa.string())
    values = pa.StructArray.from_arrays([roles, contents], fields=list(MESSAGE_TYPE))
    return pa.ListArray.from_arrays(pa.array(offsets), values, type=CONVERSATION_TYPE)

"""Full-text search over every message (and verifier log) of a session, on the mapped Arrow buffers.

RE2 (`pc.match_substring_regex`) scans each batch's flattened contents without copying them, an escaped
literal being ~10x faster than the plain substring kernel; pyarrow releases the GIL, so batches run on
two threads. Matching message positions map to rows through the list offsets and rows to trials through
a row -> trial table, so a message repeated by every nested-prefix episode row marks its trial once.

A dataset read from the hub is scanned as it streams in, row group by row group; while its download
runs, a search first waits for the local copy (`waiting` reports the download's progress).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .dataset import Piece

if TYPE_CHECKING:
    from .session import Session

THREADS = 2
"""performance-notes.md: 0.11 s/GB on one thread, 0.06 s/GB on two (two cores)."""


class SearchCancelled(Exception):
    """The caller's `cancelled()` turned true; the partial result is dropped."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    pattern: str
    regex: bool
    ignore_case: bool
    trials: np.ndarray  # bool mask over session trials: any message or searched verifier log matches
    in_verifier: np.ndarray  # bool mask over session trials: a verifier log matches
    matched_trials: int
    matched_messages: int  # each message of a rebuilt history (or sub-agent row) counted once
    bytes_scanned: int
    seconds: float

    def messages_in(self, session: Session, trial: int) -> list[int]:
        """Indices of the trial's history messages that match (Python `re`, on demand for one trial)."""
        found = self._compiled().search
        return [m.index for m in session.history(trial).messages if found(m.content)]

    def subagent_messages_in(self, session: Session, trial: int) -> list[tuple[int, int]]:
        """(sub-agent conversation, message index) pairs that match: trials can match only there."""
        found = self._compiled().search
        subagents = session.history(trial).subagents
        return [(i, m.index) for i, sub in enumerate(subagents) for m in sub.messages if found(m.content)]

    def _compiled(self) -> re.Pattern:
        return python_regex(self.pattern, self.regex, self.ignore_case)


def search(
    session: Session,
    pattern: str,
    *,
    regex: bool = False,
    ignore_case: bool = False,
    verifier: bool = True,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    waiting: Callable[[float], None] | None = None,
) -> SearchResult:
    """Trials whose messages (and verifier logs when `verifier`) contain `pattern`.

    Raises ValueError with a one-line message for an empty or invalid pattern (RE2 and Python `re` must
    both accept a regex: the scan uses RE2, `messages_in` uses `re`), and SearchCancelled. While a
    download runs, waits for it first, calling `waiting(fraction downloaded)`.
    """
    began = time.perf_counter()
    python_regex(pattern, regex, ignore_case)
    expression = pattern if regex else re.escape(pattern)
    try:
        pc.match_substring_regex(pa.array([""]), expression, ignore_case=ignore_case)
    except pa.ArrowInvalid as exc:
        reason = str(exc).removeprefix("Invalid regular expression: ")
        raise ValueError(f"invalid regex {pattern!r}: {reason}") from None

    core = pattern.strip() if not regex else ""
    prefilter = re.escape(core) if core and core != pattern else None

    def scan(array: pa.Array) -> np.ndarray:
        if prefilter is None:
            matches = pc.match_substring_regex(array, expression, ignore_case=ignore_case)
            return pc.indices_nonzero(matches).to_numpy().astype(np.int64)
        # RE2 skips ahead with memchr on a literal's first byte: a leading blank is everywhere, so scan
        # for the trimmed needle, then confirm the whole one on those messages only
        rough = pc.indices_nonzero(pc.match_substring_regex(array, prefilter, ignore_case=ignore_case))
        if not len(rough):
            return np.zeros(0, dtype=np.int64)
        exact = pc.match_substring_regex(array.take(rough), expression, ignore_case=ignore_case)
        return rough.filter(exact).to_numpy().astype(np.int64)

    stop = cancelled or (lambda: False)
    if not session.wait_for_download(waiting, stop):
        raise SearchCancelled
    count = len(session.trials)
    trials = np.zeros(count, dtype=bool)
    in_verifier = np.zeros(count, dtype=bool)
    messages = scanned = done = 0
    total = sum(ds.pieces() for ds in session.datasets)
    pool = ThreadPoolExecutor(THREADS, thread_name_prefix="tracetui-search")
    running: dict = {}

    def collect(finished) -> None:
        nonlocal messages, scanned, done
        for future in finished:
            if stop():
                raise SearchCancelled
            job = running.pop(future)
            hit_trials, hit_messages = future.result()
            trials[hit_trials] = True
            if job.verifier:
                in_verifier[hit_trials] = True
            messages += hit_messages
            scanned += job.bytes
            done += job.share
            if progress is not None:
                progress(done / total if total else 1.0)

    try:
        for index, ds in enumerate(session.datasets):
            owner, first_new = _row_maps(session, index, ds.message_counts)
            for piece in ds.scan(conversations=True, verifier=verifier, cancelled=stop):
                if stop():
                    raise SearchCancelled
                for job in _jobs(piece, scan, owner, first_new):
                    running[pool.submit(job.run)] = job
                while len(running) > 2 * THREADS:  # bounded read-ahead: a remote scan streams
                    collect(wait(running, return_when=FIRST_COMPLETED).done)
        while running:
            collect(wait(running, return_when=FIRST_COMPLETED).done)
    except InterruptedError:  # a remote scan stopped between row groups
        raise SearchCancelled from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return SearchResult(
        pattern=pattern,
        regex=regex,
        ignore_case=ignore_case,
        trials=trials,
        in_verifier=in_verifier,
        matched_trials=int(trials.sum()),
        matched_messages=messages,
        bytes_scanned=scanned,
        seconds=time.perf_counter() - began,
    )


def loose_literal(text: str) -> str:
    """`text` as a regular expression that matches it literally, but for its runs of whitespace, which
    match any run of whitespace: how a quote from a trial is found again in the text the reader sees
    (a finding's evidence, an answer's quote), whatever the line breaks and indentation there."""
    return r"\s+".join(re.escape(word) for word in text.split())


def python_regex(pattern: str, regex: bool, ignore_case: bool) -> re.Pattern:
    if not pattern:
        raise ValueError("nothing to search for: the pattern is empty")
    try:
        return re.compile(pattern if regex else re.escape(pattern), re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from None


@dataclass(frozen=True, slots=True)
class _Job:
    """One piece's message contents or verifier logs, with what maps its hits to trials."""

    scan: Callable[[pa.Array], np.ndarray]
    array: pa.Array
    start: int  # dataset row of the piece's first row
    owner: np.ndarray  # dataset row -> session trial (-1: none)
    offsets: np.ndarray | None  # the piece's list offsets (None: one verifier log per row)
    first_new: np.ndarray | None  # dataset row -> its first message not already in an earlier row
    verifier: bool
    bytes: int
    share: float  # of the piece, for progress
    fresh: bool = False  # the piece's rows hold only the messages new to their trials (Piece.fresh)

    def run(self) -> tuple[np.ndarray, int]:
        """(matching trials, matching messages counted once per history)."""
        hits = self.scan(self.array)
        if self.offsets is None:
            rows, new = self.start + hits, None
        else:
            assert self.first_new is not None  # given with the offsets
            local = np.searchsorted(self.offsets, hits, side="right") - 1
            rows = self.start + local
            new = np.ones(len(hits), dtype=bool) if self.fresh else (hits - self.offsets[local]) >= self.first_new[rows]
        owners = self.owner[rows]
        owned = owners >= 0
        messages = 0 if new is None else int(np.count_nonzero(new & owned))
        return np.unique(owners[owned]), messages


def _jobs(piece: Piece, scan: Callable[[pa.Array], np.ndarray], owner: np.ndarray, first_new: np.ndarray) -> list[_Job]:
    conversation = piece.conversations
    assert conversation is not None  # the search asks for them
    content = conversation.values.field("content")
    offsets = conversation.offsets.to_numpy()
    share = 0.5 if piece.verifier is not None else 1.0
    jobs = [
        _Job(scan, content, piece.start, owner, offsets, first_new, False, _text_bytes(content), share, piece.fresh)
    ]
    if piece.verifier is not None:
        jobs.append(
            _Job(scan, piece.verifier, piece.start, owner, None, None, True, _text_bytes(piece.verifier), share)
        )
    return jobs


def _row_maps(session: Session, index: int, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For dataset `index`: each row's trial, and the first message of each row that is new to its trial.

    A longer main row extends the previous one (messages before its count are repeats); a row that is not
    longer restarts after a summarization and repeats only the first prompt, as in `trials.group_rows`.
    """
    t = session.trials
    everyone = np.arange(len(t))
    owner = np.full(len(counts), -1, dtype=np.int64)
    first_new = np.zeros(len(counts), dtype=np.int64)
    main_owner = np.repeat(everyone, np.diff(t.main_offsets))
    sub_owner = np.repeat(everyone, np.diff(t.sub_offsets))
    mine = t.dataset[main_owner] == index
    rows, trial = t.main_rows[mine], main_owner[mine]
    owner[rows] = trial
    if len(rows):
        sizes = counts[rows]
        previous = np.roll(sizes, 1)
        first = np.ones(len(rows), dtype=bool)
        first[1:] = trial[1:] != trial[:-1]
        first_new[rows] = np.where(first, 0, np.where(sizes > previous, previous, 1))
    mine = t.dataset[sub_owner] == index
    owner[t.sub_rows[mine]] = sub_owner[mine]
    return owner, first_new


def _text_bytes(array: pa.Array) -> int:
    return int(pc.sum(pc.binary_length(array)).as_py() or 0)

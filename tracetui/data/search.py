"""Full-text search over every message (and verifier log) of a session, on the mapped Arrow buffers.

RE2 (`pc.match_substring_regex`) scans the flattened contents without copying them, an escaped literal
being ~10x faster than the plain substring kernel; pyarrow releases the GIL, so jobs run on two threads.
Consecutive pieces are scanned as one job of about JOB_BYTES of text (one kernel call over their chunks,
one hand-off): the cost follows the bytes, not the number of row groups (4,240 of 100 rows at 400k). Matching message positions map to rows through the list offsets and rows to trials through
a row -> trial table, so a message repeated by every nested-prefix episode row marks its trial once.

A dataset read from the hub is scanned as it streams in, row group by row group; while its download
runs, a search first waits for the local copy (`waiting` reports the download's progress).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .dataset import Piece, Storage

if TYPE_CHECKING:
    from .session import Session

THREADS = 2
"""performance-notes.md: 0.11 s/GB on one thread, 0.06 s/GB on two (two cores)."""
JOB_BYTES = 32 << 20
"""Text scanned by one job: large enough that the per-job work (a kernel call, a future, mapping hits to
trials) is noise, small enough for steady progress and a bounded read-ahead of a streamed scan."""


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

    def _compiled(self) -> re.Pattern[str]:
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

    def scan(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
        if prefilter is None:
            return _hits(pc.match_substring_regex(array, expression, ignore_case=ignore_case))
        # RE2 skips ahead with memchr on a literal's first byte: a leading blank is everywhere, so scan
        # for the trimmed needle, then confirm the whole one on those messages only
        rough = _hits(pc.match_substring_regex(array, prefilter, ignore_case=ignore_case))
        if not len(rough):
            return rough
        exact = pc.match_substring_regex(_take(array, rough), expression, ignore_case=ignore_case)
        return rough[_hits(exact)]

    stop = cancelled or (lambda: False)
    if not session.wait_for_download(waiting, stop):
        raise SearchCancelled
    count = len(session.trials)
    trials = np.zeros(count, dtype=bool)
    in_verifier = np.zeros(count, dtype=bool)
    messages = scanned = 0
    done = 0.0  # of the pieces
    total = sum(ds.pieces() for ds in session.datasets)
    pool = ThreadPoolExecutor(THREADS, thread_name_prefix="tracetui-search")
    running: dict[Future[tuple[np.ndarray, int]], _Job] = {}

    def collect(finished: Iterable[Future[tuple[np.ndarray, int]]]) -> None:
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
            shown = _shown_logs(session, index, ds) if verifier else None
            for pieces in _runs(ds.scan(conversations=True, verifier=verifier, cancelled=stop)):
                if stop():
                    raise SearchCancelled
                for job in _jobs(pieces, scan, owner, first_new, shown):
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


def python_regex(pattern: str, regex: bool, ignore_case: bool) -> re.Pattern[str]:
    if not pattern:
        raise ValueError("nothing to search for: the pattern is empty")
    try:
        return re.compile(pattern if regex else re.escape(pattern), re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from None


@dataclass(frozen=True, slots=True)
class _Job:
    """Consecutive rows' message contents or verifier logs, with what maps their hits to trials."""

    scan: Callable[[pa.Array], np.ndarray]
    array: pa.Array | pa.ChunkedArray
    start: int  # dataset row of the first row
    owner: np.ndarray  # dataset row -> session trial (-1: none)
    offsets: np.ndarray | None  # each row's first message in `array`, and the end (None: one log per row)
    first_new: np.ndarray | None  # dataset row -> its first message not already in an earlier row
    verifier: bool
    bytes: int
    share: float  # of the pieces, for progress
    fresh: bool = False  # the rows hold only the messages new to their trials (Piece.fresh)
    logs: np.ndarray | None = None  # the logs to scan (positions in `array`; None: all)

    def run(self) -> tuple[np.ndarray, int]:
        """(matching trials, matching messages counted once per history)."""
        positions = self.logs if self.offsets is None else self._new_messages()
        found = self.scan(self.array if positions is None else _take(self.array, positions))
        hits = found if positions is None else positions[found]
        if self.offsets is None:
            rows = self.start + hits
        else:
            rows = self.start + np.searchsorted(self.offsets, hits, side="right") - 1
        owners = self.owner[rows]
        owned = owners >= 0
        return np.unique(owners[owned]), 0 if self.offsets is None else int(np.count_nonzero(owned))

    def _new_messages(self) -> np.ndarray | None:
        """Positions of the messages to scan: those new to their trial in their row. The others repeat an
        earlier row of the same trial (a nested-prefix episode row holds every message before it), whose
        hits already marked the trial; messages of rows no trial owns count nowhere. None: all of them."""
        if self.fresh:
            return None
        assert self.offsets is not None and self.first_new is not None  # messages, not logs
        rows = np.arange(self.start, self.start + len(self.offsets) - 1)
        begin, end = self.offsets[:-1], self.offsets[1:]
        first = np.where(self.owner[rows] >= 0, np.minimum(begin + self.first_new[rows], end), end)
        counts = end - first
        total = int(counts.sum())
        if not len(begin) or total == int(end[-1] - begin[0]):
            return None
        return np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(total)


def _runs(pieces: Iterator[Piece]) -> Iterator[list[Piece]]:
    """Consecutive pieces (rows in a row, alike) of about JOB_BYTES of text together."""
    run: list[Piece] = []
    size = 0
    for piece in pieces:
        if run and (
            piece.start != run[-1].start + _rows(run[-1])
            or piece.fresh != run[0].fresh
            or (piece.verifier is None) != (run[0].verifier is None)
        ):
            yield run
            run, size = [], 0
        run.append(piece)
        size += _piece_bytes(piece)
        if size >= JOB_BYTES:
            yield run
            run, size = [], 0
    if run:
        yield run


def _rows(piece: Piece) -> int:
    text = piece.conversations if piece.conversations is not None else piece.verifier
    return 0 if text is None else len(text)


def _piece_bytes(piece: Piece) -> int:
    """The piece's text bytes, from the offsets alone."""
    total = 0
    if piece.conversations is not None and len(piece.conversations):
        offsets = _offsets(piece.conversations)
        content = piece.conversations.values.field("content")
        total += _span(content, int(offsets[0]), int(offsets[-1]))
    if piece.verifier is not None and len(piece.verifier):
        total += _span(piece.verifier, 0, len(piece.verifier))
    return total


def _span(strings: pa.Array, first: int, end: int) -> int:
    """Bytes of strings [first, end) of a string or binary array, from its offsets buffer."""
    if end <= first:
        return 0
    offsets = _offsets(strings)
    return int(offsets[end] - offsets[first])


def _offsets(array: pa.Array) -> np.ndarray:
    """The offsets of a list, string or binary array, from its buffer (no copy, no pyarrow scalars)."""
    kind = array.type
    wide = pa.types.is_large_list(kind) or pa.types.is_large_string(kind) or pa.types.is_large_binary(kind)
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64 if wide else np.int32)
    return offsets[array.offset : array.offset + len(array) + 1]


def _jobs(
    pieces: list[Piece],
    scan: Callable[[pa.Array], np.ndarray],
    owner: np.ndarray,
    first_new: np.ndarray,
    shown: np.ndarray | None = None,
) -> list[_Job]:
    """A job for the run's message contents and one for its verifier logs (when searched): of the logs,
    only the rows `shown` marks (None: all)."""
    contents, offsets, base = [], [], 0
    for piece in pieces:
        conversation = piece.conversations
        assert conversation is not None  # the search asks for them
        mine = _offsets(conversation).astype(np.int64)
        contents.append(conversation.values.field("content").slice(mine[0], mine[-1] - mine[0]))
        offsets.append(mine[:-1] - mine[0] + base)
        base += int(mine[-1] - mine[0])
    offsets.append(np.asarray([base], dtype=np.int64))
    content = pa.chunked_array(contents, type=contents[0].type)
    start, fresh = pieces[0].start, pieces[0].fresh
    logs = [piece.verifier for piece in pieces if piece.verifier is not None]
    share = len(pieces) * (0.5 if logs else 1.0)
    jobs = [
        _Job(scan, content, start, owner, np.concatenate(offsets), first_new, False, _text_bytes(content), share, fresh)
    ]
    if logs:
        verifier = pa.chunked_array(logs, type=logs[0].type)
        keep = None if shown is None else np.flatnonzero(shown[start : start + len(verifier)])
        jobs.append(_Job(scan, verifier, start, owner, None, None, True, _text_bytes(verifier), share, logs=keep))
    return jobs


def _shown_logs(session: Session, index: int, ds: Storage) -> np.ndarray | None:
    """Over dataset `index`'s rows: the row whose verifier log each trial shows (`Session.verifier_output`:
    its last main row with a log). Every episode row of a trial carries its log again; scanning the shown
    one finds what the verifier pane shows, once. None for a streamed (remote) dataset: all its rows."""
    if not ds.local:
        return None
    has_log = np.zeros(ds.num_rows, dtype=bool)
    for piece in ds.scan(conversations=False, verifier=True):
        assert piece.verifier is not None  # asked for
        has_log[piece.start : piece.start + len(piece.verifier)] = pc.is_valid(piece.verifier).to_numpy(
            zero_copy_only=False
        )
    t = session.trials
    trials = np.repeat(np.arange(len(t)), np.diff(t.main_offsets))
    mine = t.dataset[trials] == index
    rows, trials = t.main_rows[mine], trials[mine]
    rows, trials = rows[has_log[rows]], trials[has_log[rows]]
    last = np.ones(len(rows), dtype=bool)
    last[:-1] = trials[1:] != trials[:-1]
    shown = np.zeros(ds.num_rows, dtype=bool)
    shown[rows[last]] = True
    return shown


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


def _take(array: pa.Array | pa.ChunkedArray, positions: np.ndarray) -> pa.Array | pa.ChunkedArray:
    """`array.take(positions)` chunk by chunk (a ChunkedArray's own take first copies every chunk into one)."""
    if isinstance(array, pa.Array):
        return array.take(pa.array(positions))
    ends = np.cumsum([len(chunk) for chunk in array.chunks])
    cuts = np.searchsorted(positions, ends)
    parts, begin, base = [], 0, 0
    for chunk, cut, end in zip(array.chunks, cuts, ends):
        if cut > begin:
            parts.append(chunk.take(pa.array(positions[begin:cut] - base)))
        begin, base = cut, end
    return pa.chunked_array(parts, type=array.type)


def _hits(matches: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Positions of the true values (chunk by chunk: a ChunkedArray's to_numpy imports pandas)."""
    if isinstance(matches, pa.Array):
        return pc.indices_nonzero(matches).to_numpy().astype(np.int64)
    found, base = [], 0
    for chunk in matches.chunks:
        found.append(pc.indices_nonzero(chunk).to_numpy().astype(np.int64) + base)
        base += len(chunk)
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def _text_bytes(array: pa.Array | pa.ChunkedArray) -> int:
    return int(pc.sum(pc.binary_length(array)).as_py() or 0)

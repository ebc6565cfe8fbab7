"""Full-text search over every message (and verifier log) of a session, on mapped Arrow buffers.

A search covers each row's messages new to its trial (a nested-prefix episode row repeats its trial's
earlier messages) and each trial's shown verifier log, once (`search_text`). For a converted dataset
they lie contiguously in its search text file, each distinct text once with the trials it is in: each
batch of it (~32 MB) is one job, scanned zero-copy by RE2 (`pc.find_substring_regex`,
`pc.match_substring_regex`; an escaped literal is ~10x faster than the plain substring kernels), which
releases the GIL, so jobs run on two threads. A job scans each run of messages new to the same trials
(a trial's consecutive messages) as one string (an RE2 call per run, not per message: a common needle
stops at the run's first match), then confirms the message where that first match starts, as a match
spanning two messages is none. RE2 skips ahead with memchr to a literal's first byte, so what
it looks for first is a part of the needle that each match holds (the needle without its surrounding
blanks, a literal from a rare character on, a regex's literal prefix), confirmed whole; only a run
whose first match is not confirmed is scanned message by message past it. A regex with anchors or word
boundaries (its matches depend on where a message ends) is scanned message by message. Hits map to
trials through each run's rows, so the cost follows the distinct bytes, not the number of messages,
trials or row groups.

Other datasets (read from the hub, harbor job folders, a cache that cannot be written) are scanned from
their rows: consecutive pieces of about JOB_BYTES of text as one job, the messages new to each trial
copied out first (all of a `Piece.fresh`). A dataset read from the hub is scanned as it streams in,
row group by row group; while its download runs, a search first waits for the local copy (`waiting`
reports the download's progress).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from .compute import pc
from .dataset import Piece, Storage
from .heap import give_back
from .search_text import SearchText, new_messages, offsets, row_maps, shown_logs, spans

if TYPE_CHECKING:
    from .session import Session

THREADS = 2
"""performance-notes.md: 0.11 s/GB on one thread, 0.06 s/GB on two (two cores)."""
JOB_BYTES = 32 << 20
"""Text scanned by one job: large enough that the per-job work (a kernel call, a future, mapping hits to
trials) is noise, small enough for steady progress and a bounded read-ahead of a streamed scan."""
BUILD_SHARE = 0.5
"""Of a dataset's progress, what writing its search text takes when a search has to (an older cache)."""
_CONTEXT = re.compile(r"[$^]|\\[bBAzZ]")
"""What makes a regex's matches depend on the text around them (anchors, word boundaries)."""
_PLAIN = re.compile(r"[^\\.^$|?*+()\[\]{}]*")
"""A regex's leading characters that match themselves."""
_COMMON = frozenset(" \t\netaoinsrhldcumfpgwy.,:;/-_=\"'()")
"""Characters frequent in text and code: RE2 skips ahead to a literal's first byte with memchr, which
stops at each of these (`exit code` is found faster from its `x`)."""


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
    bytes_scanned: int  # the text the search covers: every row's messages (repeats too) and logs searched
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


@dataclass(frozen=True, slots=True)
class _Needle:
    """What RE2 looks for: `expression` (the whole needle), found by looking for `rough` first."""

    expression: str
    rough: str  # each match of `expression` holds one of `rough`, which RE2 finds faster (see above)
    ignore_case: bool
    runs: bool  # a run of messages may be scanned as one string (no anchors or word boundaries)

    def matches(self, array: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """Positions of the strings of `array` that match."""
        rough = _hits(pc.match_substring_regex(array, self.rough, ignore_case=self.ignore_case))
        if self.rough == self.expression or not len(rough):
            return rough
        exact = pc.match_substring_regex(_take(array, rough), self.expression, ignore_case=self.ignore_case)
        return rough[_hits(exact)]

    def runs_hit(self, text: pa.Array, starts: np.ndarray, runs: bool) -> np.ndarray:
        """The runs of `text` (run r: strings `starts[r]`… up to the next start) holding a string that
        matches; with `runs`, each run is scanned as one string, then the string where its first match
        starts is confirmed (`runs`: the strings are messages, of which a match may span two)."""
        if not (runs and self.runs):
            return np.searchsorted(starts, self.matches(text), side="right") - 1
        bounds = offsets(text)
        ends = np.append(starts[1:], len(text))
        run_bounds = pa.py_buffer(np.ascontiguousarray(bounds[np.append(starts, len(text))]))
        joined = pa.StringArray.from_buffers(len(starts), run_bounds, text.buffers()[2])  # no copy
        at = pc.find_substring_regex(joined, self.rough, ignore_case=self.ignore_case).to_numpy()
        hit = np.flatnonzero(at >= 0)
        where = bounds[starts[hit]].astype(np.int64) + at[hit]
        first = np.clip(np.searchsorted(bounds, where, side="right") - 1, starts[hit], ends[hit] - 1)
        whole = pc.match_substring_regex(text.take(pa.array(first)), self.expression, ignore_case=self.ignore_case)
        confirmed = whole.to_numpy(zero_copy_only=False)
        # a first match spanning messages (or, of `rough`, not the whole needle's): the run's later messages
        begin = first[~confirmed] + 1
        later = spans(begin, ends[hit[~confirmed]] - begin)
        found = later[self.matches(text.take(pa.array(later)))] if len(later) else later
        return np.concatenate([hit[confirmed], np.searchsorted(starts, found, side="right") - 1])


def _text_trials(needle: _Needle, batch: pa.RecordBatch, owner: np.ndarray, runs: bool) -> np.ndarray:
    """The trials (through `owner`, of dataset rows) of the matching texts of a search text batch: each
    text's `rows`, or where null, its run's (the text before's: see `search_text`)."""
    text, lists = batch.column(0), batch.column(1)
    whole = lists.is_valid() if lists.null_count else None
    starts = np.arange(len(lists)) if whole is None else np.flatnonzero(whole.to_numpy(zero_copy_only=False))
    hit = starts[needle.runs_hit(text, starts, runs)]
    bounds = offsets(lists)
    return owner[lists.values.to_numpy()[spans(bounds[hit], bounds[hit + 1] - bounds[hit])]]


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
    download runs, waits for it first, calling `waiting(fraction downloaded)`. A converted dataset
    without its search text (an older cache) has it written first.
    """
    began = time.perf_counter()
    python_regex(pattern, regex, ignore_case)
    expression = pattern if regex else re.escape(pattern)
    try:
        pc.match_substring_regex(pa.array([""]), expression, ignore_case=ignore_case)
    except pa.ArrowInvalid as exc:
        reason = str(exc).removeprefix("Invalid regular expression: ")
        raise ValueError(f"invalid regex {pattern!r}: {reason}") from None
    core = _literal_prefix(pattern) if regex else pattern.strip()
    rough = re.escape(_from_rare(core)) if core else expression
    needle = _Needle(expression, rough, ignore_case, not regex or not _CONTEXT.search(pattern))

    stop = cancelled or (lambda: False)
    if not session.wait_for_download(waiting, stop):
        raise SearchCancelled
    count = len(session.trials)
    trials = np.zeros(count, dtype=bool)
    in_verifier = np.zeros(count, dtype=bool)
    scanned = 0
    done = 0.0  # of the pieces
    total = sum(ds.pieces() for ds in session.datasets)
    pool = ThreadPoolExecutor(THREADS, thread_name_prefix="tracetui-search")
    running: dict[Future[np.ndarray], _Done] = {}

    def report(fraction: float) -> None:
        if progress is not None:
            progress(fraction / total if total else 1.0)

    def collect(finished: Iterable[Future[np.ndarray]]) -> None:
        nonlocal scanned, done
        for future in finished:
            if stop():
                raise SearchCancelled
            job = running.pop(future)
            hit_trials = np.unique(future.result())
            hit_trials = hit_trials[hit_trials >= 0]
            trials[hit_trials] = True
            if job.verifier:
                in_verifier[hit_trials] = True
            scanned += job.bytes
            done += job.share
            report(done)

    def submit(work: Callable[[], np.ndarray], job: _Done) -> None:
        running[pool.submit(work)] = job
        while len(running) > 2 * THREADS:  # bounded read-ahead: a remote scan streams
            collect(wait(running, return_when=FIRST_COMPLETED).done)

    try:
        for index, ds in enumerate(session.datasets):
            owner, first_new = row_maps(session.trials, ds.message_counts, index)
            text, left = _search_text(ds, report, done, stop)
            if text is not None:
                batches = [(batch, False) for batch in text.messages]
                batches += [(batch, True) for batch in text.logs] if verifier else []
                share = left / max(len(batches), 1)
                done += ds.pieces() - share * len(batches)
                scanned += _covered(ds, verifier)
                for batch, logs in batches:
                    submit(partial(_text_trials, needle, batch, owner, not logs), _Done(logs, 0, share))
                continue
            shown = shown_logs(session.trials, index, ds) if verifier else None
            for pieces in _runs(ds.scan(conversations=True, verifier=verifier, cancelled=stop)):
                if stop():
                    raise SearchCancelled
                for job in _jobs(pieces, needle, owner, first_new, shown):
                    submit(job.run, job.done)
        while running:
            collect(wait(running, return_when=FIRST_COMPLETED).done)
    except InterruptedError:  # a remote scan stopped between row groups, or a search text's writing
        raise SearchCancelled from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if session.remote:  # the text streamed from the hub, freed now: else held for the rest of the session
            give_back()  # (130 MB after a search of 400,000 rows)
    return SearchResult(
        pattern=pattern,
        regex=regex,
        ignore_case=ignore_case,
        trials=trials,
        in_verifier=in_verifier,
        matched_trials=int(trials.sum()),
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
class _Done:
    """What a finished job adds: whether its hits are verifier logs, the bytes it covers, its share of
    the pieces (for progress)."""

    verifier: bool
    bytes: int
    share: float


@dataclass(frozen=True, slots=True)
class _Job:
    """Consecutive rows' message contents or verifier logs of a dataset scanned from its rows."""

    needle: _Needle
    array: pa.Array | pa.ChunkedArray
    start: int  # dataset row of the first row
    owner: np.ndarray  # dataset row -> session trial (-1: none)
    bounds: np.ndarray | None  # each row's first message in `array`, and the end (None: one log per row)
    first_new: np.ndarray | None  # dataset row -> its first message new to its trial (None: all are)
    logs: np.ndarray | None  # the logs to scan (positions in `array`; None: all)
    done: _Done

    def run(self) -> np.ndarray:
        """The trials of the matching messages or logs (-1: a row no trial owns)."""
        if self.bounds is None:
            positions = self.logs if self.logs is not None else np.arange(len(self.array))
            rows = self.start + positions
        else:
            positions, rows = new_messages(self.start, self.bounds, self.owner, self.first_new)
        every = len(positions) == len(self.array)
        found = self.needle.matches(self.array if every else _take(self.array, positions))
        return self.owner[rows[found]]


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
        bounds = offsets(piece.conversations)
        content = piece.conversations.values.field("content")
        total += _span(content, int(bounds[0]), int(bounds[-1]))
    if piece.verifier is not None and len(piece.verifier):
        total += _span(piece.verifier, 0, len(piece.verifier))
    return total


def _span(strings: pa.Array, first: int, end: int) -> int:
    """Bytes of strings [first, end) of a string or binary array, from its offsets buffer."""
    if end <= first:
        return 0
    bounds = offsets(strings)
    return int(bounds[end] - bounds[first])


def _jobs(
    pieces: list[Piece],
    needle: _Needle,
    owner: np.ndarray,
    first_new: np.ndarray,
    shown: np.ndarray | None = None,
) -> list[_Job]:
    """A job for the run's message contents and one for its verifier logs (when searched): of the logs,
    only the rows `shown` marks (None: all)."""
    contents, bounds, base = [], [], 0
    for piece in pieces:
        conversation = piece.conversations
        assert conversation is not None  # the search asks for them
        mine = offsets(conversation).astype(np.int64)
        contents.append(conversation.values.field("content").slice(mine[0], mine[-1] - mine[0]))
        bounds.append(mine[:-1] - mine[0] + base)
        base += int(mine[-1] - mine[0])
    bounds.append(np.asarray([base], dtype=np.int64))
    content = pa.chunked_array(contents, type=contents[0].type)
    start = pieces[0].start
    new = None if pieces[0].fresh else first_new
    logs = [piece.verifier for piece in pieces if piece.verifier is not None]
    share = len(pieces) * (0.5 if logs else 1.0)
    done = _Done(False, _text_bytes(content), share)
    jobs = [_Job(needle, content, start, owner, np.concatenate(bounds), new, None, done)]
    if logs:
        verifier = pa.chunked_array(logs, type=logs[0].type)
        keep = None if shown is None else np.flatnonzero(shown[start : start + len(verifier)])
        jobs.append(_Job(needle, verifier, start, owner, None, None, keep, _Done(True, _text_bytes(verifier), share)))
    return jobs


def _search_text(
    ds: Storage, report: Callable[[float], None], done: float, stop: Callable[[], bool]
) -> tuple[SearchText | None, float]:
    """`ds.search_text()`, and what is left of the dataset's share of the progress (`ds.pieces()`) for
    scanning it: half when the search writes it first (`report(done + pieces written)` meanwhile)."""
    weight = ds.pieces()
    built = False

    def building(fraction: float) -> None:
        nonlocal built
        built = True
        report(done + BUILD_SHARE * weight * fraction)

    return ds.search_text(building, stop), weight * (1 - BUILD_SHARE if built else 1.0)


def _literal_prefix(pattern: str) -> str:
    """Characters each match of the regex `pattern` begins with ("" when unsure: an alternation, a flag
    group, an escape or a quantifier at the start)."""
    if "|" in pattern:
        return ""
    plain = _PLAIN.match(pattern)
    prefix = plain.group() if plain else ""
    quantified = pattern[len(prefix) : len(prefix) + 1] in ("?", "*", "{")
    return prefix[:-1] if quantified else prefix


def _from_rare(literal: str) -> str:
    """The end of `literal` from its first rare character (with three more after it), when it begins with a
    frequent one: what each occurrence of `literal` holds, and RE2 finds faster."""
    if literal[:1] in _COMMON:
        for start in range(1, len(literal) - 3):
            if literal[start] not in _COMMON:
                return literal[start:]
    return literal


def _covered(ds: Storage, verifier: bool) -> int:
    """The text a search of a converted dataset covers, from its metadata: every row's messages (the
    repeated ones too), and its verifier logs when `verifier`."""
    names = ("n_bytes", "verifier_bytes") if verifier else ("n_bytes",)
    return sum(int(pc.sum(ds.meta.column(name)).as_py() or 0) for name in names)


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

"""Export trials with their original columns plus the labels and notes users gave them (and the answers
to the questions asked of them); one trial as Markdown.

Rows are re-read from the original files, because the conversion cache keeps only what the viewer
needs; a source that makes its rows itself (harbor job folders) writes them (`Storage.makes_rows`). Reads go in bounded batches (parquet row groups that hold no wanted row are skipped), and the
output is written to a temporary file renamed into place at the end: a failed or cancelled export leaves
nothing half-written behind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from ..paths import write_atomically
from ..trace.model import Message
from ..trace.sanitize import sanitize
from ..verifier import parse_verifier, verdict_line
from .convert import BATCH_BYTES
from .dataset import Storage
from .errors import SourceError
from .files import READ_ERRORS, arrow_batches, arrow_reader, json_rows
from .session import Progress, Session
from .utf8 import valid_batch

LABELS_COLUMN = "tracetui_labels"
NOTE_COLUMN = "tracetui_note"
FORMATS = (".jsonl", ".parquet", ".csv")
_BACKTICKS = re.compile("`+")
_ADDED = pa.schema([(LABELS_COLUMN, pa.list_(pa.string())), (NOTE_COLUMN, pa.string())])

Piece: TypeAlias = "pa.RecordBatch | list[dict[str, Any]]"
"""Some original rows: an Arrow batch (parquet, Arrow) or the decoded objects (JSON, kept as they are)."""


@dataclass(slots=True)
class _FilePart:
    """The wanted rows of one original file: file-local row numbers (rising) and their trials."""

    path: Path
    expected_rows: int
    rows: np.ndarray
    trials: np.ndarray

    @property
    def count(self) -> int:
        return len(self.rows)


@dataclass(slots=True)
class _RowsPart:
    """The wanted trials of a source that makes its rows itself (harbor job folders: the rows harbor's
    exporter would write), as (trial id, position in the source) pairs."""

    dataset: Storage
    trials: list[tuple[int, int]]
    count: int

    def pieces(self) -> Iterator[tuple[Piece, np.ndarray]]:
        for trial, position in self.trials:
            rows = self.dataset.exported_rows(position) or []
            if rows:
                yield rows, np.full(len(rows), trial, dtype=np.int64)

    def schema(self) -> pa.Schema:
        """From one trial per agent (each agent writes its own tool definitions: their type)."""
        seen: dict[object, list[dict[str, Any]]] = {}
        for _, position in self.trials:
            rows = self.dataset.exported_rows(position) or []
            if rows and rows[0]["agent"] not in seen:
                seen[rows[0]["agent"]] = rows
        return _unify((_json_table(rows).schema for rows in seen.values()), [])


def export_trials(
    session: Session,
    trial_ids: Iterable[int],
    out: Path,
    labels: dict[int, set[str]] | None = None,
    notes: dict[int, str] | None = None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    columns: Mapping[str, Mapping[int, str]] | None = None,
) -> int:
    """Write every row of the trials to `out` (.jsonl, .parquet or .csv by its suffix) with their original
    columns plus `tracetui_labels`, `tracetui_note` and a text column per entry of `columns` (column
    name -> trial -> value: a question's answers). Returns the rows written; 0 when cancelled (then
    nothing is written). Raises SourceError for an unknown suffix, a vanished original or a write error."""
    out = Path(out)
    writer_type = _WRITERS.get(out.suffix.lower())
    if writer_type is None:
        raise SourceError(f"{out.name}: export writes {', '.join(FORMATS)} files (by the suffix)")
    labels, notes, extra = labels or {}, notes or {}, dict(columns or {})
    added = pa.schema([*_ADDED, *((name, pa.string()) for name in extra)])
    parts = _plan(session, trial_ids)
    total = sum(part.count for part in parts)

    def write(temporary: Path) -> None:
        schema = _unify((_schema(part) for part in parts), added.names) if writer_type.needs_schema else None
        writer = writer_type(temporary, schema, added)
        try:
            done = 0
            for part in parts:
                for piece, owners in _pieces(part):
                    if cancelled is not None and cancelled():
                        raise _Cancelled
                    values: list[list[Any]] = [
                        [sorted(labels.get(int(t), ())) for t in owners],
                        [notes.get(int(t)) or None for t in owners],
                        *([column.get(int(t)) for t in owners] for column in extra.values()),
                    ]
                    writer.write(piece, values)
                    done += len(owners)
                    if progress is not None:
                        progress(done / max(total, 1), f"{done:,}/{total:,} rows")
        finally:
            writer.close()

    try:
        write_atomically(out, write)
    except _Cancelled:
        return 0
    except OSError as exc:
        raise SourceError(f"{out}: cannot write ({exc.strerror or exc})") from None
    return total


class _Cancelled(Exception):
    """The export was cancelled: `write_atomically` removes what was written."""


def without_rows(session: Session, trial_ids: Iterable[int]) -> list[int]:
    """The trials an export writes no row for: a harbor trial still running, or whose result cannot be
    read (harbor's exporter leaves them out too)."""
    out = []
    for trial in trial_ids:
        dataset = session.datasets[int(session.trials.dataset[trial])]
        if dataset.makes_rows and not dataset.exported_count(session.local_position(int(trial))):
            out.append(int(trial))
    return out


def _plan(session: Session, trial_ids: Iterable[int]) -> list[_FilePart | _RowsPart]:
    t = session.trials
    wanted = np.zeros(len(t), dtype=bool)
    wanted[np.fromiter(trial_ids, dtype=np.int64)] = True
    parts: list[_FilePart | _RowsPart] = []
    for index, ds in enumerate(session.datasets):
        if ds.makes_rows:
            chosen = [
                (int(trial), session.local_position(int(trial)))
                for trial in np.nonzero(wanted & (t.dataset == index))[0]
            ]
            if chosen:
                parts.append(_RowsPart(ds, chosen, sum(ds.exported_count(p) for _, p in chosen)))
            continue
        rows, owners = t.rows_of_dataset(index)
        keep = wanted[owners]
        if not keep.any():
            continue
        rows, owners = rows[keep], owners[keep]
        file_of = ds.meta.column("file").to_numpy()  # rows come file by file, in file order
        starts = np.searchsorted(file_of, np.arange(len(ds.files) + 1))
        for number, name in enumerate(ds.files):
            lo, hi = np.searchsorted(rows, starts[number : number + 2])
            if hi > lo:
                path = Path(name)
                if not path.is_file():
                    raise SourceError(
                        f"{path}: the original file is gone (or not downloaded yet); export re-reads the original rows"
                    )
                count = int(starts[number + 1] - starts[number])
                parts.append(_FilePart(path, count, rows[lo:hi] - starts[number], owners[lo:hi]))
    return parts


def _pieces(part: _FilePart | _RowsPart) -> Iterator[tuple[Piece, np.ndarray]]:
    """(rows, their trials) of one file, a bounded batch at a time, in file order."""
    if isinstance(part, _RowsPart):
        yield from part.pieces()
        return
    try:
        if part.path.suffix == ".parquet":
            yield from _parquet_pieces(part)
        elif part.path.suffix == ".arrow":
            with arrow_reader(part.path) as reader:
                yield from _take(part, arrow_batches(reader))
        else:
            rows = json_rows(part.path).rows
            _check_count(part, len(rows))
            yield [rows[i] for i in part.rows], part.trials
    except READ_ERRORS as exc:
        raise _unreadable(part.path, exc) from None


def _parquet_pieces(part: _FilePart) -> Iterator[tuple[Piece, np.ndarray]]:
    parquet = pq.ParquetFile(part.path)
    meta = parquet.metadata
    _check_count(part, meta.num_rows)
    start = 0
    for group in range(meta.num_row_groups):
        rg = meta.row_group(group)
        end = start + rg.num_rows
        lo, hi = np.searchsorted(part.rows, [start, end])
        if hi > lo:
            size = int(max(1, min(4096, BATCH_BYTES // max(rg.total_byte_size / max(rg.num_rows, 1), 1))))
            sub = _FilePart(part.path, rg.num_rows, part.rows[lo:hi] - start, part.trials[lo:hi])
            yield from _take(sub, parquet.iter_batches(batch_size=size, row_groups=[group]))
        start = end


def _take(part: _FilePart, batches: Iterable[pa.RecordBatch]) -> Iterator[tuple[Piece, np.ndarray]]:
    """The wanted rows of consecutive batches that together hold the part's rows."""
    start = 0
    for batch in batches:
        lo, hi = np.searchsorted(part.rows, [start, start + batch.num_rows])
        if hi > lo:
            yield valid_batch(batch.take(pa.array(part.rows[lo:hi] - start))), part.trials[lo:hi]
        start += batch.num_rows
    _check_count(part, start)


def _unreadable(path: Path, exc: Exception) -> SourceError:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else (str(exc).splitlines() or [""])[0][:200]
    return SourceError(f"{path.name}: cannot be read ({reason})")


def _check_count(part: _FilePart, rows: int) -> None:
    if rows != part.expected_rows:
        raise SourceError(
            f"{part.path.name}: changed since it was opened ({rows:,} rows, not {part.expected_rows:,}); reopen it"
        )


# --- column types -------------------------------------------------------------------------------


def _schema(part: _FilePart | _RowsPart) -> pa.Schema:
    if isinstance(part, _RowsPart):
        return part.schema()
    try:
        if part.path.suffix == ".parquet":
            return pq.read_schema(part.path)
        if part.path.suffix == ".arrow":
            with arrow_reader(part.path) as reader:
                return reader.schema
    except READ_ERRORS as exc:
        raise _unreadable(part.path, exc) from None
    piece, _ = next(_pieces(part))
    return _json_table(piece).schema


def _unify(schemas: Iterable[pa.Schema], added: list[str]) -> pa.Schema:
    """One schema for every file: types promoted where Arrow can, JSON text where they conflict (the
    `added` columns, which the export writes itself, left out)."""
    types: dict[str, pa.DataType] = {}
    for schema in schemas:
        for field in schema:
            have = types.get(field.name)
            if field.name in added or have == field.type or pa.types.is_null(field.type):
                types.setdefault(field.name, field.type)
                continue
            if have is None or pa.types.is_null(have):
                types[field.name] = field.type
                continue
            try:
                both = [pa.schema([(field.name, have)]), pa.schema([(field.name, field.type)])]
                types[field.name] = pa.unify_schemas(both, promote_options="permissive").field(0).type
            except (pa.ArrowException, NotImplementedError):
                types[field.name] = pa.string()
    return pa.schema([(name, kind) for name, kind in types.items() if name not in added])


def _json_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Decoded JSON rows as a table; a column Arrow cannot type (mixed shapes) becomes JSON text."""
    names = list(dict.fromkeys(name for row in rows for name in row))
    columns = {}
    for name in names:
        values = [row.get(name) for row in rows]
        try:
            columns[name] = pa.array(values)
        except (pa.ArrowException, TypeError, OverflowError):
            columns[name] = pa.array([_text(v) for v in values], pa.string())
    return pa.table(columns)


def _conform(piece: Piece, schema: pa.Schema) -> list[pa.Array]:
    table = _json_table(piece) if isinstance(piece, list) else pa.Table.from_batches([piece])
    columns = []
    for field in schema:
        if field.name not in table.column_names:
            columns.append(pa.nulls(table.num_rows, field.type))
            continue
        column = table.column(field.name).combine_chunks()
        if column.type != field.type:
            try:
                column = column.cast(field.type)
            except (pa.ArrowException, NotImplementedError):
                values = column.to_pylist()
                text = pa.types.is_string(field.type) or pa.types.is_large_string(field.type)
                column = pa.array([_text(v) for v in values] if text else values, field.type)
        columns.append(column)
    return columns


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return orjson.dumps(value, default=_json_default).decode()


def _json_default(value: object) -> str:
    """What orjson cannot encode by itself: binaries as text, the rest (decimals, durations) by str."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


# --- writers ------------------------------------------------------------------------------------


class _Jsonl:
    """One JSON object per row; JSON originals are written back as they were decoded."""

    needs_schema = False

    def __init__(self, path: Path, schema: pa.Schema | None, added: pa.Schema) -> None:
        self._file = open(path, "wb")  # noqa: SIM115 - stays open across pieces; close() closes it
        self._names = added.names

    def write(self, piece: Piece, values: list[list[Any]]) -> None:
        rows = piece if isinstance(piece, list) else piece.to_pylist()
        for row, *cells in zip(rows, *values):
            line = {**row, **dict(zip(self._names, cells))}
            self._file.write(orjson.dumps(line, default=_json_default, option=orjson.OPT_APPEND_NEWLINE))

    def close(self) -> None:
        self._file.close()


class _Parquet:
    needs_schema = True

    def __init__(self, path: Path, schema: pa.Schema, added: pa.Schema) -> None:
        self._schema = schema
        self._added = added
        self._writer = pq.ParquetWriter(path, pa.unify_schemas([schema, added]))

    def write(self, piece: Piece, values: list[list[Any]]) -> None:
        columns = _conform(piece, self._schema) + [pa.array(v, f.type) for v, f in zip(values, self._added)]
        self._writer.write_table(pa.Table.from_arrays(columns, schema=self._writer.schema))

    def close(self) -> None:
        self._writer.close()


class _Csv:
    """Nested columns as JSON text; the labels `;`-joined."""

    needs_schema = True

    def __init__(self, path: Path, schema: pa.Schema, added: pa.Schema) -> None:
        self._schema = schema
        flat = [(f.name, f.type if _csv_ready(f.type) else pa.string()) for f in schema]
        self._flat = pa.schema(flat + [(name, pa.string()) for name in added.names])
        self._writer = pa_csv.CSVWriter(str(path), self._flat)

    def write(self, piece: Piece, values: list[list[Any]]) -> None:
        columns = [
            column if _csv_ready(column.type) else pa.array([_text(v) for v in column.to_pylist()], pa.string())
            for column in _conform(piece, self._schema)
        ]
        columns += [
            pa.array([";".join(v) if isinstance(v, list) else v for v in column], pa.string()) for column in values
        ]
        self._writer.write_table(pa.Table.from_arrays(columns, schema=self._flat))

    def close(self) -> None:
        self._writer.close()


def _csv_ready(kind: pa.DataType) -> bool:
    t = pa.types
    return any(
        check(kind)
        for check in (
            t.is_boolean,
            t.is_integer,
            t.is_floating,
            t.is_string,
            t.is_large_string,
            t.is_decimal,
            t.is_timestamp,
            t.is_date,
            t.is_time,
        )
    )


_WRITERS: dict[str, type[_Jsonl | _Parquet | _Csv]] = {".jsonl": _Jsonl, ".parquet": _Parquet, ".csv": _Csv}


# --- one trial as Markdown ----------------------------------------------------------------------


def trial_markdown(session: Session, trial: int) -> str:
    """One trial for a bug report: title, metadata table, result, verifier summary, then the
    conversation (and sub-agent conversations) as fenced blocks. Control characters are removed."""
    info = session.info(trial)
    history = session.history(trial)
    log = session.verifier_output(trial)
    report = parse_verifier(log)
    out = [f"# {_inline(info.task or info.trial_name or f'trial {trial}')}", ""]
    fields = [
        ("dataset", info.dataset),
        ("trial", info.trial_name),
        ("task", info.task),
        ("model", info.model),
        ("agent", info.agent),
        ("provider", info.provider),
        ("run", info.run_id),
        ("date", info.date),
        ("result", info.result or ""),
        ("outcome", info.outcome),
        ("episodes", str(info.episodes)),
        ("messages", str(info.messages)),
    ]
    out += ["| field | value |", "|---|---|"]
    out += [f"| {name} | {_inline(value)} |" for name, value in fields if value]
    out += ["", "## Result", ""]
    if log is None:
        verifier = "the verifier has not run yet" if info.outcome == "running" else "the verifier did not run"
        out.append(f"{info.outcome.upper()} · {_inline(info.result or 'no result')} · {verifier}")
    else:
        out.append(_inline(verdict_line(info.outcome, info.result, report)))
        failures = {f.test: f for f in report.failures}
        for name in report.failed_tests:
            failure = failures.get(name)
            assertion = f": {_inline(failure.assertion)}" if failure and failure.assertion else ""
            out.append(f"- `{_inline(name)}`{assertion}")
    out += ["", "## Conversation", ""]
    out += _messages(history.messages)
    for sub in history.subagents:
        out += [f"## Sub-agent: {_inline(sub.trace_source)}", ""]
        out += _messages(sub.messages)
    return "\n".join(out).rstrip("\n") + "\n"


def _messages(messages: Iterable[Message]) -> list[str]:
    out = []
    for message in messages:
        restart = " · after a context summarization" if message.restart else ""
        out += [f"### {message.index + 1}. {_inline(message.role)} · episode {message.episode}{restart}", ""]
        out += [_fenced(sanitize(message.content)), ""]
    return out


def _fenced(text: str) -> str:
    """A code block whose fence is longer than any backtick run inside, so nothing can close it early."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


def _inline(text: str) -> str:
    """Text for a heading or a table cell: one line, no control characters, `|` escaped."""
    return " ".join(sanitize(text).split()).replace("|", "\\|")

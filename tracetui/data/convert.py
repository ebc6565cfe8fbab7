"""Convert data files once into two memory-mappable Arrow IPC files: a small metadata file and a data file.

The metadata file holds only the short columns plus per-row sizes, so start-up reads a few MB whatever
the size of the text. The data file holds the normalized conversations and verifier logs in the IPC
*file* format, whose footer lets us fetch one batch without touching the others (cold page cache too).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from ..trace.harness import HANDOFF_PROMPT
from .compute import pc
from .errors import SourceError, first_line
from .files import READ_ERRORS, arrow_batches, arrow_reader, json_rows
from .threads import streamed
from .utf8 import valid_utf8

HARBOR_COLUMNS = (
    "agent",
    "model",
    "model_provider",
    "date",
    "task",
    "episode",
    "run_id",
    "trial_name",
    "result",
    "verifier_output",
    "trace_source",
)
"""The string columns of a `harbor traces export`, in its order (after `conversations`)."""
META_COLUMNS = tuple(name for name in HARBOR_COLUMNS if name != "verifier_output")
CONVERSATION_COLUMNS = ("conversations", "conversations_sharegpt", "messages")
MESSAGE_TYPE = pa.struct([("role", pa.string()), ("content", pa.string())])
CONVERSATION_TYPE = pa.list_(MESSAGE_TYPE)
DATA_SCHEMA = pa.schema([("conversation", CONVERSATION_TYPE), ("verifier_output", pa.string())])
SHAREGPT_ROLES = {"human": "user", "gpt": "assistant", "system": "system", "tool": "tool", "function": "tool"}
BATCH_BYTES = 64 << 20
"""Upper bound of text per converted batch: bounds the memory of conversion and of one batch read."""
READ_AHEAD = 1
"""Batches read from their files on a thread of their own ahead of the one being normalized, measured and
written: parquet's decoding (without the GIL) goes on beside the rest, 40% of a 400,000-row conversion."""

_SUB_AGENT_FILE = re.compile(r"\.(summarization-\d+-(?:summary|questions|answers))\.")
EPISODE_NUMBER = r"^(?:\D*[A-Za-z_][-_ ]?|\s*)(?P<n>\d{1,9})\s*$"
"""`episode-K` (or `K`, `episode_K`…) with K below 10^9; anything else (`-1`, `episode-99999999999`, a
100,000-digit number, `0.5`) is no episode number: the row is placed by its conversation instead."""
PREFIX_SAMPLE = 2048
"""Bytes from the start of a row's second message that its prefix digest reads (with the end of the
first message and both lengths): enough to tell conversations apart, and bounded per row."""

Progress = Callable[[float, str], None]


def check_files(files: tuple[Path, ...]) -> int | None:
    """Cheap up-front validation from file footers: readable, has a conversation column, has rows.

    Returns the row count when the footers tell it (parquet and Arrow), None for JSON.
    """
    rows = 0
    for file in files:
        if file.suffix == ".parquet":
            try:
                parquet = pq.ParquetFile(file)
            except READ_ERRORS as exc:
                raise SourceError(f"{file.name}: not a readable parquet file ({first_line(exc)})") from None
            names = parquet.schema_arrow.names  # not `metadata.schema`: see `hub_reads.described`
            rows += parquet.metadata.num_rows
        elif file.suffix == ".arrow":
            try:
                with arrow_reader(file) as reader:
                    names = reader.schema.names
                    rows += sum(batch.num_rows for batch in arrow_batches(reader))
            except READ_ERRORS as exc:
                raise SourceError(f"{file.name}: not a readable Arrow file ({first_line(exc)})") from None
        else:
            return None
        if not any(name in names for name in CONVERSATION_COLUMNS):
            raise SourceError(
                f"{file.name}: no conversation column (looked for {', '.join(CONVERSATION_COLUMNS)};"
                f" found {', '.join(names[:8]) or 'no columns'})"
            )
    if rows == 0:
        raise SourceError("the dataset has 0 rows")
    return rows


def convert(files: tuple[Path, ...], out_dir: Path, progress: Progress | None = None) -> None:
    """Write `meta.arrow` and `data.arrow` for `files` into `out_dir` (which must exist)."""
    sizes = [max(f.stat().st_size, 1) for f in files]
    before = np.cumsum([0, *sizes])  # bytes of the files before each
    total = float(before[-1])
    meta_batches: list[pa.RecordBatch] = []
    batch_starts: list[int] = []
    notes: list[str] = []
    rows = 0

    def read() -> Iterator[tuple[int, float, pa.RecordBatch]]:
        for file_index, file in enumerate(files):
            for fraction, batch in _read_file(file, notes):
                yield file_index, fraction, batch

    with pa.OSFile(str(out_dir / "data.arrow"), "wb") as sink, pa.ipc.new_file(sink, DATA_SCHEMA) as writer:
        for file_index, fraction, batch in streamed(read(), READ_AHEAD, "tracetui-convert"):
            data = data_batch(batch)
            writer.write_batch(data)
            meta_batches.append(meta_batch(batch, {**text_sizes(data), **prefixes(data)}, file_index))
            batch_starts.append(rows)
            rows += batch.num_rows
            if progress is not None:
                done = before[file_index] + fraction * sizes[file_index]
                progress(float(done) / total, f"{files[file_index].name}: {rows:,} rows")
    if rows == 0:
        raise SourceError(f"{_names(files)}: no rows")
    write_meta(
        out_dir / "meta.arrow",
        meta_batches,
        {"rows": rows, "batch_starts": batch_starts, "files": [str(f) for f in files], "notes": notes},
    )


def _names(files: tuple[Path, ...]) -> str:
    return files[0].name if len(files) == 1 else f"{files[0].parent} ({len(files)} files)"


def write_meta(path: Path, batches: list[pa.RecordBatch], manifest: dict[str, Any]) -> None:
    """The metadata file: `meta_table(batches, manifest)` (which takes the batches over)."""
    meta = meta_table(batches, manifest)
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, meta.schema) as writer:
        writer.write_table(meta)


def meta_table(batches: list[pa.RecordBatch], manifest: dict[str, Any]) -> pa.Table:
    """Every row's short columns, with `manifest` in the schema (each batch's own dictionaries unified:
    codes in order of first appearance, as one encoding of the whole would give).

    Takes the batches over (the list is emptied) and makes the table a column at a time, each column's
    batches dropped once it is made: the whole was held three times at once (the batches, their unified
    codes, the table): ~30 MB more at the end of a 400,000-row hub dataset's metadata read. What a
    column's batches freed goes back at once: pyarrow's pool keeps it, and cannot reuse a few thousand
    small pieces for the next column's one large one (~40 MB more at that moment)."""
    pieces = pa.Table.from_batches(batches)
    batches.clear()
    columns = {}
    for name in pieces.column_names:
        columns[name] = pieces.select([name]).unify_dictionaries().column(0).combine_chunks()
        pieces = pieces.drop_columns([name])
        pa.default_memory_pool().release_unused()
    return pa.table(columns).replace_schema_metadata({b"tracetui": json.dumps(manifest).encode()})


def data_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """A batch of source rows as the data file holds them: normalized conversations and verifier logs."""
    return pa.record_batch(
        [normalize_conversations(batch), _string_column(batch, "verifier_output")], schema=DATA_SCHEMA
    )


def _read_file(file: Path, notes: list[str]) -> Iterator[tuple[float, pa.RecordBatch]]:
    """Yield (fraction of the file done, batch) in batches of bounded size; what was skipped (bad JSON
    Lines lines) goes to `notes`, one line each."""
    try:
        if file.suffix == ".parquet":
            yield from _read_parquet(file)
        elif file.suffix == ".arrow":
            with arrow_reader(file) as reader:
                batches = list(arrow_batches(reader))
                for i, batch in enumerate(batches):
                    for piece in _split_batch(batch):
                        yield (i + 1) / len(batches), piece
        else:
            yield from _read_json(file, notes)
    except READ_ERRORS as exc:
        raise SourceError(f"{file.name}: cannot be read ({first_line(exc)})") from None


def _read_parquet(file: Path) -> Iterator[tuple[float, pa.RecordBatch]]:
    """A file's rows in batches of up to BATCH_BYTES: a large row group split, runs of small ones read
    as one (each batch costs ~2 ms to measure and describe whatever its size, and a 400,000-row dataset
    written in row groups of ~95 rows made 4,240 of them)."""
    parquet = pq.ParquetFile(file)
    names = parquet.schema_arrow.names
    wanted = [n for n in (*META_COLUMNS, "verifier_output") if n in names]
    wanted.append(next(n for n in CONVERSATION_COLUMNS if n in names))
    groups = [parquet.metadata.row_group(group) for group in range(parquet.metadata.num_row_groups)]
    runs: list[list[int]] = []
    run_bytes = 0
    for group, rg in enumerate(groups):
        if not runs or run_bytes + rg.total_byte_size > BATCH_BYTES:
            runs.append([])
            run_bytes = 0
        runs[-1].append(group)
        run_bytes += rg.total_byte_size
    for run in runs:
        row_bytes = sum(groups[g].total_byte_size for g in run) / max(sum(groups[g].num_rows for g in run), 1)
        batch_size = int(max(1, min(4096, BATCH_BYTES // max(row_bytes, 1))))
        for batch in parquet.iter_batches(batch_size=batch_size, row_groups=run, columns=wanted):
            yield (run[-1] + 1) / len(groups), batch


def _split_batch(batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    rows = max(1, int(batch.num_rows * BATCH_BYTES / max(batch.nbytes, 1)))
    for start in range(0, batch.num_rows, rows):
        yield batch.slice(start, rows)


def _read_json(file: Path, notes: list[str]) -> Iterator[tuple[float, pa.RecordBatch]]:
    """A JSON list of rows, or JSON Lines; rows become batches with conversations normalized in Python."""
    found = json_rows(file)
    rows = found.rows
    note = found.note()
    if note is not None:
        notes.append(f"{file.name}: {note}")
    sub_agent = _SUB_AGENT_FILE.search(file.name)
    if sub_agent:  # Harbor names sub-agent exports `<trial>.summarization-N-<kind>.traces.json`
        for row in rows:
            row.setdefault("trace_source", sub_agent.group(1))
    if rows and not any(any(c in r for c in CONVERSATION_COLUMNS) for r in rows):
        raise SourceError(f"{file.name}: no conversation column (looked for {', '.join(CONVERSATION_COLUMNS)})")
    step = 256
    for start in range(0, len(rows), step):
        chunk = rows[start : start + step]
        columns = {name: [_as_text(r.get(name)) for r in chunk] for name in (*META_COLUMNS, "verifier_output")}
        conv_name = next((c for c in CONVERSATION_COLUMNS if any(c in r for r in chunk)), CONVERSATION_COLUMNS[0])
        columns[conv_name] = pa.array([_python_conversation(r.get(conv_name)) for r in chunk], CONVERSATION_TYPE)
        batch = pa.record_batch(
            {k: v if isinstance(v, pa.Array) else pa.array(v, pa.string()) for k, v in columns.items()}
        )
        yield min(1.0, (start + step) / len(rows)), batch


def normalize_conversations(batch: pa.RecordBatch) -> pa.Array:
    """The batch's conversation column as list<struct<role, content>>, whatever shape it came in."""
    name = next((n for n in CONVERSATION_COLUMNS if n in batch.schema.names), None)
    if name is None:
        return pa.nulls(batch.num_rows, CONVERSATION_TYPE)
    column = valid_utf8(batch.column(name))
    kind = column.type
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        item = kind.value_type
        if pa.types.is_struct(item):
            fields = {item.field(i).name for i in range(item.num_fields)}
            text_like = ("content" in fields and _is_text(item.field("content").type)) or (
                "value" in fields and _is_text(item.field("value").type)
            )
            if text_like and ("role" in fields or "from" in fields):
                return _rebuild_struct_list(column, fields)
    if pa.types.is_null(kind):
        return pa.nulls(batch.num_rows, CONVERSATION_TYPE)
    return pa.array([_python_conversation(v) for v in column.to_pylist()], CONVERSATION_TYPE)


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)


def _rebuild_struct_list(column: pa.Array, fields: set[str]) -> pa.Array:
    """Fast path: rename/cast the struct children without touching the text in Python."""
    values = column.values
    if "role" in fields:
        role = values.field("role").cast(pa.string())
    else:
        role = values.field("from").cast(pa.string())
        mapping = pa.array(list(SHAREGPT_ROLES), pa.string())
        index = pc.index_in(role, value_set=mapping)
        mapped = pc.take(pa.array(list(SHAREGPT_ROLES.values()), pa.string()), index)
        role = pc.coalesce(mapped, role)
    content = values.field("content" if "content" in fields else "value").cast(pa.string())
    role = pc.fill_null(role, "unknown")
    content = pc.fill_null(content, "")
    messages = pa.StructArray.from_arrays([role, content], fields=list(MESSAGE_TYPE))
    offsets = column.offsets.cast(pa.int32())
    return pa.ListArray.from_arrays(offsets, messages, type=CONVERSATION_TYPE, mask=column.is_null())


def _python_conversation(value: object) -> list[dict[str, Any]] | None:
    """Slow path for odd shapes: JSON strings, content as a list of parts, sharegpt dicts, bare strings."""
    if value is None:
        return None
    if isinstance(value, (bytes, str)):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return [{"role": "unknown", "content": _as_text(value) or ""}]
    if isinstance(value, dict):
        value = value.get("messages") or value.get("conversations") or [value]
    if not isinstance(value, list):
        return [{"role": "unknown", "content": _as_text(value) or ""}]
    messages = []
    for item in value:
        if isinstance(item, dict):
            role = item.get("role") or SHAREGPT_ROLES.get(str(item.get("from")), item.get("from")) or "unknown"
            content = item.get("content", item.get("value"))
            messages.append({"role": str(role), "content": _content_text(content)})
        else:
            messages.append({"role": "unknown", "content": _content_text(item)})
    return messages


def _content_text(content: object) -> str:
    """Message content as text: a list of parts keeps its text parts and names the others."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict) and part.get("type"):
                parts.append(f"[{part['type']} part]")
            else:
                parts.append(_as_text(part) or "")
        return "\n".join(parts)
    return _as_text(content) or ""


def _as_text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def _string_column(batch: pa.RecordBatch, name: str) -> pa.Array:
    if name not in batch.schema.names:
        return pa.nulls(batch.num_rows, pa.string())
    column = valid_utf8(batch.column(name))
    try:
        return column.cast(pa.string())
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        return pa.array([_as_text(v) for v in column.to_pylist()], pa.string())


def text_sizes(data: pa.RecordBatch) -> dict[str, np.ndarray]:
    """Per-row message counts and text bytes of a data batch, computed on its buffers (no Python loop)."""
    conversation, verifier = data.column(0), data.column(1)
    n_messages = pc.fill_null(pc.list_value_length(conversation), 0).to_numpy(zero_copy_only=False)
    offsets = conversation.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    lengths = pc.fill_null(pc.binary_length(conversation.values.field("content")), 0).to_numpy(zero_copy_only=False)
    cumulative = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    starts, ends = offsets[:-1], offsets[1:]
    return {
        "n_messages": n_messages.astype(np.int32),
        "n_bytes": cumulative[ends] - cumulative[starts],
        "first_bytes": cumulative[np.minimum(starts + 1, ends)] - cumulative[starts],
        "verifier_bytes": pc.fill_null(pc.binary_length(verifier), 0).to_numpy(zero_copy_only=False).astype(np.int64),
    }


def prefixes(data: pa.RecordBatch) -> dict[str, np.ndarray]:
    """Per row of a data batch: a digest of its first two messages (`prefix`, 0 for a row with fewer) and
    whether the second is a summarization hand-off (`handoff`).

    Rows of one conversation share their first two messages (each row repeats the one before it), and
    a summarization restarts it from the first prompt and a hand-off: what `trials.group_rows` needs to
    group and order rows that have no episode number. The digest is a CRC-32 of the end of the first
    message and the start of the second (`PREFIX_SAMPLE`) beside the two lengths: one C call per row."""
    conversation = data.column(0)
    offsets = conversation.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    content = conversation.values.field("content")
    raw_offsets, buffer = content.buffers()[1:3]  # content is a plain string array (int32 offsets)
    bounds = np.frombuffer(raw_offsets, dtype=np.int32)[content.offset : content.offset + len(content) + 1].astype(
        np.int64
    )
    rows = np.nonzero(np.diff(offsets) >= 2)[0]
    first = offsets[rows]
    start, middle, end = bounds[first], bounds[first + 1], bounds[first + 2]
    text = memoryview(buffer if buffer is not None else b"")
    checksums = [
        zlib.crc32(text[b : min(c, b + PREFIX_SAMPLE)], zlib.crc32(text[max(a, b - 512) : b]))
        for a, b, c in zip(start.tolist(), middle.tolist(), end.tolist())
    ]
    lengths = ((middle - start) * 1_000_003 + (end - middle)) & ((1 << 30) - 1)
    digest = np.zeros(len(conversation), dtype=np.int64)
    digest[rows] = ((np.array(checksums, dtype=np.int64) << 30) | lengths) + 1  # never 0
    handoff = np.zeros(len(conversation), dtype=bool)
    if len(rows):
        second = content.take(pa.array(first + 1))
        handoff[rows] = pc.fill_null(pc.starts_with(second, HANDOFF_PROMPT), False).to_numpy(zero_copy_only=False)
    return {"prefix": digest, "handoff": handoff}


def meta_batch(batch: pa.RecordBatch, sizes: dict[str, np.ndarray], file_index: int) -> pa.RecordBatch:
    """The metadata rows of a source batch: its short columns, the episode number, and `sizes`
    (`text_sizes` and `prefixes`, or estimates when the text has not been read: then no prefixes)."""
    columns = {name: _string_column(batch, name) for name in META_COLUMNS}
    number = pc.struct_field(pc.extract_regex(columns["episode"], EPISODE_NUMBER), "n")
    columns["episode_num"] = pc.fill_null(pc.cast(number, pa.int32()), -1)
    columns["n_messages"] = pa.array(sizes["n_messages"].astype(np.int32))
    for name in ("n_bytes", "first_bytes", "verifier_bytes"):
        columns[name] = pa.array(sizes[name].astype(np.int64))
    unread = np.zeros(batch.num_rows, dtype=np.int64)
    columns["prefix"] = pa.array(sizes.get("prefix", unread).astype(np.int64))
    columns["handoff"] = pa.array(sizes.get("handoff", unread.astype(bool)))
    columns["file"] = pa.array(np.full(batch.num_rows, file_index, dtype=np.int16))
    return pa.record_batch(_dictionary_encode(columns))


def _dictionary_encode(columns: dict[str, pa.Array]) -> dict[str, pa.Array]:
    """Dictionary codes make facet counts a bincount (and keep a batch's repeated names once); the date
    stays plain (it is near-unique)."""
    return {
        name: pc.dictionary_encode(column) if name in META_COLUMNS and name not in ("date", "episode") else column
        for name, column in columns.items()
    }

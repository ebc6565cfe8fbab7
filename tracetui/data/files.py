"""Reading the original data files, shared by the conversion and the export (which must number rows
the same way)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pyarrow as pa


def arrow_reader(file: Path):
    """An Arrow IPC file or stream reader (the `datasets` cache writes streams) over a memory map."""
    source = pa.memory_map(str(file))
    try:
        return pa.ipc.open_file(source)
    except pa.ArrowInvalid:
        source = pa.memory_map(str(file))
        return pa.ipc.open_stream(source)


def arrow_batches(reader) -> Iterator[pa.RecordBatch]:
    if isinstance(reader, pa.ipc.RecordBatchFileReader):
        for i in range(reader.num_record_batches):
            yield reader.get_batch(i)
    else:
        yield from reader


def json_rows(file: Path) -> list[dict]:
    """A JSON file's rows: a list, one object, or JSON Lines; items that are not objects do not count.

    Invalid UTF-8 becomes U+FFFD instead of failing the whole file (the rows show it as it is)."""
    data = file.read_bytes().decode("utf-8", "replace").encode("utf-8")
    head = data.lstrip()[:1]
    if head == b"[":
        rows = orjson.loads(data)
    elif head == b"{" and file.suffix == ".json" and data.count(b"\n{") == 0:
        rows = [orjson.loads(data)]
    else:
        rows = [orjson.loads(line) for line in data.splitlines() if line.strip()]
    return [row for row in rows if isinstance(row, dict)]

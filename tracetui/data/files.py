"""Reading the original data files, shared by the conversion and the export (which must number rows
the same way)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import orjson
import pyarrow as pa

from .errors import SourceError

READ_ERRORS = (pa.ArrowException, OSError, UnicodeDecodeError)
"""What reading a damaged parquet or Arrow file raises (a footer's names that are not UTF-8 included)."""
_SURROGATE = re.compile("[\ud800-\udfff]")
_LISTED = 3
"""Skipped lines a note lists by number."""
_REASON = 80
"""Characters of a parser's message kept in a note or an error line."""


ArrowReader: TypeAlias = "pa.ipc.RecordBatchFileReader | pa.ipc.RecordBatchStreamReader"


def arrow_reader(file: Path) -> ArrowReader:
    """An Arrow IPC file or stream reader (the `datasets` cache writes streams) over a memory map."""
    source = pa.memory_map(str(file))
    try:
        return pa.ipc.open_file(source)
    except pa.ArrowInvalid:
        source = pa.memory_map(str(file))
        return pa.ipc.open_stream(source)


def arrow_batches(reader: ArrowReader) -> Iterator[pa.RecordBatch]:
    if isinstance(reader, pa.ipc.RecordBatchFileReader):
        for i in range(reader.num_record_batches):
            yield reader.get_batch(i)
    else:
        yield from reader


@dataclass(frozen=True, slots=True)
class JsonRows:
    """A JSON file's rows, and the lines of a JSON Lines file that were not rows (skipped, not fatal)."""

    rows: list[dict[str, Any]]
    bad_lines: list[tuple[int, str]]  # (line number from 1, why)

    def note(self) -> str | None:
        """One line on the skipped lines, e.g. `skipped 1 bad line: 51 (invalid JSON at column 20: …)`."""
        count = len(self.bad_lines)
        if not count:
            return None
        listed = ", ".join(f"{number} ({why})" for number, why in self.bad_lines[:_LISTED])
        more = f" and {count - _LISTED:,} more" if count > _LISTED else ""
        return f"skipped {count:,} bad line{'s' if count > 1 else ''}: {listed}{more}"


def json_rows(file: Path) -> JsonRows:
    """A JSON file's rows: a list, one object, or JSON Lines; items of a list that are not objects do not count.

    Invalid UTF-8 becomes U+FFFD and lone surrogate escapes (`\\ud800`, legal JSON) become U+FFFD instead
    of failing the whole file. A JSON Lines line that is not a JSON object is skipped and counted; a file
    with no good line at all is a SourceError, as is a JSON document that does not parse."""
    data = file.read_bytes()
    head = data.lstrip()[:1]
    if head == b"[" or (head == b"{" and file.suffix == ".json" and data.count(b"\n{") == 0):
        try:
            value = _loads(data)
        except ValueError as exc:
            raise SourceError(f"{file.name}: {_invalid(exc, getattr(exc, 'lineno', None))}") from None
        return JsonRows([row for row in (value if isinstance(value, list) else [value]) if isinstance(row, dict)], [])
    rows: list[dict[str, Any]] = []
    bad: list[tuple[int, str]] = []
    first_error = ""  # the first bad line's, with its line number: the error when no line is good
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            row = _loads(line)
        except ValueError as exc:
            bad.append((number, _invalid(exc)))
            first_error = first_error or _invalid(exc, number)
            continue
        if isinstance(row, dict):
            rows.append(row)
        else:
            bad.append((number, "not a JSON object"))
            first_error = first_error or f"line {number} is not a JSON object"
    if bad and not rows:
        more = f" ({len(bad) - 1:,} more bad lines, no good one)" if len(bad) > 1 else ""
        raise SourceError(f"{file.name}: {first_error}{more}")
    return JsonRows(rows, bad)


def _loads(data: bytes) -> Any:
    """orjson; for what it refuses but is JSON all the same (invalid UTF-8, lone surrogate escapes, numbers
    beyond a double), the standard library, with U+FFFD for the bad characters. Raises ValueError (the first
    error) when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        error = exc
    text = data.decode("utf-8", "replace")
    try:
        return _without_surrogates(json.loads(text, parse_int=_integer))
    except (ValueError, RecursionError):
        raise error from None


def _integer(digits: str) -> int | str:
    """A JSON integer; one too long to be a number anything reads stays its digits (a bad value, not a bad row)."""
    return int(digits) if len(digits) <= 20 else digits


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_without_surrogates(key): _without_surrogates(item) for key, item in value.items()}
    return value


def _invalid(exc: ValueError, line: int | None = None) -> str:
    """`invalid JSON at line 3 column 20: unexpected character`, bounded in length; without `line` (a line of
    JSON Lines, which the note numbers), the column only."""
    column = f" column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
    where = f" at line {line}{column}" if line is not None else f" at{column}" if column else ""
    reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
    return f"invalid JSON{where}: {reason[:_REASON]}{'…' if len(reason) > _REASON else ''}"

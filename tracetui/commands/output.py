"""How subcommands print records: an aligned plain-text table (no colours, so it pipes cleanly), csv,
json or json lines, on stdout. Table cells are untrusted text made one inert line."""

from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Sequence

from ..trace.sanitize import sanitize

Record = dict[str, object]
CELL_WIDTH = 48
"""Widest a table cell gets; csv and json carry everything."""


def print_table(rows: Sequence[dict[str, str]], empty: str = "(no trials)", width: int = CELL_WIDTH) -> None:
    """Columns padded to their widest cell; text left-aligned, numbers right-aligned."""
    if not rows:
        print(empty)
        return
    headers = list(rows[0])
    cells = [{h: cell(row[h], width) for h in headers} for row in rows]
    widths = {h: max(len(h), *(len(r[h]) for r in cells)) for h in headers}
    numeric = {h: all(_numeric(r[h]) for r in cells) for h in headers}

    def line(values: dict[str, str]) -> str:
        padded = (values[h].rjust(widths[h]) if numeric[h] else values[h].ljust(widths[h]) for h in headers)
        return "  ".join(padded).rstrip()

    print(line({h: h for h in headers}))
    print("  ".join("-" * widths[h] for h in headers))
    for row in cells:
        print(line(row))


def cell(text: str, width: int = CELL_WIDTH) -> str:
    """Untrusted text as one inert line of at most `width` characters."""
    text = " ".join(sanitize(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _numeric(text: str) -> bool:
    return text == "-" or text.rstrip("%").lstrip("+-").replace(".", "", 1).isdigit()


def plain(value: object) -> object:
    """NaN as None (json null, an empty csv field)."""
    return None if isinstance(value, float) and math.isnan(value) else value


def write_json(records: Sequence[Record]) -> None:
    json.dump([{k: plain(v) for k, v in r.items()} for r in records], sys.stdout, indent=2, ensure_ascii=False)
    print()


def write_jsonl(records: Sequence[Record]) -> None:
    for record in records:
        print(json.dumps({k: plain(v) for k, v in record.items()}, ensure_ascii=False))


def write_csv(records: Sequence[Record], fields: Sequence[str] = ()) -> None:
    """A header (from `fields`, else the first record's keys) and one line per record; lists joined by `;`."""
    fields = list(fields) or (list(records[0]) if records else [])
    if not fields:
        return
    writer = csv.DictWriter(sys.stdout, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: _csv_value(v) for k, v in record.items()})


def _csv_value(value: object) -> object:
    value = plain(value)
    if value is None:
        return ""
    return ";".join(map(str, value)) if isinstance(value, (list, tuple)) else value

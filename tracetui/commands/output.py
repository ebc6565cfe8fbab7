"""How subcommands print records: an aligned plain-text table (no colours, so it pipes cleanly; on a
terminal it fits the terminal's width), csv, json or json lines, on stdout. Table cells are untrusted
text made one inert line."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence

from ..trace.sanitize import sanitize
from ..ui.cuts import Cuts, plain_cut

Record = dict[str, object]
CELL_WIDTH = 48
"""Widest a table cell gets; csv and json carry everything."""


def print_table(
    rows: Sequence[dict[str, str]],
    empty: str = "(no trials)",
    width: int = CELL_WIDTH,
    wrap: str | None = None,
    columns: int | None = None,
) -> None:
    """Columns padded to their widest cell; text left-aligned, numbers right-aligned.

    On a terminal (or given `columns`) the table fits its width: text columns narrow, the widest
    first (the `wrap` column's cells then wrap onto more lines, up to `WRAP_LINES`; the others are
    cut where they differ, so rows stay told apart), and titles wrap at `_` above narrow numbers.
    Piped, every column keeps its full width."""
    if not rows:
        print(empty)
        return
    headers = list(rows[0])
    cells = [{h: cell(row[h], width) for h in headers} for row in rows]
    numeric = {h: all(_numeric(r[h]) for r in cells) for h in headers}
    widths = {h: max(len(h), *(len(r[h]) for r in cells)) for h in headers}
    if columns is None and sys.stdout.isatty():
        columns = shutil.get_terminal_size().columns
    if columns is not None:
        least = {
            h: max(_title_least(h), *(len(r[h]) for r in cells))
            if numeric[h]
            else min(widths[h], max(NARROWEST, _title_least(h)))
            for h in headers
        }
        _fit_widths(widths, least, columns, wrap)
    cuts = {h: Cuts(r[h] for r in cells) for h in headers if not numeric[h] and h != wrap}

    def shown(h: str, text: str) -> list[str]:
        if h == wrap and len(text) > widths[h]:
            return _wrapped(text, widths[h])
        return [cuts[h](text, widths[h]) if h in cuts else text]

    def print_lines(pieces: dict[str, list[str]]) -> None:
        for number in range(max(len(p) for p in pieces.values())):
            line = (p[number] if number < len(p) else "" for p in pieces.values())
            print(
                "  ".join(
                    t.rjust(widths[h]) if numeric[h] else t.ljust(widths[h]) for h, t in zip(headers, line)
                ).rstrip()
            )

    print_lines({h: _title_lines(h, widths[h]) for h in headers})
    print("  ".join("-" * widths[h] for h in headers))
    for row in cells:
        print_lines({h: shown(h, row[h]) for h in headers})


NARROWEST = 8
"""A text column narrows to no fewer columns than this (nor than the longest part of its title)."""
ROOMY = 20
"""Text columns narrow to this first, the wrapping one after the others."""
WRAP_LINES = 3
"""Lines a wrapped cell takes at most; the last one is cut ("…")."""


def _fit_widths(widths: dict[str, int], least: dict[str, int], columns: int, wrap: str | None) -> None:
    """Narrow columns until the table fits in `columns` (or none can narrow more): the widest text
    column but the wrapping one to `ROOMY` first, then the wrapping one to it, then any to `least`."""

    def total() -> int:
        return sum(widths.values()) + 2 * (len(widths) - 1)

    steps = ((ROOMY, lambda h: h != wrap and least[h] < widths[h]), (ROOMY, lambda h: h == wrap), (0, lambda h: True))
    for floor, which in steps:
        while total() > columns:
            shrinkable = [h for h in widths if which(h) and widths[h] > max(least[h], floor)]
            if not shrinkable:
                break
            widths[max(shrinkable, key=lambda h: widths[h])] -= 1


def _title_parts(title: str) -> list[str]:
    """A title's parts it may wrap between: `pass_rate` → `pass_`, `rate`."""
    return re.findall(r"[^_]+_*|_+", title) or [title]


def _title_least(title: str) -> int:
    return max(len(part) for part in _title_parts(title))


def _title_lines(title: str, width: int) -> list[str]:
    """The title on as many lines as `width` needs, broken after an `_`."""
    lines = [""]
    for part in _title_parts(title):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return lines


def _wrapped(text: str, width: int) -> list[str]:
    lines = textwrap.wrap(text, width) or [""]
    if len(lines) > WRAP_LINES:
        lines = [*lines[: WRAP_LINES - 1], plain_cut(" ".join(lines[WRAP_LINES - 1 :]), width)]
    return lines


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

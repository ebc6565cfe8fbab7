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
from typing import TextIO

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
    spare: Sequence[str] = (),
) -> None:
    """Columns padded to their widest cell; text left-aligned, numbers right-aligned.

    On a terminal (or given `columns`) the table fits its width: the `spare` columns are left out (those
    with nothing in any row first, then in their order) while the others cannot fit at their narrowest
    (a line after the table names them); text columns narrow, the widest first (the `wrap` column's cells then wrap onto more lines, up to
    `WRAP_LINES`; the others are cut where they differ, so rows stay told apart), and titles wrap at
    `_` above narrow numbers. Piped, every column keeps its full width."""
    if not rows:
        print(empty)
        return
    headers = list(rows[0])
    cells = [{h: cell(row[h], width) for h in headers} for row in rows]
    numeric = {h: all(_numeric(r[h]) for r in cells) for h in headers}
    widths = {h: max(len(h), *(len(r[h]) for r in cells)) for h in headers}
    columns = columns if columns is not None else terminal_columns()
    left_out: list[str] = []
    if columns is not None:
        least = {
            h: max(_title_least(h), *(len(r[h]) for r in cells))
            if numeric[h]
            else min(widths[h], max(NARROWEST, _title_least(h)))
            for h in headers
        }
        roomy = {h: least[h] if numeric[h] else min(widths[h], ROOMY) for h in headers}
        blank = [h for h in spare if h in headers and all(r[h] in ("", "-") for r in cells)]
        for h in [*blank, *(h for h in spare if h in headers and h not in blank)]:  # empty ones first
            if sum(roomy[k] for k in headers) + 2 * (len(headers) - 1) <= columns:
                break
            headers.remove(h)
            left_out.append(h)
            del widths[h]
        _fit_widths(widths, least, numeric, columns, wrap)
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
    if left_out:
        print_note(
            f"left out to fit {columns} columns: {', '.join(left_out)} (a wider terminal, or --format csv, shows them)"
        )


def terminal_columns() -> int | None:
    """The terminal's width when stdout is one; None when piped (then nothing is fitted to a width)."""
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def print_note(text: str, indent: str = "", file: TextIO | None = None) -> None:
    """A line of prose about a table, on stdout or `file`, wrapped at words to the terminal's width
    (whole when piped); `indent` starts each of its lines."""
    stream = sys.stdout if file is None else file
    columns = shutil.get_terminal_size().columns if stream.isatty() else None
    if not columns:
        print(indent + text, file=stream)
        return
    print(
        "\n".join(
            textwrap.wrap(text, columns, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False)
        ),
        file=stream,
    )


NARROWEST = 8
"""A text column narrows to no fewer columns than this (nor than the longest part of its title)."""
ROOMY = 20
"""Text columns narrow to this first, the wrapping one after the others."""
WRAP_LINES = 3
"""Lines a wrapped cell takes at most; the last one is cut ("…")."""


def _fit_widths(
    widths: dict[str, int], least: dict[str, int], numeric: dict[str, bool], columns: int, wrap: str | None
) -> None:
    """Narrow columns until the table fits in `columns` (or none can narrow more): numbers first (their
    titles wrap), then the widest text column but the wrapping one to `ROOMY`, then the wrapping one
    to it, then any to `least`."""

    def total() -> int:
        return sum(widths.values()) + 2 * (len(widths) - 1)

    steps = (
        (0, lambda h: numeric[h]),
        (ROOMY, lambda h: h != wrap and not numeric[h]),
        (ROOMY, lambda h: h == wrap),
        (0, lambda h: True),
    )
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
    """A figure (right-aligned, never cut): `12`, `-3.5`, `55.6%`, `15,068`, `$0.07`, `115s`, or `-`."""
    figure = text.lstrip("+-−").lstrip("$").rstrip("%s").replace(",", "")
    return text == "-" or figure.replace(".", "", 1).isdigit()


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


def write_records(
    format_: str,
    records: Sequence[Record],
    fields: Sequence[str],
    table_fields: Sequence[str],
    empty: str,
    width: int = CELL_WIDTH,
    wrap: str | None = None,
) -> None:
    """Records in a command's --format: json lines, csv with `fields`, or a table of `table_fields`
    (None shown as "-"; the `wrap` column wraps when the terminal is narrow: see `print_table`)."""
    if format_ == "jsonl":
        write_jsonl(records)
    elif format_ == "csv":
        write_csv(records, fields)
    else:
        rows = [{k: "-" if r[k] is None else str(r[k]) for k in table_fields} for r in records]
        print_table(rows, empty=empty, width=width, wrap=wrap)


def trial_record(info) -> Record:
    """The fields that say which trial a record is about (a `TrialInfo`), first in every command's records."""
    return {
        "dataset": info.dataset,
        "trial_name": info.trial_name,
        "task": info.task,
        "model": info.model,
        "result": info.result,
    }

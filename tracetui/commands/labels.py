"""`tracetui labels SOURCE…`: list the labels and notes given to a dataset's trials (every revision)."""

from __future__ import annotations

import csv
import json
import sys

from ..cli import _guarded, _source_options, source_specs
from ..data.session import prepare
from ..store.labels import LabelStore
from ..trace.sanitize import sanitize
from . import Parser

TABLE_COLUMNS = ("trial_name", "task", "model", "labels", "note", "updated")
TABLE_WIDTH = 48
"""Widest a table cell gets; csv and json carry everything."""


def parser() -> Parser:
    parser = Parser(prog="tracetui labels", description="List the labels and notes given to a dataset's trials.")
    parser.add_argument("sources", nargs="+", metavar="SOURCE", help="hub id, hf:// path, file or folder")
    _source_options(parser)
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table", help="default: table")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    return _guarded(args, lambda: _list(args))


def _list(args) -> int:
    specs = source_specs(args)
    dataset_ids = dict.fromkeys(source.dataset_id for source in prepare(specs))
    store = LabelStore.open()
    warning = store.pop_warning()
    if warning:
        print(f"tracetui: {warning}", file=sys.stderr)
    rows = [
        {
            "dataset": r.key.dataset_id,
            "revision": r.key.revision,
            "trial_name": r.key.trial,
            "task": r.key.task,
            "model": r.key.model,
            "labels": sorted(r.labels),
            "note": r.note,
            "updated": r.updated_text,
        }
        for dataset_id in dataset_ids
        for r in store.all_for_dataset(dataset_id)
    ]
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    elif args.format == "csv":
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]) if rows else ["dataset", *TABLE_COLUMNS])
        writer.writeheader()
        writer.writerows({**row, "labels": ";".join(row["labels"])} for row in rows)
    elif rows:
        _table(rows)
    else:
        print("no labels or notes yet", file=sys.stderr)
    return 0


def _table(rows: list[dict]) -> None:
    """Aligned columns of sanitized one-line cells (names and notes are untrusted text)."""
    cells = [[_cell(", ".join(row[c]) if c == "labels" else row[c]) for c in TABLE_COLUMNS] for row in rows]
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(TABLE_COLUMNS)]
    for line in [list(TABLE_COLUMNS), *cells]:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())


def _cell(text: str) -> str:
    text = " ".join(sanitize(text).split())
    return text if len(text) <= TABLE_WIDTH else text[: TABLE_WIDTH - 1] + "…"

"""`tracetui labels SOURCE…`: list the labels and notes given to a dataset's trials (every revision)."""

from __future__ import annotations

import sys

from ..data.session import prepare
from . import run as run_command
from . import source_specs, subcommand
from .output import print_table, write_csv, write_json
from .selection import Extras, label_store

TABLE_COLUMNS = ("trial_name", "task", "model", "labels", "note", "updated")


def parser():
    return subcommand(
        "labels",
        "List the labels and notes given to a dataset's trials.",
        formats=("table", "csv", "json"),
        opens=False,
    )


def run(argv: list[str]) -> int:
    return run_command(parser(), argv, _list)


def _list(args) -> int:
    dataset_ids = dict.fromkeys(source.dataset_id for source in prepare(source_specs(args)))
    store = label_store(Extras())
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
        write_json(rows)
    elif args.format == "csv":
        write_csv(rows, list(rows[0]) if rows else ["dataset", "revision", *TABLE_COLUMNS])
    elif rows:
        print_table([{c: ", ".join(row[c]) if c == "labels" else row[c] for c in TABLE_COLUMNS} for row in rows])
    else:
        print("no labels or notes yet", file=sys.stderr)
    return 0

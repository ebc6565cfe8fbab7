"""`tracetui labels SOURCE…`: list the labels and notes given to a dataset's trials (every revision);
`tracetui labels import FILE`: apply the file of unsaved changes the app's quit prompt wrote.

Listing only reads: a damaged store is reported (exit 2) and left where it is. Importing writes, so it
may move a damaged store aside (and says where it went)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..data.errors import SourceError
from . import Parser, subcommand
from . import run as run_command
from .output import print_table, write_csv, write_json
from .selection import Extras, label_store, resolved_sources

TABLE_COLUMNS = ("trial_name", "task", "model", "labels", "note", "updated")


def parser():
    return subcommand(
        "labels",
        "List the labels and notes given to a dataset's trials. `tracetui labels import FILE` applies the"
        " file of unsaved labels and notes the app offers to write when the disk refused them.",
        formats=("table", "csv", "json"),
        opens=False,
    )


def import_parser():
    parser = Parser(
        prog="tracetui labels import",
        description="Apply a file of unsaved labels and notes (written by the app's quit prompt) to the label"
        " store, merged with what it holds: other labels stay, a note changed since is kept beside the"
        " imported one. Importing the same file twice changes nothing.",
    )
    parser.add_argument("file", metavar="FILE", help="the file the quit prompt wrote (tracetui-unsaved-….json)")
    return parser


def run(argv: list[str]) -> int:
    if argv[:1] == ["import"]:
        return run_command(import_parser(), argv[1:], _import)
    return run_command(parser(), argv, _list)


def _list(args) -> int:
    dataset_ids = dict.fromkeys(source.dataset_id for source in resolved_sources(args))
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
    if not store.on_disk and store.path.exists():
        return 2  # damaged or unreadable: label_store said why, and nothing was listed from it
    if args.format == "json":
        write_json(rows)
    elif args.format == "csv":
        write_csv(rows, list(rows[0]) if rows else ["dataset", "revision", *TABLE_COLUMNS])
    elif rows:
        print_table([{c: ", ".join(row[c]) if c == "labels" else row[c] for c in TABLE_COLUMNS} for row in rows])
    else:
        print("no labels or notes yet", file=sys.stderr)
    return 0


def _import(args) -> int:
    from ..store.labels import LabelStore, Unwritable
    from ..store.unsaved import BadChangesFile, read_changes

    path = Path(args.file).expanduser()
    try:
        changes = read_changes(path)
    except OSError as exc:
        raise SourceError(f"{path}: {exc.strerror or exc}") from None
    except BadChangesFile as exc:
        raise SourceError(f"{path}: {exc}") from None
    store = LabelStore.open(writer=True)
    warning = store.pop_warning()
    if warning:
        print(f"tracetui: {warning}", file=sys.stderr)
    try:
        flushed = store.import_changes(changes)
    except Unwritable as exc:
        raise SourceError(f"cannot write {store.path} ({exc}): nothing imported; try again when it can") from None
    merged = f" ({flushed.merged} kept beside a newer note)" if flushed.merged else ""
    print(f"imported {flushed.changes} changes{merged} from {path} into {store.path}", file=sys.stderr)
    return 0

"""`tracetui export SOURCE… -o OUT`: the chosen trials' original rows, with their labels and notes and
the answers to the questions asked of them."""

from __future__ import annotations

from pathlib import Path

from ..ask.index import answer_columns
from ..data.errors import SourceError
from ..data.export import FORMATS, export_trials, without_rows
from ..data.facets import parse_filter_args
from . import end_progress, print_progress, subcommand
from . import run as run_command
from .selection import Extras, add_label_facet, chosen_trials, filter_args, open_sources


def parser():
    parser = subcommand(
        "export",
        "Write the original rows of the matching trials, plus tracetui_labels, tracetui_note and "
        f"tracetui_ask_NAME for each question asked of them, to a {', '.join(FORMATS)} file (by the suffix).",
        filters="keep trials with this value, e.g. result=0.0 or finding=false-claim",
        exclude=True,
    )
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="LABEL",
        help="keep trials with this label (repeatable: any of them)",
    )
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="OUT", help="the file to write")
    parser.add_argument(
        "--force", action="store_true", help="overwrite OUT if it exists (else an existing OUT stops it)"
    )
    return parser


def run(argv: list[str]) -> int:
    return run_command(parser(), argv, _export)


def _export(args) -> int:
    if args.output.suffix.lower() not in FORMATS:
        raise SourceError(f"-o {args.output}: the suffix must be one of {', '.join(FORMATS)}")
    if args.output.is_dir():
        raise SourceError(f"-o {args.output}: is a folder; give a file name")
    if args.output.exists() and not args.force:
        raise SourceError(f"-o {args.output}: the file exists; --force overwrites it")
    filters = filter_args(args) + parse_filter_args([f"label={label}" for label in args.label], "--label")
    session = open_sources(args)
    extras = Extras()
    add_label_facet(session, extras)  # the labels and notes go into every exported row
    trials = chosen_trials(session, filters, extras)
    records = extras.records
    rows = export_trials(
        session,
        trials,
        args.output,
        labels={t: set(r.labels) for t, r in records.items()},
        notes={t: r.note for t, r in records.items() if r.note},
        progress=print_progress,
        columns=answer_columns(session),
    )
    end_progress()
    empty = len(without_rows(session, trials))
    written = len(trials) - empty
    print(f"exported {written:,} trial{'s' * (written != 1)} ({rows:,} rows) to {args.output}")
    if empty:
        print(f"{empty:,} trial{'s' * (empty != 1)} left out: no result yet (running) or none that can be read")
    return 0

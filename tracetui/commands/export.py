"""`tracetui export SOURCE… -o OUT`: the chosen trials' original rows, with their labels and notes."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..cli import _guarded, _source_options, filter_option, parse_filters, source_specs
from ..data.errors import SourceError
from ..data.export import FORMATS, export_trials
from ..data.session import open_session, prepare
from ..store.facets import LABEL_FACET, label_facet
from ..store.labels import LabelStore, session_records
from . import Parser, print_progress


def parser() -> Parser:
    parser = Parser(
        prog="tracetui export",
        description="Write the original rows of the matching trials, plus tracetui_labels and tracetui_note, "
        f"to a {', '.join(FORMATS)} file (by the suffix).",
    )
    parser.add_argument("sources", nargs="+", metavar="SOURCE", help="hub id, hf:// path, file or folder")
    _source_options(parser)
    filter_option(parser, "keep trials with this value, e.g. result=0.0 or model=gpt-4o (repeatable)")
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="LABEL",
        help="keep trials with this label (repeatable: any of them)",
    )
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="OUT", help="the file to write")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    return _guarded(args, lambda: _export(args))


def _export(args) -> int:
    if args.output.suffix.lower() not in FORMATS:
        raise SourceError(f"-o {args.output}: the suffix must be one of {', '.join(FORMATS)}")
    filters = parse_filters(args.filter + [f"{LABEL_FACET}={label}" for label in args.label])
    specs = source_specs(args)
    session = open_session(prepare(specs), print_progress)
    store = LabelStore.open()
    warning = store.pop_warning()
    if warning:
        print(f"tracetui: {warning}", file=sys.stderr)
    records = session_records(session, store)
    session.facets.add(label_facet(session, store, records=records))
    unknown = sorted(set(filters.selected) - set(session.facets.facets))
    if unknown:
        raise SourceError(f"--filter {unknown[0]}=…: no such facet (facets: {', '.join(session.facets.facets)})")
    trials = np.nonzero(session.facets.apply(filters).visible)[0]
    rows = export_trials(
        session,
        trials,
        args.output,
        labels={t: set(r.labels) for t, r in records.items()},
        notes={t: r.note for t, r in records.items() if r.note},
        progress=print_progress,
    )
    print(f"exported {len(trials):,} trial{'s' * (len(trials) != 1)} ({rows:,} rows) to {args.output}")
    return 0

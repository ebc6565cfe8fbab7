"""`tracetui findings SOURCE…`: one record per finding of the matching trials, for scripts that curate data.

The record format is stable (README, "Findings"): dataset, trial_name, task, model, result, kind, message
(0-based index in the trial's rebuilt history), evidence.
"""

from __future__ import annotations

import argparse
import sys
import textwrap

import numpy as np

from ..data.trials import RUNNING
from ..findings import KIND_NAMES, KINDS
from . import run as run_command
from . import subcommand
from .output import print_note, trial_record, write_records
from .selection import Extras, filter_args, filter_state, findings_index, open_sources

FIELDS = ("dataset", "trial_name", "task", "model", "result", "kind", "message", "evidence")
TABLE_FIELDS = ("trial_name", "model", "kind", "message", "evidence")


def parser():
    parser = subcommand(
        "findings",
        "What went wrong in each trial, found offline from what the trace shows: one record per finding, "
        f"with the fields {', '.join(FIELDS)} (message: the 0-based index in the trial's history). The first run "
        "finds them in every trial; later runs read them back.",
        formats=("table", "jsonl", "csv"),
        filters="only trials with this value, e.g. finding=test-tampering or model=gpt-5-mini",
        exclude=True,
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # keeps the kinds' table: wrap the rest here
    parser.description = textwrap.fill(parser.description or "", 79)
    parser.epilog = "kinds:\n" + "\n".join(f"  {kind.name:<17} {kind.summary}" for kind in KINDS)
    parser.add_argument(
        "--kind",
        action="append",
        default=[],
        choices=KIND_NAMES,
        metavar="KIND",
        help="only findings of this kind (repeatable; default: the kinds --filter finding= names, else all)",
    )
    return parser


def run(argv: list[str]) -> int:
    return run_command(parser(), argv, _findings)


def _findings(args) -> int:
    filters = filter_args(args)
    session = open_sources(args)
    extras = Extras()
    index = findings_index(session, extras)
    state = filter_state(session, filters, extras)
    kinds = set(args.kind or state.selected.get("finding") or KIND_NAMES)
    records = []
    chosen = session.facets.apply(state).visible.nonzero()[0]
    running = int(np.count_nonzero(session.trials.outcome[chosen] == RUNNING))
    for trial in chosen:
        info = session.info(int(trial))
        for finding in index.of(int(trial)):
            if finding.kind in kinds:
                records.append(
                    {
                        **trial_record(info),
                        "kind": finding.kind,
                        "message": finding.message,
                        "evidence": finding.evidence,
                    }
                )
    write_records(args.format, records, FIELDS, TABLE_FIELDS, "(no findings)", width=72, wrap="evidence")
    if args.format == "table":
        trials = len({(r["dataset"], r["trial_name"]) for r in records})
        still = f"; {running:,} of the trials read {'is' if running == 1 else 'are'} still running" if running else ""
        print_note(
            f"{len(records):,} finding{'s' * (len(records) != 1)} in {trials:,} trial{'s' * (trials != 1)}{still}",
            file=sys.stderr,
        )
    return 0

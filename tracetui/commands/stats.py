"""`tracetui stats SOURCE…`: pass rates grouped by any columns, or a head-to-head of datasets per task.

Prints an aligned plain-text table (no colours, so it pipes cleanly), csv or json on stdout.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys

from ..cli import _guarded, _source_options, filter_option, parse_filters, source_specs
from ..data.errors import SourceError
from ..data.stats import GROUP_COLUMNS, group_stats, head_to_head

Record = dict[str, object]


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracetui stats",
        description="Pass rates per group of trials. With two or more sources and --by dataset,task: "
        "a head-to-head per task of the first dataset against each other one, sorted by the difference.",
    )
    parser.add_argument("sources", nargs="+", metavar="SOURCE", help="hub id, hf:// path, file or folder")
    _source_options(parser)
    parser.add_argument(
        "--by", default="model", help=f"comma-separated columns among {', '.join(GROUP_COLUMNS)} (default: model)"
    )
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table", help="default: table")
    filter_option(parser, "count only matching trials, e.g. model=gpt-4o or outcome=fail (repeatable)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    return _guarded(args, lambda: _quiet_on_closed_pipe(args))


def _quiet_on_closed_pipe(args) -> int:
    """`tracetui stats … | head` closing the pipe early is not an error (as with other Unix tools)."""
    try:
        return _stats(args)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _stats(args) -> int:
    from ..data.session import open_session, prepare

    by = tuple(name.strip() for name in args.by.split(",") if name.strip())
    unknown = [name for name in by if name not in GROUP_COLUMNS]
    if not by or unknown:
        raise SourceError(f"--by {args.by!r}: expected a comma-separated list of {', '.join(GROUP_COLUMNS)}")
    state = parse_filters(args.filter)
    specs = source_specs(args)
    session = open_session(prepare(specs), _progress if sys.stderr.isatty() else None)
    if sys.stderr.isatty():
        print("\r\x1b[K", end="", file=sys.stderr, flush=True)
    facets = session.facets.facets
    for name in state.selected:
        if name not in facets:
            raise SourceError(f"--filter {name}=…: unknown facet; one of {', '.join(facets)}")
    mask = session.facets.apply(state).visible
    names = session.dataset_names
    if len(names) >= 2 and set(by) == {"dataset", "task"}:
        comparisons = [head_to_head(session, mask, names[0], other) for other in names[1:]]
        records = [_head_to_head_record(c.a, c.b, row) for c in comparisons for row in c.rows]
        if args.format == "table":
            for index, c in enumerate(comparisons):
                print(("\n" if index else "") + f"{c.a} vs {c.b}: {len(c.rows)} shared tasks")
                _print_table([_head_to_head_cells(c.a, c.b, row) for row in c.rows])
            return 0
    else:
        records = [_group_record(by, row) for row in group_stats(session, mask, by)]
        if args.format == "table":
            _print_table([{k: _cell(k, v) for k, v in r.items()} for r in records])
            return 0
    if args.format == "json":
        json.dump([{k: _json_value(v) for k, v in r.items()} for r in records], sys.stdout, indent=2)
        print()
    else:
        _write_csv(records)
    return 0


def _group_record(by: tuple[str, ...], row) -> Record:
    c = row.counts
    return {
        **dict(zip(by, row.key)),
        "trials": c.trials,
        "pass": c.passed,
        "partial": c.partial,
        "fail": c.failed,
        "error": c.errors,
        "unknown": c.unknown,
        "pass_rate": c.pass_rate,
        "mean_reward": c.mean_reward,
    }


def _head_to_head_record(a: str, b: str, row) -> Record:
    return {
        "task": row.task,
        "a": a,
        "a_attempts": row.a.trials,
        "a_passes": row.a.passed,
        "a_pass_rate": row.a.pass_rate,
        "b": b,
        "b_attempts": row.b.trials,
        "b_passes": row.b.passed,
        "b_pass_rate": row.b.pass_rate,
        "diff": row.diff,
    }


def _head_to_head_cells(a: str, b: str, row) -> dict[str, str]:
    """A table row headed by the dataset names rather than a/b."""
    cells = {"task": row.task}
    for name, side in ((a, row.a), (b, row.b)):
        cells[f"{name} attempts"] = str(side.trials)
        cells[f"{name} pass rate"] = _cell("pass_rate", side.pass_rate)
    cells["diff"] = _cell("diff", row.diff)
    return cells


def _cell(key: str, value: object) -> str:
    if not isinstance(value, float):
        return str(value)
    if math.isnan(value):
        return "-"
    if key == "diff":
        return f"{value:+.1%}"
    return f"{value:.1%}" if key.endswith("pass_rate") else f"{value:.3f}"


def _print_table(rows: list[dict[str, str]]) -> None:
    """Columns padded to their widest cell; text left-aligned, numbers right-aligned."""
    if not rows:
        print("(no trials)")
        return
    headers = list(rows[0])
    widths = {h: max(len(h), *(len(r[h]) for r in rows)) for h in headers}
    numeric = {h: all(_numeric(r[h]) for r in rows) for h in headers}

    def line(cells: dict[str, str]) -> str:
        padded = (cells[h].rjust(widths[h]) if numeric[h] else cells[h].ljust(widths[h]) for h in headers)
        return "  ".join(padded).rstrip()

    print(line({h: h for h in headers}))
    print("  ".join("-" * widths[h] for h in headers))
    for row in rows:
        print(line(row))


def _numeric(text: str) -> bool:
    return text == "-" or text.rstrip("%").lstrip("+-").replace(".", "", 1).isdigit()


def _json_value(value: object) -> object:
    return None if isinstance(value, float) and math.isnan(value) else value


def _write_csv(records: list[Record]) -> None:
    if not records:
        return
    writer = csv.DictWriter(sys.stdout, fieldnames=list(records[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if _json_value(v) is None else v for k, v in r.items()} for r in records)


def _progress(fraction: float, message: str) -> None:
    print(f"\r\x1b[K{fraction:4.0%} {message}", end="", file=sys.stderr, flush=True)

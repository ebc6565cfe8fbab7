"""`tracetui stats SOURCE…`: pass rates grouped by any columns, or a head-to-head of datasets per task."""

from __future__ import annotations

import math

import numpy as np

from ..data.errors import SourceError
from ..data.stats import GROUP_COLUMNS, group_stats, head_to_head
from ..data.trials import RUNNING
from ..data.usage import GROUP_FIELDS, GroupUsage, group_usage, pareto
from . import run as run_command
from . import subcommand
from .output import Record, print_table, write_csv, write_json
from .selection import Extras, filter_args, filter_state, findings_index, open_sources


def parser():
    parser = subcommand(
        "stats",
        "Pass rates per group of trials. With two or more sources and --by dataset,task: a head-to-head per "
        "task of the first dataset against each other one, sorted by the difference. --by finding counts a "
        "trial once under each kind of finding it has, (none) when it has none.",
        formats=("table", "csv", "json"),
        filters="count only matching trials, e.g. outcome=fail",
        exclude=True,
    )
    parser.add_argument(
        "--by", default="model", help=f"comma-separated columns among {', '.join(GROUP_COLUMNS)} (default: model)"
    )
    parser.add_argument(
        "--pareto",
        action="store_true",
        help="per model, mean cost per trial against pass rate, the Pareto frontier marked (sources that record cost)",
    )
    return parser


def run(argv: list[str]) -> int:
    return run_command(parser(), argv, _stats)


def _stats(args) -> int:
    by = tuple(name.strip() for name in args.by.split(",") if name.strip())
    unknown = [name for name in by if name not in GROUP_COLUMNS]
    if not by or unknown:
        raise SourceError(f"--by {args.by!r}: expected a comma-separated list of {', '.join(GROUP_COLUMNS)}")
    filters = filter_args(args)
    session = open_sources(args)
    extras = Extras()
    if "finding" in by:
        findings_index(session, extras)
    mask = session.facets.apply(filter_state(session, filters, extras)).visible
    if args.pareto:
        return _pareto(session, mask, args.format)
    names = session.dataset_names
    if len(names) >= 2 and set(by) == {"dataset", "task"}:
        comparisons = [head_to_head(session, mask, names[0], other) for other in names[1:]]
        records = [_head_to_head_record(c.a, c.b, row) for c in comparisons for row in c.rows]
        if args.format == "table":
            for index, c in enumerate(comparisons):
                print(("\n" if index else "") + f"{c.a} vs {c.b}: {len(c.rows)} shared tasks")
                print_table([_head_to_head_cells(c.a, c.b, row) for row in c.rows])
            return 0
    else:
        running = bool(np.count_nonzero(session.trials.outcome[mask] == RUNNING))
        usage = group_usage(session, mask, by)
        records = [_group_record(by, row, running, usage.get(row.key)) for row in group_stats(session, mask, by)]
        if args.format == "table":
            print_table([{k: _cell(k, v) for k, v in r.items() if k not in USAGE_NOT_IN_TABLE} for r in records])
            return 0
    if args.format == "json":
        write_json(records)
    else:
        write_csv(records)
    return 0


def _pareto(session, mask, format: str) -> int:
    points = pareto(session, mask)
    if not points:
        raise SourceError("--pareto: no trial records a cost (harbor job folders do; exported datasets do not)")
    records: list[Record] = [
        {
            "model": p.model,
            "trials": p.trials,
            "mean_cost_usd": p.cost,
            "pass_rate": p.pass_rate,
            "frontier": p.frontier,
        }
        for p in points
    ]
    if format == "table":
        print_table(
            [{**{k: _cell(k, v) for k, v in r.items()}, "frontier": "*" if r["frontier"] else ""} for r in records]
        )
    elif format == "json":
        write_json(records)
    else:
        write_csv(records)
    return 0


USAGE_NOT_IN_TABLE = ("cached_tokens", "agent_seconds", "mean_input_tokens", "mean_cached_tokens", "mean_output_tokens")
"""Usage figures csv and json give but the table leaves out, to stay readable."""


def _group_record(by: tuple[str, ...], row, running: bool = False, usage: GroupUsage | None = None) -> Record:
    """A group's counts; `running` (trials of harbor job folders still running, not graded) when any
    is; tokens, cost and agent time (totals and means) and the cost per passed trial when recorded."""
    c = row.counts
    figures: Record = {}
    if usage is not None:
        figures = {name: usage.totals[name] for name in GROUP_FIELDS}
        figures |= {f"mean_{name}": usage.means[name] for name in GROUP_FIELDS}
        figures["cost_per_pass"] = usage.cost_per_pass
    return {
        **dict(zip(by, row.key)),
        "trials": c.trials,
        "pass": c.passed,
        "partial": c.partial,
        "fail": c.failed,
        "error": c.errors,
        "unknown": c.unknown,
        **({"running": c.running} if running else {}),
        "pass_rate": c.pass_rate,
        "mean_reward": c.mean_reward,
        **figures,
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
    if key.endswith("pass_rate"):
        return f"{value:.1%}"
    if key.endswith("tokens"):
        return f"{value:,.0f}"
    if "cost" in key:
        return f"${value:,.4f}"
    if key.endswith("seconds"):
        return f"{value:,.0f}s"
    return f"{value:.3f}"

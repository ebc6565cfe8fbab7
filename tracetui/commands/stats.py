"""`tracetui stats SOURCE…`: pass rates grouped by any columns, or a head-to-head of datasets per task.

Every pass rate comes with its 95% Wilson interval and the rate without reward hacks (the findings
index is built, or read back, for it); model groupings add pass@k, task groupings the task's health.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ..data.errors import SourceError
from ..data.estimates import PassAtK
from ..data.facets import ASK_PREFIX
from ..data.stats import GROUP_COLUMNS, GroupRow, HeadToHead, PassAtKRow, group_stats, hacked_trials, head_to_head
from ..data.stats import pass_at_k as pass_at_k_rows
from ..data.trials import RUNNING
from ..data.usage import GROUP_FIELDS, GroupUsage, group_usage, pareto
from . import run as run_command
from . import subcommand
from .output import Record, print_note, print_table, write_csv, write_json
from .selection import Extras, ask_index, filter_args, filter_state, findings_index, open_sources, task_health


def parser():
    parser = subcommand(
        "stats",
        "Pass rates per group of trials, each with its 95% Wilson interval and the rate without reward "
        "hacks (a pass counts only when the trial has no test-tampering, verifier-bypass or upstream-fetch "
        "finding), pass@k per group (the unbiased estimator, over tasks), and with --by task each task's "
        "health. With two or more sources and --by dataset,task: a head-to-head per task of the first "
        "dataset against each other one, sorted by the difference, with a paired bootstrap interval of the "
        "mean difference. --by finding or task_health counts a trial once under each value it has, (none) "
        "when it has none; --by ask:NAME groups by the answers to a question asked with tracetui ask.",
        formats=("table", "csv", "json"),
        filters="count only matching trials, e.g. outcome=fail or task_health=flaky",
        exclude=True,
    )
    parser.add_argument(
        "--by",
        default="model",
        help=f"comma-separated columns among {', '.join(GROUP_COLUMNS)}, ask:NAME (default: model)",
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
    unknown = [name for name in by if name not in GROUP_COLUMNS and not name.startswith(ASK_PREFIX)]
    if not by or unknown:
        raise SourceError(f"--by {args.by!r}: expected a comma-separated list of {', '.join(GROUP_COLUMNS)}, ask:NAME")
    filters = filter_args(args)
    session = open_sources(args)
    extras = Extras()
    hacked = None
    try:
        hacked = hacked_trials(findings_index(session, extras))
    except SourceError as exc:  # a dataset left on the hub: the rates are shown without the hack-free ones
        print(f"tracetui: no pass rate without hacks: {exc}", file=sys.stderr)
    health = task_health(session, extras) if {"task", "task_health"} & set(by) else None
    for name in by:
        if name.startswith(ASK_PREFIX):
            ask_index(session, extras, name)
    mask = session.facets.apply(filter_state(session, filters, extras)).visible
    if args.pareto:
        return _pareto(session, mask, args.format)
    names = session.dataset_names
    if len(names) >= 2 and set(by) == {"dataset", "task"}:
        comparisons = [head_to_head(session, mask, names[0], other, hacked=hacked) for other in names[1:]]
        records = [record for c in comparisons for record in _head_to_head_records(c)]
        if args.format == "table":
            for index, c in enumerate(comparisons):
                print(("\n" if index else "") + f"{c.a} vs {c.b}: {len(c.rows)} shared tasks")
                for line in _comparison_lines(c):
                    print_note(line, indent="  ")
                print_table([_head_to_head_cells(row) for row in c.rows])
            return 0
    else:
        groups = group_stats(session, mask, by, hacked)
        at_k = {row.key: row for row in pass_at_k_rows(session, mask, by, hacked)}
        tags: dict[str, tuple[str, ...]] = {}
        if health is not None and "task" in by:
            labels = session.trials.labels["task"]
            tags = {label: health.tags.get(code, ()) for code, label in enumerate(labels) if label is not None}
        flat = args.format == "csv"
        running = bool(np.count_nonzero(session.trials.outcome[mask] == RUNNING))
        usage = group_usage(session, mask, by)
        records = [_group_record(by, row, at_k.get(row.key), tags, flat, running, usage.get(row.key)) for row in groups]
        if args.format == "table":
            print_table([_group_cells(by, row, tags, running, usage.get(row.key)) for row in groups], spare=SPARE)
            if at_k:
                print()
                _print_pass_at_k(by, list(at_k.values()))
            return 0
    if args.format == "json":
        write_json(records)
    else:
        write_csv(records, list(dict.fromkeys(key for record in records for key in record)))
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


def _group_record(
    by: tuple[str, ...],
    row: GroupRow,
    at_k: PassAtKRow | None,
    tags: dict[str, tuple[str, ...]],
    flat: bool,
    running: bool = False,
    usage: GroupUsage | None = None,
) -> Record:
    """A group's figures; pass@k as lists of {k, value, tasks, left_out}, or `flat` (csv) as columns
    `pass@1`, `pass@1_tasks`, `pass@1_left_out`, `pass@1_without_hacks`, …; `running` (trials of harbor
    job folders still running, not graded) when any is; tokens, cost and agent time (totals and means)
    and the cost per passed trial when recorded."""
    c = row.counts
    record: Record = dict(zip(by, row.key))
    if tags:
        record["task_health"] = list(tags.get(row.key[by.index("task")], ()))
    record |= {
        "trials": c.trials,
        "pass": c.passed,
        "partial": c.partial,
        "fail": c.failed,
        "error": c.errors,
        "unknown": c.unknown,
        **({"running": c.running} if running else {}),
        "pass_rate": c.pass_rate,
        "pass_rate_low": c.interval[0],
        "pass_rate_high": c.interval[1],
        "hacked_passes": c.hacked,
        "pass_rate_without_hacks": c.pass_rate_without_hacks,
        "pass_rate_without_hacks_low": c.interval_without_hacks[0],
        "pass_rate_without_hacks_high": c.interval_without_hacks[1],
        "mean_reward": c.mean_reward,
        **_usage_figures(usage),
    }
    if at_k is None:
        return record
    clean = at_k.without_hacks
    if not flat:
        record["pass_at_k"] = [_k_record(k) for k in at_k.ks]
        record["pass_at_k_without_hacks"] = None if clean is None else [_k_record(k) for k in clean]
        return record
    hack_free = {k.k: k.value for k in clean or ()}
    for k in at_k.ks:
        name = f"pass@{k.k}"
        record |= {name: k.value, f"{name}_tasks": k.tasks, f"{name}_left_out": k.left_out}
        record[f"{name}_without_hacks"] = hack_free.get(k.k)
    return record


SPARE = (
    "unknown",
    "partial",
    "mean_reward",
    "hacked",
    *(f"mean_{name}" for name in GROUP_FIELDS),
    *GROUP_FIELDS,
    "cost_per_pass",
    "error",
    "95%_interval",
)
"""The table's columns it leaves out, first to last, where the terminal is too narrow for all of them
(the pass rate without hacks says what `hacked` counts)."""


def _usage_figures(usage: GroupUsage | None) -> Record:
    """Tokens, cost and agent time, totals and means, and the cost per passed trial; nothing for a source
    that does not record them."""
    if usage is None:
        return {}
    figures: Record = {name: usage.totals[name] for name in GROUP_FIELDS}
    figures |= {f"mean_{name}": usage.means[name] for name in GROUP_FIELDS}
    figures["cost_per_pass"] = usage.cost_per_pass
    return figures


def _k_record(k: PassAtK) -> dict[str, object]:
    return {"k": k.k, "value": k.value, "tasks": k.tasks, "left_out": k.left_out}


def _group_cells(
    by: tuple[str, ...],
    row: GroupRow,
    tags: dict[str, tuple[str, ...]],
    running: bool = False,
    usage: GroupUsage | None = None,
) -> dict[str, str]:
    c = row.counts
    cells = dict(zip(by, row.key))
    if tags:
        cells["task_health"] = " ".join(tags.get(row.key[by.index("task")], ())) or "-"
    cells |= {
        "trials": str(c.trials),
        "pass": str(c.passed),
        "partial": str(c.partial),
        "fail": str(c.failed),
        "error": str(c.errors),
        "unknown": str(c.unknown),
        **({"running": str(c.running)} if running else {}),
        "pass_rate": _rate(c.pass_rate),
        "95%_interval": _interval(*c.interval),
        "without_hacks": _rate(c.pass_rate_without_hacks),
        "hacked": "-" if c.hacked is None else str(c.hacked),
        "mean_reward": "-" if math.isnan(c.mean_reward) else f"{c.mean_reward:.3f}",
    }
    cells |= {k: _cell(k, v) for k, v in _usage_figures(usage).items() if k not in USAGE_NOT_IN_TABLE}
    return cells


def _print_pass_at_k(by: tuple[str, ...], rows: list[PassAtKRow]) -> None:
    """pass@k as a table: a cell whose k left tasks out (fewer attempts than k) says how many it averages."""
    every_k = sorted({k.k for row in rows for k in row.ks})
    table = []
    partial = hacks = False
    for row in rows:
        cells = dict(zip(by, row.key))
        cells["tasks"] = str(row.ks[0].tasks) if row.ks else "0"
        found, clean = {k.k: k for k in row.ks}, {k.k: k for k in row.without_hacks or ()}
        for k in every_k:
            entry = found.get(k)
            text = "-" if entry is None else _rate(entry.value)
            if entry is not None and k in clean and clean[k].value != entry.value:
                text += f" / {_rate(clean[k].value)}"
                hacks = True
            if entry is not None and entry.left_out:
                text += f" ({entry.tasks})"
                partial = True
            cells[f"pass@{k}"] = text
        table.append(cells)
    most = every_k[-1]
    print_note(
        f"pass@k up to {most} graded attempt{'s' * (most != 1)} per task (the unbiased estimator, averaged over tasks)"
    )
    print_table(table)
    if hacks:
        print_note("a / b: b counts only the passes without a reward-hack finding")
    if partial:
        print_note("(n): averaged over the n tasks with at least k graded attempts; the others are left out of that k")


def _head_to_head_records(c: HeadToHead) -> list[Record]:
    difference = c.difference()
    return [
        {
            "task": row.task,
            "a": c.a,
            "a_attempts": row.a.trials,
            "a_passes": row.a.passed,
            "a_hacked_passes": row.a.hacked,
            "a_pass_rate": row.a.pass_rate,
            "b": c.b,
            "b_attempts": row.b.trials,
            "b_passes": row.b.passed,
            "b_hacked_passes": row.b.hacked,
            "b_pass_rate": row.b.pass_rate,
            "diff": row.diff,
            "compared_tasks": difference.tasks,
            "mean_diff": difference.mean,
            "mean_diff_low": difference.low,
            "mean_diff_high": difference.high,
            "within_noise": difference.noise,
        }
        for row in c.rows
    ]


def _comparison_lines(c: HeadToHead) -> list[str]:
    """Each side's pass rate over the shared tasks, and whether the difference is noise."""
    lines = []
    for letter, name, counts in zip("AB", (c.a, c.b), c.side_totals()):
        line = f"{letter} = {name}: pass {_rate(counts.pass_rate)}"
        if not math.isnan(counts.interval[0]):
            line += f" (95% {_interval(*counts.interval)})"
        if counts.hacked is not None:
            line += f" · {_rate(counts.pass_rate_without_hacks)} without hacks ({_hacked(counts.hacked)})"
        lines.append(line)
    lines.append("A − B, mean over tasks: " + c.difference().verdict())
    hacks = [counts.hacked for counts in c.side_totals()]
    if all(h is not None for h in hacks) and any(hacks):
        lines.append("without hacks: " + c.difference(without_hacks=True).verdict())
    return lines


def _head_to_head_cells(row) -> dict[str, str]:
    """A table row; the lines above it say which dataset A and B are."""
    cells = {"task": row.task}
    for letter, side in (("A", row.a), ("B", row.b)):
        cells[f"{letter}_attempts"] = str(side.trials)
        cells[f"{letter}_pass_rate"] = _rate(side.pass_rate) if side.rewarded else "-"
    cells["diff"] = "-" if math.isnan(row.diff) else f"{row.diff:+.1%}"
    return cells


def _rate(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1%}"


def _interval(low: float, high: float) -> str:
    return "-" if math.isnan(low) else f"{100 * low:.1f}–{100 * high:.1f}%"


def _hacked(count: int) -> str:
    return f"{count} hacked pass{'es' * (count != 1)}"


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

"""`tracetui ask SOURCE… QUESTION`: ask every matching trial a yes/no question through an OpenAI-compatible
endpoint, one record per answer.

The record format: dataset, trial_name, task, model, result, question (its short name: the facet
`ask:NAME`), answer (yes / no / unclear / unverified), verdict (what the model said), message (0-based,
the message holding the quote), cited (the message the model named), quote, reason. Answers are kept
as they arrive; Ctrl+C stops the run, prints what came and the next run asks only the rest.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections import Counter

from ..data.errors import SourceError
from . import end_progress, print_progress, subcommand
from . import run as run_command
from .output import print_note, trial_record, write_records
from .selection import Extras, chosen_trials, filter_args, open_sources

FIELDS = (
    "dataset",
    "trial_name",
    "task",
    "model",
    "result",
    "question",
    "answer",
    "verdict",
    "message",
    "cited",
    "quote",
    "reason",
)
TABLE_FIELDS = ("trial_name", "answer", "message", "quote", "reason")


def parser():
    parser = subcommand(
        "ask",
        "Ask every matching trial a yes/no question through an OpenAI-compatible server (vLLM, SGLang, "
        "llama.cpp server): per trial a verdict, the message that shows it, a quote checked against the "
        "trial (unverified when it is not there) and a reason. Answers are kept: they become the filter "
        "ask:NAME=yes|no|unclear|unverified of every command, and asking again asks only what is new.",
        formats=("table", "jsonl", "csv"),
        filters="ask only trials with this value, e.g. outcome=fail",
        exclude=True,
    )
    parser.add_argument("question", metavar="QUESTION", help='e.g. "Did the agent give up without running the tests?"')
    parser.add_argument(
        "--name", help="the question's short name (default: from its words), as in --filter ask:NAME=yes"
    )
    parser.add_argument(
        "--endpoint", metavar="URL", help="the API's base URL (default: $OPENAI_BASE_URL, [ask] endpoint)"
    )
    parser.add_argument("--model", help="the model to ask (default: [ask] model, else the one the server serves)")
    parser.add_argument("--parallel", type=_positive, metavar="N", help="requests at once (default: 4)")
    parser.add_argument(
        "--limit", type=_positive, metavar="N", help="ask a sample of N trials first (the same each time)"
    )
    parser.add_argument(
        "--max-tokens-per-trial",
        type=_positive,
        metavar="N",
        help="the most of a trial's text sent, in tokens (default: what the model's context leaves)",
    )
    parser.add_argument(
        "--timeout", type=_positive, metavar="SECONDS", help="the longest a reply may take (default: 180)"
    )
    parser.add_argument(
        "--show-prompt", metavar="TRIAL", help="print the prompt this trial would get (trial name or task), ask nothing"
    )
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return value


def run(argv: list[str]) -> int:
    return run_command(parser(), argv, _ask)


def _ask(args) -> int:
    from ..ask.client import EndpointError
    from ..ask.endpoint import resolve_settings
    from ..ask.run import AskRun, connect
    from ..store.config import config_path, load_config

    question = " ".join(args.question.split())
    if not question:
        raise SourceError("the question is empty")
    filters = filter_args(args)
    config, warning = load_config()
    if warning:
        print_note(f"tracetui: {warning}", file=sys.stderr)
    options = (args.endpoint, args.model, args.parallel, args.max_tokens_per_trial, args.timeout)
    if args.show_prompt is not None:
        return _show_prompt(args, question, config.ask)
    settings = resolve_settings(config.ask, os.environ, *options, where=str(config_path()))
    session = open_sources(args)
    trials = [int(t) for t in chosen_trials(session, filters, Extras())]
    try:
        target = connect(settings, question, args.name)
    except EndpointError as exc:
        raise SourceError(f"cannot ask {settings.endpoint.url}: {exc}") from None
    if args.limit is not None:
        trials = _sample(session, trials, args.limit)
    asking = AskRun(session, trials, target.book, target.client, target.budget, settings.parallel)
    _say_plan(session, asking, target, settings)
    results = {}
    counts: Counter[str] = Counter()

    def on_result(asked) -> None:
        if asked.answer is not None:
            results[asked.trial] = asked.answer
        elif asked.failure != "cancelled":
            end_progress()
            name = session.info(asked.trial).trial_name or f"trial {asked.trial}"
            print_note(f"tracetui: {_cell(name)}: {asked.failure}", file=sys.stderr)
        counts["cached" if asked.cached else "answered" if asked.answer else "failed"] += 1
        done = sum(counts.values())
        print_progress(
            done / max(1, len(trials)),
            f"asked {done:,}/{len(trials):,} ({counts['cached']:,} before, {counts['failed']:,} failed)",
        )

    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        summary = asking.run(on_result, stop.is_set)
    finally:
        signal.signal(signal.SIGINT, previous)
        end_progress()
    _print(args.format, session, target.book.name, [t for t in trials if t in results], results)
    values = Counter(answer.value for answer in results.values())
    tally = ", ".join(f"{values[v]:,} {v}" for v in ("yes", "no", "unclear", "unverified"))
    print_note(
        f"ask:{target.book.name}: {tally} ({summary.cached:,} answered before, {summary.failed:,} failed)",
        file=sys.stderr,
    )
    if target.book.problem:
        print_note(f"tracetui: {target.book.problem}", file=sys.stderr)
    if summary.cancelled:
        print_note("tracetui: cancelled; the answers so far are kept, and asking again asks the rest", file=sys.stderr)
        return 130
    if summary.stopped:
        print_note(f"tracetui: {summary.stopped}; asking again asks the rest", file=sys.stderr)
    return 1 if summary.failed else 0


def _say_plan(session, asking, target, settings) -> None:
    from ..ask.prompt import estimate_tokens

    new = asking.unanswered()
    count, before = len(asking.trials), len(asking.trials) - len(new)
    tokens = estimate_tokens(session, new, target.budget)
    again = f", {before:,} of them answered before" if before else ""
    print_note(
        f"Asking {count:,} trial{'s' * (count != 1)}{again}: at most ~{tokens:,} prompt tokens "
        f"(up to {target.budget:,} a trial) to {_cell(target.model.id)} at {settings.endpoint.url}, "
        f"{settings.parallel} at a time; the answers are ask:{target.book.name}",
        file=sys.stderr,
    )
    if target.note:
        print_note(f"tracetui: {target.note}", file=sys.stderr)


def _show_prompt(args, question: str, table) -> int:
    """Print the prompt one trial would get; the server is asked only for its context length."""
    from ..ask.client import ChatClient, EndpointError, served_model
    from ..ask.endpoint import resolve_settings
    from ..ask.prompt import budget_for, build_prompt
    from ..ask.run import findings_evidence
    from ..trace.sanitize import sanitize

    session = open_sources(args)
    trial = session.find_trial(args.show_prompt)
    if trial is None:
        raise SourceError(f"--show-prompt {args.show_prompt!r}: no trial of that name or task")
    context, where = None, ""
    try:
        settings = resolve_settings(table, os.environ, args.endpoint, args.model, timeout=5)
        context = served_model(ChatClient(settings.endpoint, 5.0)).context
    except (SourceError, EndpointError) as exc:
        where = f" (the server's context length unknown: {exc})"
    budget, note = budget_for(context, args.max_tokens_per_trial)
    prompt = build_prompt(session, trial, question, budget, lambda: findings_evidence(session, trial))
    print(sanitize(prompt.text))
    print_note(
        f"~{prompt.tokens:,} tokens (up to {budget:,} of trial text{where}); {prompt.shown} of "
        f"{prompt.shown + prompt.left_out} messages shown, {prompt.cut} cut to fit" + (f"; {note}" if note else ""),
        file=sys.stderr,
    )
    return 0


def _sample(session, trials: list[int], limit: int) -> list[int]:
    """`limit` of `trials`, the same ones each time (a larger limit takes the smaller one's too), in list order."""
    from ..ask.index import fingerprint

    if len(trials) <= limit:
        return trials
    chosen = set(sorted(trials, key=lambda t: fingerprint(session, t))[:limit])
    return [t for t in trials if t in chosen]


def _print(format_: str, session, name: str, trials, answers) -> None:
    records = []
    for trial in trials:
        info, answer = session.info(trial), answers[trial]
        records.append(
            {
                **trial_record(info),
                "question": name,
                "answer": answer.value,
                "verdict": answer.verdict,
                "message": answer.message,
                "cited": answer.cited,
                "quote": answer.quote,
                "reason": answer.reason,
            }
        )
    write_records(format_, records, FIELDS, TABLE_FIELDS, "(no answers)", width=40, wrap="quote")


def _cell(text: str) -> str:
    from .output import cell

    return cell(text, 80)

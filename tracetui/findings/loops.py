"""Stuck agents: `repeat-loop` and `parse-error-loop`.

repeat-loop: three or more replies in a row ran the same commands (whitespace normalized) and got the
same output back (the harness's next message, trailing blanks ignored). Replies that ran nothing
(waiting) do not count. One finding per run, on its first reply.

parse-error-loop: three or more harness parse-error messages in a row (terminus-2's "Previous response
had parsing errors", with the agent's unparsable replies between them). One finding per run, on its
first error.
"""

from __future__ import annotations

from collections.abc import Iterator

from .model import Finding
from .trial import Trial

MIN_RUN = 3
_PARSE_ERROR_START = "Previous response had parsing errors"
"""Where the harness's parse-error notes start (`trace.harness` decides what they are)."""


def loop_findings(trial: Trial) -> Iterator[Finding]:
    yield from _repeats(trial)
    yield from _parse_errors(trial)


def _repeats(trial: Trial) -> Iterator[Finding]:
    """Runs of replies with equal output first (cheap), then equal commands (parsed only for those)."""
    messages = trial.messages
    replies = [i for i in trial.replies if i + 1 < len(messages) and messages[i + 1].role == "user"]
    outputs = [messages[i + 1].content for i in replies]
    start = 0
    while start < len(replies):
        end = start + 1
        while end < len(replies) and replies[end] == replies[end - 1] + 2 and _same(outputs[end], outputs[start]):
            end += 1
        if end - start >= MIN_RUN:
            yield from _same_commands(trial, replies[start:end])
        start = end


def _same(a: str, b: str) -> bool:
    """Equal but for trailing blanks (the harness pads its screens); different lengths say no at once."""
    return a == b or (abs(len(a) - len(b)) < 256 and a.rstrip() == b.rstrip())


def _same_commands(trial: Trial, replies: list[int]) -> Iterator[Finding]:
    """Within replies that all got the same output: runs of MIN_RUN or more with the same commands."""
    keys = [trial.step(i).keys for i in replies]
    start = 0
    while start < len(replies):
        end = start + 1
        while end < len(replies) and keys[end] == keys[start]:
            end += 1
        if end - start >= MIN_RUN and keys[start]:
            command = keys[start][0]
            evidence = f"{command} ×{end - start} with the same output (messages {replies[start]}–{replies[end - 1]})"
            yield trial.finding(
                "repeat-loop", replies[start], evidence, *trial.step(replies[start]).scripts[:1], command
            )
        start = end


def _parse_errors(trial: Trial) -> Iterator[Finding]:
    run: list[int] = []
    for i, message in enumerate(trial.messages):
        if message.role != "user":
            continue
        if message.content.startswith(_PARSE_ERROR_START) and trial.user_kind(i) == "parse_error":
            run.append(i)
            continue
        yield from _parse_error_run(trial, run)
        run = []
    yield from _parse_error_run(trial, run)


def _parse_error_run(trial: Trial, run: list[int]) -> Iterator[Finding]:
    if len(run) >= MIN_RUN:
        first = trial.messages[run[0]].content
        reason = next((line for line in first.splitlines()[1:] if line.strip()), "")
        evidence = f"{len(run)} parse errors in a row (messages {run[0]}–{run[-1]}): {reason}"
        yield trial.finding("parse-error-loop", run[0], evidence, first.split("\n", 1)[0])

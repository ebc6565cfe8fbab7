"""How the trial ended and what the harness did to it: `timeout`, `context-overflow`, `infra-error`, `summarized`.

The first three come from the exception class name Harbor writes as the trial's `result`, cited on the
last message (where the trial stopped). Unknown exception names give nothing: no guessing. A harness
command time-out ("The previous command timed out after N seconds") is not the trial timing out.
`summarized` comes from the context-summarization hand-off messages, a history that restarted, or
the trial's sub-agent rows; it cites the first hand-off.
"""

from __future__ import annotations

from collections.abc import Iterator

from .endings import ending_kind
from .model import Finding
from .trial import Trial


def outcome_findings(trial: Trial) -> Iterator[Finding]:
    last = len(trial.messages) - 1
    kind = ending_kind(trial.result)
    if kind is not None:
        yield trial.finding(kind, last, f"result: {(trial.result or '').strip()}")
    restart = next((i for i, m in enumerate(trial.messages) if m.restart), None)
    if restart is None and not trial.summarized:
        return
    # the restart is the first hand-off message, as a rule: look there first
    order = [restart] if restart is not None else []
    order += [i for i, m in enumerate(trial.messages) if m.role == "user" and i != restart]
    handoff = next((i for i in order if trial.user_kind(i) == "handoff"), None)
    if handoff is not None:
        line = trial.messages[handoff].content.split("\n", 1)[0]
        yield trial.finding("summarized", handoff, line, line)
    elif restart is not None:
        yield trial.finding("summarized", restart, "the history restarts here after a context summarization")
    else:
        yield trial.finding("summarized", last, "the trial has context-summarization sub-agent rows")

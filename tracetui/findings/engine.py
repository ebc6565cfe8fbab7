"""The one entry point: a trial's history, result and verifier log in, its findings out; never raises."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from ..trace.model import TrialHistory
from . import claims, fetch, loops, outcome, verifier
from .model import Finding
from .trial import Trial, VerifierLog

RULES_VERSION = 1
"""Bump when a rule changes what it finds: cached indexes built by older rules are rebuilt."""

_RULES: tuple[Callable[[Trial], Iterable[Finding]], ...] = (
    verifier.verifier_findings,
    fetch.fetch_findings,
    claims.claim_findings,
    loops.loop_findings,
    outcome.outcome_findings,
)


def find_findings(
    history: TrialHistory,
    result: str | None = None,
    verifier_log: VerifierLog = None,
    *,
    summarized: bool | None = None,
    verifier_tests: int | None = None,
) -> list[Finding]:
    """Every finding of one trial, sorted by message then kind, one per (kind, message).

    `verifier_log` may be a callable, read only if a rule needs the log; `verifier_tests`, how many
    tests the log shows when the caller knows already (a verifier index), spares parsing it.
    `summarized` says whether the trial has context-summarization sub-agent rows (default: whether
    `history` holds any). A rule that fails on odd content contributes nothing; the others still run.
    """
    try:
        if summarized is None:
            summarized = bool(history.subagents)
        trial = Trial(
            history.messages, result if isinstance(result, str) else None, verifier_log, summarized, verifier_tests
        )
    except Exception:
        return []
    found: dict[tuple[str, int], Finding] = {}
    for rule in _RULES:
        for finding in _guarded(rule, trial):
            found.setdefault((finding.kind, finding.message), finding)
    return sorted(found.values(), key=Finding.sort_key)


def _guarded(rule: Callable[[Trial], Iterable[Finding]], trial: Trial) -> Iterator[Finding]:
    """The rule's findings; on an exception, none of them (half a rule's findings would mislead)."""
    try:
        return iter(list(rule(trial)))
    except Exception:
        return iter(())

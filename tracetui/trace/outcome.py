"""What a trial's `result` value says: a reward string, an exception class name, or nothing; and
`running`, for a trial of a harbor job folder that has no result yet (no `result` value says that)."""

from __future__ import annotations

import math

OUTCOMES = ("pass", "partial", "fail", "error", "unknown", "running")
PASS, PARTIAL, FAIL, ERROR, UNKNOWN, RUNNING = range(6)
NOT_GRADED = (UNKNOWN, RUNNING)
"""Outcomes that are no grade: pass rates leave them out."""


def outcome_of(result: str | None) -> tuple[int, float]:
    """(outcome class, reward) of a `result` value: a reward string, an exception name, or null."""
    if result is None or not result.strip():
        return UNKNOWN, math.nan
    try:
        reward = float(result)
    except ValueError:
        return ERROR, math.nan
    if math.isnan(reward):
        return UNKNOWN, math.nan
    if reward >= 1.0:
        return PASS, reward
    return (PARTIAL, reward) if reward > 0.0 else (FAIL, reward)

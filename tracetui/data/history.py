"""Rebuild a trial's full history once from its nested-prefix episode rows.

Row `episode-K` repeats every message of row K-1 and adds the new ones, so we read only the new tail of
each row: one comparison of the previous row's last message tells an extension from a restart. After a
context summarization the row is shorter and starts over from the first prompt; then the messages past
the common prefix are new, and the first of them is marked as a restart.
"""

from __future__ import annotations

import re

from .dataset import Storage
from ..trace.model import Message, SubConversation, TrialHistory


def rebuild_history(
    ds: Storage, rows: list[int], episodes: list[int], sub_rows: list[tuple[int, str | None]]
) -> TrialHistory:
    messages: list[Message] = []
    prev_row: int | None = None
    prev_count = 0
    for row, episode in zip(rows, episodes):
        count = ds.message_count(row)
        if prev_row is None:
            shared = 0
        elif count > prev_count and ds.message(row, prev_count - 1) == ds.message(prev_row, prev_count - 1):
            shared = prev_count
        else:
            shared = _common_prefix(ds, prev_row, row, min(prev_count, count))
        restart = prev_row is not None and shared < prev_count
        for offset, (role, content) in enumerate(ds.messages(row, shared, count)):
            messages.append(Message(role or "unknown", content or "", episode, len(messages), restart and offset == 0))
        prev_row, prev_count = row, count
    subagents = tuple(
        SubConversation(
            source or "sub-agent",
            tuple(
                Message(role or "unknown", content or "", 0, i) for i, (role, content) in enumerate(ds.messages(row))
            ),
        )
        for row, source in sorted(sub_rows, key=lambda item: _sub_agent_order(item[1]))
    )
    return TrialHistory(tuple(messages), tuple(episodes), subagents)


def _sub_agent_order(source: str | None) -> tuple:
    """summarization-1-summary, -questions, -answers, then summarization-2-…: the order they ran in."""
    match = re.match(r"^summarization-(\d+)-(\w+)$", source or "")
    if not match:
        return (1 << 30, source or "")
    kinds = ("summary", "questions", "answers")
    kind = match.group(2)
    return (int(match.group(1)), kinds.index(kind) if kind in kinds else len(kinds), kind)


def _common_prefix(ds: Storage, a: int, b: int, limit: int) -> int:
    left, right = ds.messages(a, 0, limit), ds.messages(b, 0, limit)
    for index, (x, y) in enumerate(zip(left, right)):
        if x != y:
            return index
    return limit

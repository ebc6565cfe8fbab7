"""Rebuild a trial's full history once from its nested-prefix episode rows.

Row `episode-K` repeats every message of row K-1 and adds the new ones, so we read only the new tail of
each row: one comparison of the previous row's last message tells an extension from a restart. After a
context summarization the row is shorter and starts over from the first prompt; then the messages past
the common prefix are new, and the first of them is marked as a restart.
"""

from __future__ import annotations

import re

from ..trace.model import Message, SubConversation, TrialHistory
from .dataset import Storage


def rebuild_history(
    ds: Storage, rows: list[int], episodes: list[int], sub_rows: list[tuple[int, str | None]]
) -> TrialHistory:
    messages: list[Message] = []
    prev_row: int | None = None
    prev_count = 0
    prev_last: tuple[str, str] | None = None  # the previous row's last message
    for row, episode in zip(rows, episodes):
        count = ds.message_count(row)
        # one read per row: the previous row's last position (to tell an extension) and what is new
        extends = prev_row is not None and 0 < prev_count < count
        tail = ds.messages(row, prev_count - 1, count) if extends else []
        if prev_row is None:
            shared, fresh = 0, ds.messages(row, 0, count)
        elif tail and tail[0] == prev_last:
            shared, fresh = prev_count, tail[1:]
        else:
            shared = _common_prefix(ds, prev_row, row, min(prev_count, count))
            fresh = ds.messages(row, shared, count)
        restart = prev_row is not None and shared < prev_count
        for offset, (role, content) in enumerate(fresh):
            messages.append(Message(role or "unknown", content or "", episode, len(messages), restart and offset == 0))
        prev_last = fresh[-1] if fresh else (ds.message(row, count - 1) if count else None)
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


def _sub_agent_order(source: str | None) -> tuple[int | str, ...]:
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

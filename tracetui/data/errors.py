"""The one error type the data layer raises for a source it cannot open, and the shape of its lines."""

from __future__ import annotations

from collections.abc import Iterable


class SourceError(Exception):
    """A source that cannot be opened; the message is one line, meant for the user as is."""


class Unreachable(SourceError):
    """The hub did not answer (refused, timed out, 5xx); the message is one line."""


def first_line(exc: BaseException) -> str:
    """An exception's message cut to its first line, for a SourceError built from it."""
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def listed(values: Iterable[object]) -> str:
    """Names for a message, whatever they are (`datasets` names splits with objects, JSON with anything)."""
    return ", ".join(map(str, values)) or "none"

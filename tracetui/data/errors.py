"""The one error type the data layer raises for a source it cannot open, and the shape of its lines."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from ..trace.sanitize import sanitize

LINE_LIMIT = 300
"""The longest line an error or notice may be (a 100,000-digit value in it is cut, not printed)."""


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


def one_line(text: str, limit: int = LINE_LIMIT) -> str:
    """`text` as one safe line of at most `limit` characters, for the user: whitespace runs (newlines
    too) become one space, control sequences are neutralized, and a longer text keeps its head (what it
    is about) and its tail (what to do) around an ellipsis."""
    flat = " ".join(sanitize(text).split())
    if len(flat) <= limit:
        return flat
    head = (limit - 1) * 2 // 3
    return f"{flat[:head]}…{flat[len(flat) - (limit - 1 - head) :]}"


@contextmanager
def naming(name: str) -> Iterator[None]:
    """A SourceError raised inside names `name` (the source it is about) first, unless it names it already."""
    try:
        yield
    except SourceError as error:
        message = str(error)
        if not name or name in message or message.startswith(name.rstrip("/").rsplit("/", 1)[-1]):
            raise
        raise type(error)(f"{name}: {message}") from error

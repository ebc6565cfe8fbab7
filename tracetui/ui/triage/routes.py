"""Key actions that a part of the screen carries out. Textual looks an action up by name on the screen
(`action_find`); `action_find = Route("search", "find")` there calls `screen.search.find()`, with any
arguments given here, then the binding's. tests/test_triage_parts.py checks that each one resolves.

An action over every trial (`whole`: search, export, stats, …) waits while a hub dataset's list is still
growing (`Session.growing`): it would cover only the trials in so far; the message line says so."""

from __future__ import annotations

from functools import partial
from typing import Any


class Route:
    def __init__(self, part: str, method: str, *args: object, whole: str = "") -> None:
        self.part = part
        self.method = method
        self.args = args
        self.whole = whole
        """What the action does, said when it waits for the whole list ("" when it does not need it)."""

    def __get__(self, screen: object, owner: type | None = None) -> Any:
        """On a screen: the part's bound method (the route itself on the class)."""
        if screen is None:
            return self
        method = getattr(getattr(screen, self.part), self.method)
        bound = partial(method, *self.args) if self.args else method
        return partial(_when_whole, screen, self.whole, bound) if self.whole else bound


def _when_whole(screen: Any, what: str, method: Any, *args: object) -> Any:
    growing = screen.session.growing
    if growing is None:
        return method(*args)
    read, total = growing
    screen.status(
        f"{what} waits for the whole list ({read:,} of {total:,} files in).",
        about=lambda: screen.session.growing is None,  # gone once the list is whole
    )
    return None

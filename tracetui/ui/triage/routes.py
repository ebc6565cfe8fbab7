"""Key actions that a part of the screen carries out. Textual looks an action up by name on the screen
(`action_find`); `action_find = Route("search", "find")` there calls `screen.search.find()`, with any
arguments given here, then the binding's. tests/test_triage_parts.py checks that each one resolves."""

from __future__ import annotations

from functools import partial
from typing import Any


class Route:
    def __init__(self, part: str, method: str, *args: object) -> None:
        self.part = part
        self.method = method
        self.args = args

    def __get__(self, screen: object, owner: type | None = None) -> Any:
        """On a screen: the part's bound method (the route itself on the class)."""
        if screen is None:
            return self
        method = getattr(getattr(screen, self.part), self.method)
        return partial(method, *self.args) if self.args else method

"""Key actions that a part of the screen carries out. Textual looks an action up by name on the screen
(`action_find`); `action_find = Route("search", "find")` there calls `screen.search.find()`, with any
arguments given here, then the binding's. tests/test_triage_parts.py checks that each one resolves.

An action over every trial (`whole`: stats, head to head, compare) waits while a hub dataset's list is
still growing (`Session.growing`): it would cover only the trials in so far; the message line says so. One
that asks for text first (a search, an export, a question) opens its prompt all the same, and the work its
answer starts waits (`WhenWhole`): keys typed after `s` go into the prompt, not to the keys they would be
on the list."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ..evidence import FeatureHost


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


class WhenWhole:
    """Work over every listed trial that a prompt's answer starts (a search, an export, a question), asked
    for while a hub dataset's list still grows: the answer is checked at once (a bad query, a file that is
    there, no endpoint: said, or asked, now), the work kept until the list is whole (`release`), then
    started; the message line says so meanwhile, and Esc drops it (`drop`). A later one replaces it."""

    def __init__(self, screen: FeatureHost) -> None:
        self.screen = screen
        self.held: tuple[str, Callable[[], object]] | None = None
        """What the held work is, said ("Search for 'x'"), and the call that starts it."""

    def run(self, what: str, start: Callable[[], object]) -> None:
        """`start()` now on a whole list, else once it is whole."""
        if self.screen.session.growing is None:
            start()
            return
        held = self.held = (what, start)
        self.screen.status(
            f"{what} starts once the list is whole (Esc cancels).",  # its files in: the listing's bar beside
            hold=True,
            about=lambda: self.held is held,  # gone once it starts or is dropped
        )

    def release(self) -> None:
        """The list is whole: the held work, if any, starts."""
        if self.held is not None:
            _, start = self.held
            self.held = None
            start()

    def drop(self) -> bool:
        """Esc: the held work goes, and the message line says so; False when none was held."""
        if self.held is None:
            return False
        what, _ = self.held
        self.held = None
        self.screen.status(f"{what}: cancelled.")
        return True

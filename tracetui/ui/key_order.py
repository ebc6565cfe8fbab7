"""Keys handled in the order they were typed, each once the key before it has done all it does.

Textual routes a key to the widget focused when the app reads it, and runs its binding only once the
key has bubbled up to the app, through a queue at each widget on the way. Keys typed in one burst (a
fast typist, a paste into the terminal, a slow frame) are therefore all routed before the first has
acted: the text typed right after `a` misses the note editor that `a` opens, the `j` after Enter goes
to the list Enter just left. So the app hands keys over one at a time: the next one once the one
before has gone all the way up (a marker posted behind it, `KeyDone`, has reached the app), every
widget of the screen has handled the messages it caused (a focus moved through a message included),
and the screen shown is ready for typing (one of the app's, not Textual's default screen before it:
keys typed as the app starts; mounted, its text box focused, and not `holds_keys`: the triage screen's
panes about to show the trial a filter selected). A key never waits more than `MAX_WAIT` seconds for
the one before it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from time import monotonic
from weakref import WeakSet

from textual import events
from textual.app import App
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget

MAX_WAIT = 2.0
"""Seconds a key waits at most for the one before it (a widget removed with the marker in its queue)."""
POLL = 0.002
"""Seconds between looks while a key waits."""
NEWLINE = "ctrl+j"
"""Taken as Enter: Enter typed before the terminal went raw arrives as it (the tty turned its CR into LF:
`tracetui DATASET`, then `s`, a query and Enter straight away), and ^J is Enter to readline too."""
DEFAULT_SCREEN = "_default"
"""The id of the screen Textual shows before the app pushes one (`App.get_default_screen`)."""


@dataclass(eq=False)
class _Trip:
    """A key handed over: where it went, when, and whether it has gone all the way up."""

    target: Widget
    at: float = field(default_factory=monotonic)
    done: bool = False


@dataclass
class KeyDone(Message):
    """Posted to a key's first widget right behind it: it bubbles up the same way, behind the key."""

    trip: _Trip


class KeyOrder:
    """The app's keys, handed over to Textual one at a time (see the module's docstring)."""

    def __init__(self, app: App[object], deliver: Callable[[events.Event], Awaitable[None]]) -> None:
        """`deliver` is Textual's own handling of an event by the app."""
        self.app = app
        self.deliver = deliver
        self.waiting: deque[events.Key] = deque()
        self.last: _Trip | None = None
        self._checking = False
        self._ready: WeakSet[Screen[object]] = WeakSet()
        """Screens seen ready for typing once (later, a screen with nothing focused is not opening)."""

    @property
    def idle(self) -> bool:
        """No key waits, and the last one handed over has gone all the way up (or will not: its widget
        went, or it has had `MAX_WAIT`)."""
        return not self.waiting and self._settled()

    def done(self, marker: KeyDone) -> None:
        """The marker has reached the app: so has its key, if nothing on the way stopped it. The key is
        done once what its binding left in the app's queue has run too (`focus()` moves the focus from
        there: the prompt a key opens gets it before the next key is handed over)."""
        marker.stop()
        self.app.call_later(setattr, marker.trip, "done", True)

    async def take(self, event: events.Event) -> bool:
        """Whether `event` is taken here: a key typed, handed over now or later."""
        if not isinstance(event, events.Key) or event.is_forwarded or not self.app.screen_stack:
            return False  # a key that bubbled back up to the app goes on to its bindings
        self.waiting.append(events.Key("enter", "\r") if event.key == NEWLINE else event)
        await self._hand_over()
        return True

    async def _hand_over(self) -> None:
        while self.waiting and self._settled():
            if not self.app.screen_stack:  # the app is closing
                self.waiting.clear()
                return
            event = self.waiting.popleft()
            target: Widget = self.app.focused or self.app.screen
            self.last = _Trip(target)
            await self.deliver(event)
            target.post_message(KeyDone(self.last))
        if self.waiting and not self._checking:
            self._checking = True
            self.app.call_later(self._look_again)

    async def _look_again(self) -> None:
        """Called from the app's queue, behind anything the last key's handling put there (a focus)."""
        self._checking = False
        await asyncio.sleep(POLL)  # the widgets run meanwhile
        await self._hand_over()

    def _settled(self) -> bool:
        """Whether the last key handed over has done all it does and the screen is ready for typing. Keys
        typed as the app starts (the terminal hands them over once it is up) wait for its first screen:
        Textual's own default screen, until then, would drop them."""
        stack = self.app.screen_stack  # empty once the app has closed its screens
        if stack and stack[-1].id == DEFAULT_SCREEN:
            return False
        last = self.last
        if last is None or monotonic() - last.at > MAX_WAIT:
            return True
        if not last.done and last.target.is_attached:
            return False
        screen = self.app.screen
        if not screen.is_mounted:
            return False
        if screen not in self._ready:
            auto_focus = self.app.AUTO_FOCUS if screen.AUTO_FOCUS is None else screen.AUTO_FOCUS
            if screen.focused is None and screen.focus_chain and auto_focus:
                return False  # it is opening: its text box gets the focus in a moment
            self._ready.add(screen)  # (a screen that focuses nothing by itself, the quit prompt, is ready)
        if getattr(screen, "holds_keys", False):
            return False
        return not any(node.message_queue_size for node in screen.walk_children(with_self=True))

"""`KeyOrder` (ui/key_order.py): keys typed as the app starts, while Textual's default screen shows, wait
for the app's first screen instead of going to the default one, where nothing would take them."""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.screen import Screen

from tracetui.ui.key_order import KeyDone, KeyOrder


class Typed(Screen[None]):
    def __init__(self) -> None:
        super().__init__()
        self.keys: list[str] = []

    def on_key(self, event: events.Key) -> None:
        self.keys.append(event.key)


class SlowStart(App[None]):
    """As TraceApp: keys through KeyOrder, and its first screen pushed a moment after it starts."""

    def __init__(self) -> None:
        super().__init__()
        self.keys = KeyOrder(self, super().on_event)
        self.first = Typed()

    async def on_event(self, event: events.Event) -> None:
        if not await self.keys.take(event):
            await super().on_event(event)

    def on_key_done(self, marker: KeyDone) -> None:
        self.keys.done(marker)

    def on_mount(self) -> None:
        self.set_timer(0.3, lambda: self.push_screen(self.first))


async def test_keys_typed_before_the_first_screen_wait_for_it_in_order():
    app = SlowStart()
    async with app.run_test() as pilot:
        assert app.screen.id == "_default"
        for key in "abc":
            await app.keys.take(events.Key(key, key))  # as the terminal hands them over at start
        assert app.first.keys == [] and len(app.keys.waiting) == 3
        for _ in range(100):
            await pilot.pause(0.02)
            if app.first.keys == ["a", "b", "c"]:
                break
        assert app.first.keys == ["a", "b", "c"]


async def test_a_newline_is_enter():
    """Enter typed before the terminal went raw arrives as ctrl+j (the tty turned CR into LF)."""
    app = SlowStart()
    async with app.run_test() as pilot:
        for _ in range(100):
            await pilot.pause(0.02)
            if app.screen is app.first:
                break
        await app.keys.take(events.Key("ctrl+j", "\n"))
        await pilot.pause(0.05)
        assert app.first.keys == ["enter"]

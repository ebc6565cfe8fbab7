"""The triage screen hands each key to the part it concerns (`ui/triage/routes.py`): every binding of the
screen reaches a method that exists, with the binding's parameters after the route's own."""

from __future__ import annotations

import pytest

from tracetui.ui import keymap
from tracetui.ui.screens.triage import TriageScreen
from tracetui.ui.triage.routes import Route

from .ui_helpers import make_app, wait_loaded


class Part:
    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def step(self, *args: object) -> None:
        self.calls.append(args)


class Host:
    part = Part()
    action_step = Route("part", "step", -1)
    action_plain = Route("part", "step")
    action_missing = Route("part", "no_such_method")


def test_a_route_calls_its_part_with_its_arguments_then_the_bindings():
    host = Host()
    host.action_step()
    host.action_plain(3)
    assert host.part.calls == [(-1,), (3,)]
    assert isinstance(Host.action_step, Route)
    with pytest.raises(AttributeError, match="no_such_method"):
        host.action_missing()


async def test_every_key_of_the_triage_screen_reaches_a_part_that_has_it(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        routes = [name for name, value in vars(TriageScreen).items() if isinstance(value, Route)]
        assert len(routes) > 30
        for name in routes:
            assert callable(getattr(screen, name)), name
        for binding in keymap.APP:
            action = binding.action.split("(")[0]
            assert callable(getattr(screen, f"action_{action}", None)), binding.action

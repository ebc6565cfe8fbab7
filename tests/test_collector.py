"""When the garbage collector runs (`tracetui.collector`): full collections made rare once the app is up,
and made by the app once it has drawn nothing for `REST_SECONDS`, never while it draws."""

from __future__ import annotations

import gc
import weakref

import pytest

from tracetui import collector

from .ui_helpers import opened, until


class Cycle:
    def __init__(self) -> None:
        self.me = self


def aged_garbage() -> weakref.ref[Cycle]:
    """A cycle that reached the oldest generation alive, then dropped: only a full collection frees it
    (as the lines Textual draws do, `collector`'s docstring)."""
    cycle = Cycle()
    gc.collect(1)  # the young and middle generations collected: the cycle, alive, moves on to the oldest
    ref = weakref.ref(cycle)
    del cycle
    gc.collect(1)
    assert ref() is not None
    return ref


@pytest.fixture
def collector_state():
    """The process's collector settings put back after the test."""
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()


def test_the_first_frame_makes_young_and_full_collections_rare(collector_state):
    gc.set_threshold(700, 10, 10)
    with collector.held_until_first_frame():
        assert not gc.isenabled()
        collector.resume()
        assert gc.isenabled()
    assert gc.get_threshold() == (collector.YOUNG_EVERY, 10, collector.FULL_EVERY)
    assert collector.YOUNG_EVERY > 700 and collector.FULL_EVERY > 10


def test_a_collection_at_rest_frees_old_cycles_once(collector_state):
    gc.enable()
    ref = aged_garbage()
    assert collector.collect_at_rest()
    assert ref() is None
    assert not collector.collect_at_rest()  # nothing collected young since: no full collection again


def test_a_process_with_the_collector_off_is_left_alone(collector_state):
    gc.disable()
    ref = aged_garbage()
    assert not collector.collect_at_rest()
    assert ref() is not None


async def test_the_app_collects_in_full_once_it_rests_not_while_it_draws(sources, collector_state, monkeypatch):
    monkeypatch.setattr(collector, "REST_SECONDS", 0.5)
    async with opened(sources, (100, 30)) as (pilot, screen):
        gc.set_threshold(700, 10, 10**9)  # no automatic full collection in this test
        ref = aged_garbage()
        for _ in range(60):  # 1.2 s of frames, one every 20 ms (a loaded machine may space them further)
            screen.conversation.refresh()
            await pilot.pause(0.02)
        assert ref() is not None
        await until(pilot, lambda: ref() is None, "a full collection at rest", tries=100)
        later = aged_garbage()  # left while the app rests: one collection a rest, not one a second
        await pilot.pause(3 * collector.REST_SECONDS)
        assert later() is not None
        screen.conversation.refresh()  # the app draws again: the rest after it collects
        await until(pilot, lambda: later() is None, "a full collection at the next rest", tries=100)

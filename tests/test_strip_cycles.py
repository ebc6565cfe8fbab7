"""Lines drawn leave no garbage for the collector: Textual's strips mended (`ui.strip_cycles`) so that one a
division or a crop leaves whole does not keep itself, and the line views' caches free what they drop
(`data.lru`, not Textual's LRUCache, whose ring of entries each `clear` leaves as a cycle). Garbage in
cycles is found only by full collections, 40-90 ms each once a scroll has filled the caches."""

from __future__ import annotations

import gc

import numpy as np
from rich.segment import Segment
from textual.strip import Strip

from tracetui.ui import strip_cycles

from .garbage import garbage_left_by
from .ui_helpers import opened, until


def test_a_strip_divided_or_cropped_whole_is_freed_when_dropped():
    strip_cycles.mend()
    assert garbage_left_by(lambda: Strip([Segment("hello")]).divide([5])) == 0
    assert garbage_left_by(lambda: Strip([Segment("hello")]).crop_extend(0, 5, None)) == 0
    assert garbage_left_by(lambda: Strip([Segment("hello")]).crop_extend(-1, 5, None)) == 0


def test_the_mended_strip_divides_and_crops_as_before():
    strip_cycles.mend()
    strip = Strip([Segment("hello")])
    assert strip.divide([5]) == [strip] and strip.crop_extend(0, 5, None) is strip
    assert [s.text for s in strip.divide([2, 5])] == ["he", "llo"]
    assert [s.text for s in strip.divide([2, 9])] == ["he"]  # a cut past the end is dropped, as Textual does
    assert strip.crop_extend(0, 8, None).text == "hello   "
    assert strip.crop_extend(1, 3, None).text == "el"


async def test_paging_through_a_conversation_leaves_no_garbage(sources):
    async with opened(sources, (100, 30)) as (pilot, screen):
        listing, view = screen.trial_list, screen.conversation
        listing.move_to(int(np.argmax(screen.session.trials.size[listing.order])))  # the largest trial
        await until(pilot, lambda: screen.panes.shown == screen.trial, "the largest trial shown")
        view.ensure_built()
        assert view.line_count > 40 * view.scrollable_content_region.height
        view.focus()

        async def page_down(pages: int) -> None:
            for _ in range(pages):
                view.action_page_down()
                await pilot.pause()

        await page_down(10)  # what lives on (caches filled, the current message's marks) made first
        gc.collect()
        gc.disable()
        try:
            await page_down(30)
            assert gc.collect() == 0
        finally:
            gc.enable()

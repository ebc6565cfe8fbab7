"""Interaction latency in-process with Pilot (a child process of bench/run.py; prints one `BENCH` line).

    python -m bench.interact DATA [--toggles 30] [--switches 30] [--largest 10] [--searches 3]

Measured once the app has settled: its background work done, the verifier and findings indexes in (see
`probes.settled`). Each figure runs from the call that starts the interaction to the next frame in which the widget that shows its result was repainted (see frames.py):
facet toggle -> trial list (and -> the conversation when it moved the cursor); trial switch -> conversation; page down -> conversation; a search of every
trial (`s`, then the query) -> the conversation of its first trial, at its first match. Trial switches drop
the session's history LRU first, so each one rebuilds the history from the mapped rows as a first visit
does. Beside the times, the work counted per toggle and per switch to the largest trial (`Drawn`):
layouts of the screen and lines drawn per pane, which the machine's load does not change.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .probes import COMMON_NEEDLE, SIZE, report

PAGE_LIMIT = 5000


class MaxTimer:
    """Wraps `owner.name` to keep the longest single call (ms) and the number of calls."""

    def __init__(self, owner, name: str) -> None:
        self.longest = 0.0
        self.calls = 0
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            began = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.calls += 1
                self.longest = max(self.longest, (time.perf_counter() - began) * 1000)

        setattr(owner, name, timed)

    def reset(self) -> None:
        self.longest, self.calls = 0.0, 0

    def result(self) -> dict:
        return {"max_ms": self.longest, "calls": self.calls}


@dataclass
class Work:
    """Layouts of the screen and lines drawn per widget (a scrollbar counted as `<its view>.scrollbar`)."""

    layouts: int = 0
    lines: Counter[str] = field(default_factory=Counter)

    def add(self, other: Work) -> None:
        self.layouts += other.layouts
        self.lines.update(other.lines)

    def per(self, count: int) -> dict:
        """Each figure per interaction (of `count`)."""
        by_pane = {name: round(n / count, 1) for name, n in self.lines.most_common()}
        return {
            "layouts": round(self.layouts / count, 2),
            "lines": round(self.lines.total() / count, 1),
            "by_pane": by_pane,
        }


class Drawn:
    """Counts the `Work` of the frames: the screen's layouts (its layout signal) and the lines Textual's
    styles cache renders because they changed."""

    def __init__(self) -> None:
        from textual._styles_cache import StylesCache

        self.work = Work()
        render_widget = StylesCache.render_widget

        def counted(cache, widget, crop):
            drawn = sum(1 for y in crop.line_range if cache.is_dirty(y) or y not in cache._cache)
            if drawn:
                parent = widget.parent if type(widget).__name__.startswith("ScrollBar") else None
                name = f"{parent.id}.scrollbar" if parent is not None else widget.id or type(widget).__name__
                self.work.lines[name] += drawn
            return render_widget(cache, widget, crop)

        StylesCache.render_widget = counted

    def watch(self, screen) -> None:
        screen.screen_layout_refresh_signal.subscribe(screen, self._laid_out, immediate=True)

    def _laid_out(self, _screen) -> None:
        self.work.layouts += 1

    def take(self) -> Work:
        """What was counted since the last `take`."""
        work, self.work = self.work, Work()
        return work


def _cpu_ms(since: float, count: int) -> float:
    """The process's CPU time since `since` (process_time), per interaction of `count`: the app's own work
    with the sleeps between them (the CPU the load takes from us is not in it)."""
    return round((time.process_time() - since) * 1000 / count, 1)


def _ms(began: float, ended: float) -> float:
    return (ended - began) * 1000


async def toggles(screen, watcher, count: int) -> tuple[list[float], list[float]]:
    """Toggle outcome / model / result values on and off in the sidebar, as Enter on a value does. Each
    value is found by what it is, not where it was: the rows reorder as counts change. Times to the list
    repainted, and, for the toggles that moved the list's cursor to another trial, to that trial's
    conversation painted (the panes follow the list once it is on screen)."""
    from tracetui.ui.widgets.conversation import ConversationView
    from tracetui.ui.widgets.facet_list import RowKind
    from tracetui.ui.widgets.trial_list import TrialList

    facets = screen.facet_list
    values = [row for row in facets.rows if row.kind is RowKind.VALUE and row.facet in ("outcome", "model", "result")]
    start = screen.state
    times, conversations = [], []
    for n in range(count):
        facets.cursor = facets.rows.index(values[(n // 2) % len(values)])
        await asyncio.sleep(0.02)
        before, trial = screen.state, screen.trial
        began = time.perf_counter()
        moved = lambda trial=trial: screen.trial not in (trial, None) and screen.panes.shown == screen.trial  # noqa: E731
        shown = asyncio.ensure_future(watcher.next_paint(ConversationView, after=began, when=moved))
        facets.action_toggle_value()
        painted = await watcher.next_paint(
            TrialList, after=began, when=lambda before=before: screen.state is not before
        )
        times.append(_ms(began, painted))
        if screen.trial not in (trial, None):
            conversations.append(_ms(began, await shown))
        else:
            shown.cancel()
    if count % 2 == 0 and screen.state != start:
        raise RuntimeError(f"toggling values on and off left the filters at {screen.state.describe()!r}")
    return times, conversations


async def switch(screen, watcher, trial: int) -> float:
    """Move the list cursor to `trial` (history not cached) and time it to the conversation's repaint."""
    from tracetui.ui.widgets.conversation import ConversationView

    listing = screen.trial_list
    position = int((listing.order == trial).nonzero()[0][0])
    screen.session._histories.clear()
    await asyncio.sleep(0.02)
    began = time.perf_counter()
    listing.move_to(position)
    return _ms(began, await watcher.next_paint(ConversationView, after=began, when=lambda: screen.trial == trial))


async def scroll(screen, watcher) -> list[float]:
    """Page down the current conversation from top to bottom; ms per page."""
    from tracetui.ui.widgets.conversation import ConversationView

    view = screen.conversation
    view.focus()
    view.action_first()
    await asyncio.sleep(0.05)
    times = []
    while view.scroll_offset.y < view.max_scroll_y and len(times) < PAGE_LIMIT:
        began = time.perf_counter()
        view.action_page_down()
        times.append(_ms(began, await watcher.next_paint(ConversationView, after=began)))
    return times


SEARCHES = {"literal, common": COMMON_NEEDLE, "regex": r"/exit code \d+/"}
"""Queries as typed at `s` (search_speed.NEEDLES's that match some trial)."""


async def searches(screen, watcher, count: int) -> dict[str, list[float]]:
    """Each query searched `count` times, as Enter at the `s` prompt starts it, to the first frame that
    shows the conversation of the first trial it matched; cleared between runs."""
    from tracetui.ui.widgets.conversation import ConversationView

    out: dict[str, list[float]] = {}
    for name, query in SEARCHES.items():
        out[name] = []
        for _ in range(count):
            await asyncio.sleep(0.05)
            began = time.perf_counter()
            screen.search.start(query)
            painted = await watcher.next_paint(
                ConversationView,
                after=began,
                timeout=60,
                when=lambda: screen.search.result is not None and screen.panes.shown == screen.trial is not None,
            )
            out[name].append(_ms(began, painted))
            screen.search.clear()
    return out


async def measure(data: Path, toggle_count: int, switch_count: int, largest_count: int, search_count: int) -> dict:
    import tracetui.ui.widgets.conversation as conversation_module
    from tracetui.render.block import Block
    from tracetui.ui.widgets.conversation import ConversationView

    from .apps import tracetui_app
    from .frames import FrameWatcher
    from .probes import settled

    app, widgets = tracetui_app(data)
    watcher = FrameWatcher(widgets)
    watcher.install(app)
    render_line = MaxTimer(ConversationView, "render_line")
    message_blocks = MaxTimer(conversation_module, "message_blocks")
    styled = MaxTimer(Block, "styled")
    drawn = Drawn()
    out = {}
    async with app.run_test(size=SIZE) as pilot:
        await settled(app, pilot, watcher)
        screen, session = app.screen, app.session
        drawn.watch(screen)
        drawn.take()
        cpu = time.process_time()
        out["toggle_ms"], out["toggle_conversation_ms"] = await toggles(screen, watcher, toggle_count)
        await asyncio.sleep(0.1)  # what the last toggle left for the frames after it
        out["toggle_work"] = {**drawn.take().per(toggle_count), "cpu_ms": _cpu_ms(cpu, toggle_count)}
        order = [int(t) for t in screen.trial_list.order]
        listed = np.asarray(order)
        sizes = session.trials.size[listed]
        largest, small = int(listed[sizes.argmax()]), int(listed[sizes.argmin()])
        rng = random.Random(0)
        typical = rng.sample([t for t in order if t not in (largest, screen.trial)], min(switch_count, len(order) - 2))
        drawn.take()
        cpu = time.process_time()
        out["switch_ms"] = [await switch(screen, watcher, t) for t in typical]
        await asyncio.sleep(0.1)
        out["switch_work"] = {**drawn.take().per(len(typical)), "cpu_ms": _cpu_ms(cpu, len(typical))}
        out["largest"] = {"messages": int(session.trials.messages[largest]), "bytes": int(session.trials.size[largest])}
        out["switch_largest_ms"] = []
        largest_work = Work()
        for _ in range(largest_count):
            await switch(screen, watcher, small)
            await asyncio.sleep(0.1)
            for timer in (render_line, message_blocks, styled):
                timer.reset()
            drawn.take()
            out["switch_largest_ms"].append(await switch(screen, watcher, largest))
            await asyncio.sleep(0.1)  # its conversation built to the end, in slices between frames
            largest_work.add(drawn.take())
        out["switch_largest_work"] = largest_work.per(largest_count)
        out["largest_build"] = {"message_blocks": message_blocks.result(), "styled": styled.result()}
        render_line.reset()
        styled.reset()
        out["scroll_ms"] = await scroll(screen, watcher)
        out["scroll_lines"] = screen.conversation.line_count
        out["scroll_render"] = {"render_line": render_line.result(), "styled": styled.result()}
        out["search_first_match_ms"] = await searches(screen, watcher, search_count)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path)
    parser.add_argument("--toggles", type=int, default=30)
    parser.add_argument("--switches", type=int, default=30)
    parser.add_argument("--largest", type=int, default=10)
    parser.add_argument("--searches", type=int, default=3)
    args = parser.parse_args()
    report(**asyncio.run(measure(args.data, args.toggles, args.switches, args.largest, args.searches)))


if __name__ == "__main__":
    main()

"""Opening a dataset through a hub (`tests.hub_server`, in another process) before any download: a child
process of bench/run.py that prints one `BENCH` line.

    python -m bench.remote read REPO [--toggles 30] [--switches 10]
    python -m bench.remote first REPO [--whole | --cut-after SECONDS]
    python -m bench.remote download REPO

`read` (as `--no-download`): the first screen (trial list, then the first conversation, fetched), the
bytes the server sent by then and memory; facet toggles; switches to trials whose text is not fetched
yet; a full-text search streamed from the hub. `first`: the first screen only, with the round trips
in a row the server saw by then (for a far hub). `download`: the first screen, then the background
download and conversion until the session reads the local copy. HF_ENDPOINT names the server;
TRACETUI_CACHE_DIR and HF_HOME are fresh for every run (a first open).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import time
import urllib.request

from .memory import snapshot
from .probes import COMMON_NEEDLE, SIZE, report


def stats(until: float | None = None) -> dict:
    """The hub server's counts: `bytes_served`, `requests`, and `in_a_row`, the round trips in a row of
    this process's requests answered by `until` (time.monotonic(), shared with the server's process)."""
    query = f"?since={BEGAN}" + ("" if until is None else f"&until={until}")
    with urllib.request.urlopen(os.environ["HF_ENDPOINT"] + "/_stats" + query) as response:
        return json.loads(response.read())


def served() -> int:
    """File bytes the hub server has sent since this process started (it serves every run)."""
    return stats()["bytes_served"] - START


START = 0
BEGAN = time.monotonic()


async def first_screen(app, pilot, watcher) -> dict:
    """Monotonic times (shared with the parent) and server bytes at the frames that painted the list,
    then the first conversation's messages (as `first` times them: polling for them, or waiting for the
    app to be idle, would count the background work that starts after the conversation's frame)."""
    from tracetui.ui.widgets.conversation import ConversationView
    from tracetui.ui.widgets.trial_list import TrialList

    from .probes import triage_shown

    out: dict = {}

    def check(frame) -> None:
        if "list_at" not in out:
            if triage_shown(app, watcher, (TrialList,)):
                out.update(list_at=time.monotonic(), list_bytes=served(), list_memory=snapshot())
                out["listed_rows"] = app.session.num_rows if app.session.growing is not None else None
        elif "conversation_at" not in out and ConversationView in frame.texted and app.screen.conversation.messages:
            out.update(conversation_at=time.monotonic(), conversation_bytes=served())

    watcher.on_frame.append(check)
    while "conversation_at" not in out:
        await pilot.pause(0.005)
    watcher.on_frame.remove(check)
    listed, shown = out["list_at"], out["conversation_at"]
    out.update(list_in_a_row=stats(listed)["in_a_row"], conversation_in_a_row=stats(shown)["in_a_row"])
    return out


async def switch(screen, watcher, trial: int) -> float:
    """Move to `trial` (its text not fetched yet), a moment after the move before, and time it to its
    conversation painted."""
    from tracetui.ui.widgets.conversation import ConversationView

    position = int((screen.trial_list.order == trial).nonzero()[0][0])
    await asyncio.sleep(0.2)  # a reader's pace: a move within SETTLE_SECONDS of the one before pages on, and waits
    began = time.perf_counter()
    screen.trial_list.move_to(position)
    painted = await watcher.next_paint(
        ConversationView,
        after=began,
        timeout=60,
        when=lambda: screen.trial == trial and bool(screen.conversation.messages),
    )
    return (painted - began) * 1000


async def read(repo: str, toggle_count: int, switch_count: int) -> dict:
    from tracetui.cli import set_up_process

    set_up_process()  # as the command line does, before anything imports huggingface_hub
    from tracetui.data.search import search
    from tracetui.ui.app import StartOptions, TraceApp

    from .apps import cli_sources, tracetui_widgets
    from .frames import FrameWatcher
    from .interact import toggles

    app = TraceApp(cli_sources(repo), StartOptions(download=False))
    watcher = FrameWatcher(tracetui_widgets())
    watcher.install(app)
    async with app.run_test(size=SIZE) as pilot:
        out = await first_screen(app, pilot, watcher)
        screen, session = app.screen, app.session
        while session.growing is not None:  # the list grows as the metadata comes in: measured once whole
            await pilot.pause(0.02)
        out.update(whole_at=time.monotonic(), whole_bytes=served())
        await pilot.pause(0.5)  # the verifier index starts streaming from the hub: not part of these figures,
        for worker in list(app.workers):  # which begin once it has stopped (its thread, at its next look)
            worker.cancel()
        while any(worker.is_running for worker in app.workers):
            await pilot.pause(0.05)
        out["toggle_ms"], _ = await toggles(screen, watcher, toggle_count)
        waiting = [int(t) for t in screen.trial_list.order if not session.ready(int(t))]
        chosen = random.Random(0).sample(waiting, min(switch_count, len(waiting)))
        out["switch_ms"] = []
        for trial in chosen:
            if not session.ready(trial):  # an earlier switch may have fetched its row group
                out["switch_ms"].append(await switch(screen, watcher, trial))
        before = served()
        began = time.perf_counter()
        found = search(session, COMMON_NEEDLE)
        out["search"] = {
            "seconds": time.perf_counter() - began,
            "served": served() - before,
            "scanned": found.bytes_scanned,
        }
        out["memory"] = snapshot()
        out["rows"] = session.num_rows
    return out


def first(repo: str, whole: bool = False, cut_after: float | None = None) -> dict:
    """`tracetui REPO --no-download` through its command line, as the local first screen is timed (the
    app's process as users get it: e.g. pyarrow kept from importing pandas); it quits once the first
    conversation is painted; with `whole` once the list is whole and its metadata kept (`whole_at`: an
    open that a reopen follows), with `cut_after` that many seconds after it (`files`: those read by
    then, the list still growing: an open cut short, that the next one goes on from)."""
    from .apps import run_cli_headless
    from .frames import FrameWatcher
    from .probes import triage_shown

    out: dict = {}

    def watch(app, widgets) -> None:
        from tracetui.ui.widgets.conversation import ConversationView

        watcher = FrameWatcher(widgets)

        def check(frame) -> None:
            if "list_at" not in out:
                if triage_shown(app, watcher, widgets[:1]):
                    out.update(list_at=time.monotonic(), list_bytes=served(), list_memory=snapshot())
            elif ConversationView in frame.texted and app.screen.conversation.messages and "conversation_at" not in out:
                out.update(conversation_at=time.monotonic(), conversation_bytes=served())
                if whole:
                    app.set_interval(0.05, lambda: kept(app, out))
                elif cut_after is not None:
                    app.set_timer(cut_after, lambda: cut(app, out))
                else:
                    app.exit()

        watcher.on_frame.append(check)
        watcher.install(app)

    run_cli_headless(repo, SIZE, watch, "--no-download")
    if "conversation_at" not in out:
        raise SystemExit("the app ended before its first conversation")
    out.update(
        list_in_a_row=stats(out["list_at"])["in_a_row"], conversation_in_a_row=stats(out["conversation_at"])["in_a_row"]
    )
    return out


def kept(app, out: dict) -> None:
    """Quit once the session's list is whole and its metadata kept on disk."""
    if app.session.growing is None and "whole_at" not in out:
        out["whole_at"] = time.monotonic()
        for dataset in app.session.datasets:
            dataset.kept()  # a hub dataset's (this probe opens nothing else)
        app.exit()


def cut(app, out: dict) -> None:
    """Quit with the list still growing: the files read so far (of how many)."""
    growing = app.session.growing
    if growing is None:
        raise SystemExit("the list was whole before the open was cut short")
    out["files"] = list(growing)
    app.exit()


async def download(repo: str) -> dict:
    from tracetui.ui.app import TraceApp

    from .apps import cli_sources, tracetui_widgets
    from .frames import FrameWatcher

    app = TraceApp(cli_sources(repo))
    watcher = FrameWatcher(tracetui_widgets())
    watcher.install(app)
    async with app.run_test(size=SIZE) as pilot:
        out = await first_screen(app, pilot, watcher)
        session = app.session
        while not session.local_ready.is_set():
            if session.download is not None and session.download.error:
                raise SystemExit(f"download failed: {session.download.error}")
            await pilot.pause(0.05)
        out.update(local_at=time.monotonic(), downloaded=session.download.total, memory=snapshot())
    return out


def main() -> None:
    global START
    START = stats()["bytes_served"]
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("read", "first", "download"))
    parser.add_argument("repo")
    parser.add_argument("--toggles", type=int, default=30)
    parser.add_argument("--switches", type=int, default=10)
    parser.add_argument("--whole", action="store_true", help="first: quit once the list is whole and kept")
    parser.add_argument("--cut-after", type=float, help="first: quit this long after the first conversation")
    args = parser.parse_args()
    if args.mode == "read":
        report(**asyncio.run(read(args.repo, args.toggles, args.switches)))
    elif args.mode == "first":
        report(**first(args.repo, args.whole, args.cut_after))
    else:
        report(**asyncio.run(download(args.repo)))


if __name__ == "__main__":
    main()

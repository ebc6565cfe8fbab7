"""The app on a hub dataset (through `hub_server.FakeHub`): it opens from the metadata, shows "loading…"
while a trial's text arrives, switches to the local copy without the user noticing, keeps working
when the hub goes away, and stays remote when the dataset would not fit on the disk."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from tracetui.data.dataset import Dataset
from tracetui.data.session import Session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.store.trial_keys import trial_key
from tracetui.ui.app import StartOptions
from tracetui.ui.widgets.download_bar import DownloadBar
from tracetui.ui.widgets.facet_list import RowKind

from .hub_data import write_traces
from .hub_server import FakeHub, use_hub
from .ui_helpers import make_app, text_of, until, visible_lines, wait_loaded

REPO = "org/traces"


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return write_traces(tmp_path_factory.mktemp("traces"), 3_000, shards=3, text=300, episodes=8)


@pytest.fixture
def hub(traces, monkeypatch):
    """The hub as it serves datasets: their files from its CDN."""
    with FakeHub({REPO: traces}, cdn=True) as server:
        use_hub(monkeypatch, server.url)
        yield server
        server.downloads.set()


@contextlib.asynccontextmanager
async def first_trial_shown():
    """The app on the hub's dataset (the `hub` fixture), not downloading, once its first trial's text is
    shown: (app, pilot, screen)."""
    app = make_app(prepare([SourceSpec(REPO)], progressive=True), StartOptions(download=False))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await until(pilot, lambda: screen.conversation.messages, "the first trial's text")
        yield app, pilot, screen


def view(screen):
    """What the user sees and wrote: the trial, filters, scroll, the pane's lines, the trial's labels."""
    return (
        screen.trial,
        screen.state,
        screen.conversation.scroll_offset.y,
        visible_lines(screen.conversation),
        screen.labels.store.labels(trial_key(screen.session, screen.trial)),
    )


async def test_opens_remotely_then_switches_to_the_local_copy_unnoticed(hub):
    hub.downloads.clear()  # the download waits until the user has done things
    app = make_app(prepare([SourceSpec(REPO)], progressive=True))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        session = app.session
        assert session.remote == [0] and session.download.running
        await until(pilot, lambda: screen.conversation.messages, "the first trial's text")
        await pilot.press("L", "L")
        await until(pilot, lambda: screen.conversation.messages, "the third trial's text")
        screen.conversation.focus()
        await pilot.press("j", "j", "j")
        await pilot.press("1")  # a label
        facets = screen.facet_list
        facets.focus()
        model_row = next(i for i, r in enumerate(facets.rows) if r.facet == "model" and r.kind is RowKind.VALUE)
        for _ in range(model_row):
            await pilot.press("j")
        await pilot.press("enter")  # a filter
        await until(pilot, lambda: screen.conversation.messages, "the filtered trial's text")
        await until(pilot, lambda: screen.query_one(DownloadBar).display, "the download bar")
        before = view(screen)
        remote_folder = session.datasets[0].folder
        hub.downloads.set()
        await until(pilot, session.local_ready.is_set, "the local copy", tries=1500)
        assert isinstance(session.datasets[0], Dataset) and not session.remote
        assert not remote_folder.exists()  # what only remote reading needed is gone
        assert view(screen) == before
        await until(pilot, lambda: not screen.query_one(DownloadBar).display, "the download bar to go")
        await pilot.press("L")  # reading on from the local copy
        assert screen.session.ready(screen.trial) and screen.conversation.messages


async def test_a_trial_says_loading_until_its_text_arrives(hub):
    app = make_app(prepare([SourceSpec(REPO)], progressive=True), StartOptions(download=False))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await until(pilot, lambda: screen.conversation.messages, "the first trial's text")
        hub.delay = 1.0  # a hub far away: the next fetch takes seconds, the UI must not wait for it
        await pilot.press("G")  # the last trial: another row group
        assert any("loading…" in line for line in visible_lines(screen.conversation))
        assert screen.trial_list.has_focus  # the UI answers meanwhile
        await until(pilot, lambda: screen.conversation.messages, "the trial's text")
        assert not any("loading…" in line for line in visible_lines(screen.conversation))


def held_fetches(monkeypatch) -> threading.Event:
    """Trials' text read from the hub comes in only once the returned event is set."""
    arrived = threading.Event()
    read = Session.fetch
    monkeypatch.setattr(Session, "fetch", lambda self, trial: (arrived.wait(30), read(self, trial))[1])
    return arrived


async def test_a_find_answered_while_its_trial_is_read_from_the_hub_is_made_once_the_text_is_in(hub, monkeypatch):
    async with first_trial_shown() as (_app, pilot, screen):
        arrived = held_fetches(monkeypatch)
        await pilot.press("G")  # another row group: "loading…"
        await pilot.press("slash", "e", "enter")
        assert screen.status_line.text == "Finding 'e' once this trial is read from the hub…"  # not "no match"
        arrived.set()
        await until(pilot, lambda: screen.conversation.messages, "the trial's text")
        assert screen.status_line.text.startswith("match 1/") and screen.conversation.match_index == 0


async def test_keys_on_the_conversation_of_a_trial_being_read_wait_for_it_or_say_so(hub, monkeypatch):
    arrived = held_fetches(monkeypatch)  # the first trial's text comes once the keys below are in
    app = make_app(prepare([SourceSpec(REPO)], progressive=True), StartOptions(download=False))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        assert screen.panes.awaiting_text
        await pilot.press("u")
        assert screen.status_line.text == "This trial is being read from the Hugging Face hub…"  # not "none"
        await pilot.press("e", "3", "enter")
        assert screen.status_line.text == "Going to episode 3 once this trial is read from the hub…"
        arrived.set()
        await until(pilot, lambda: screen.conversation.messages, "the trial's text")
        assert screen.conversation.episode_position()[0] == 3


async def test_the_background_work_waits_for_the_first_conversation_to_be_drawn(hub, monkeypatch):
    """The verifier index streams from the hub: it starts once the first trial's text, read from the hub,
    is drawn, even when its reading ended before the first frame and the panes have not drawn it yet."""
    from tracetui.ui.triage.panes import TrialPanes
    from tracetui.ui.triage.verifiers import VerifierIndexing

    drawn_at_start: list[bool] = []
    start = VerifierIndexing.start
    monkeypatch.setattr(
        VerifierIndexing,
        "start",
        lambda self: (drawn_at_start.append(bool(self.host.conversation.messages)), start(self)),
    )
    fetched = TrialPanes.fetched  # the text is read, its drawing comes later
    monkeypatch.setattr(
        TrialPanes, "fetched", lambda self, event: self.host.set_timer(0.5, lambda: fetched(self, event))
    )
    read = Session.fetch

    def far(self, trial):  # a far hub: the first trial's text is not in by the time the screen mounts
        time.sleep(0.3)
        return read(self, trial)

    monkeypatch.setattr(Session, "fetch", far)
    app = make_app(prepare([SourceSpec(REPO)], progressive=True), StartOptions(download=False))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await until(pilot, lambda: drawn_at_start, "the verifier index to start", tries=1000)
        assert drawn_at_start == [True] and screen.conversation.messages


async def test_the_hub_going_away_leaves_the_app_working(hub):
    async with first_trial_shown() as (app, pilot, screen):
        first = screen.trial
        hub.stop()
        await pilot.press("G")  # a trial in a row group not fetched yet
        await until(
            pilot,
            lambda: any("Cannot read this trial" in line for line in visible_lines(screen.conversation)),
            "the one-line message",
            tries=1000,
        )
        assert "does not answer" in text_of(screen.query_one("#status"))
        await pilot.press("1")  # labels still save
        assert "saved" in text_of(screen.query_one("#status"))
        assert screen.labels.store.labels(trial_key(app.session, screen.trial))
        await pilot.press("g")  # the trial read before is still readable
        assert screen.trial == first and screen.conversation.messages
        await pilot.press("s", *"pytest", "enter")  # a search that streams from the hub says it stopped
        await until(
            pilot, lambda: "Search stopped" in text_of(screen.query_one("#status")), "the search to stop", tries=1000
        )
        await pilot.press("S")  # stats need no network
        await pilot.pause()
        assert app.screen is not screen
        assert app.is_running


async def test_a_dataset_larger_than_the_disk_stays_on_the_hub_with_a_note(hub, monkeypatch):
    from tracetui.data import download

    class Usage:
        free = 1_000

    monkeypatch.setattr(download.shutil, "disk_usage", lambda path: Usage)
    app = make_app(prepare([SourceSpec(REPO)], progressive=True))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.pause()
        assert app.session.download is None and app.session.remote == [0]
        notes = [n.message for n in app._notifications]
        assert any("free" in note and "reading it from the hub" in note for note in notes)
        await until(pilot, lambda: screen.conversation.messages, "the first trial's text")


async def test_compare_fetches_the_other_attempt_first(hub):
    from tracetui.data.compare import pick_counterpart
    from tracetui.ui.screens.compare import CompareScreen
    from tracetui.ui.screens.compare_picker import ComparePicker

    app = make_app(prepare([SourceSpec(REPO)], progressive=True), StartOptions(download=False))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await until(pilot, lambda: screen.conversation.messages, "the first trial's text")
        other = pick_counterpart(app.session, screen.trial)
        assert other is not None and not app.session.ready(other)
        await pilot.press("c")  # the picker offers the other attempts, the likeliest highlighted
        await until(pilot, lambda: isinstance(app.screen, ComparePicker), "the compare picker")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen), "the compare screen")
        assert app.session.ready(other)


async def test_compare_opened_on_trials_not_fetched_reads_them_first(hub):
    """Head-to-head opens the compare screen directly: it says it is loading, fetches both, then shows them."""
    from tracetui.ui.screens.compare import CompareScreen

    app = make_app(prepare([SourceSpec(REPO)], progressive=True), StartOptions(download=False))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        waiting = [t for t in range(len(app.session)) if not app.session.ready(t)][:2]
        assert len(waiting) == 2
        compare = CompareScreen(app.session, *waiting)
        await app.push_screen(compare)
        await until(pilot, lambda: all(side.messages for side in compare.sides), "both sides' text")
        assert app.is_running and all(app.session.ready(t) for t in waiting)
        assert screen is not app.screen


def test_quitting_during_a_stalled_download_is_prompt(traces):
    """In a real pty: the hub accepts the download and never sends a byte; `q` still quits at once."""
    import os
    import sys
    import time

    import pexpect

    with FakeHub({REPO: traces}) as server:
        server.downloads.clear()
        env = {**os.environ, "HF_ENDPOINT": server.url, "TERM": "xterm-256color"}
        env.pop("HF_HUB_OFFLINE", None)
        env.pop("HF_DATASETS_OFFLINE", None)
        child = pexpect.spawn(sys.executable, ["-m", "tracetui", REPO], env=env, dimensions=(30, 100), timeout=60)
        try:
            child.expect("⇣".encode())  # the download runs (and waits for the hub)
            began = time.monotonic()
            child.send("q")
            child.expect(pexpect.EOF, timeout=10)
            assert time.monotonic() - began < 5
        finally:
            child.close(force=True)
            server.downloads.set()


async def test_the_first_trial_is_read_once_and_the_background_work_waits_for_it(hub):
    """The first trial listed starts downloading while the screen is built (its panes' fetch waits for
    those row groups rather than asking again), and the verifier index, which streams from the hub,
    starts only once that conversation is shown (it used to start 0.3 s after the first frame)."""
    hub.delay = 0.6  # a far hub: the trial's round trip outlasts that
    app = make_app(prepare([SourceSpec(REPO)], progressive=True), StartOptions(download=False))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        seen: dict[str, int] = {}
        for tick in range(1500):
            if screen.conversation.messages:
                seen.setdefault("conversation", tick)
            if screen.verifiers.index is not None or any(w.group == "verifier-index" for w in screen.workers):
                seen.setdefault("verifiers", tick)
            if len(seen) == 2:
                break
            await pilot.pause(0.01)
        assert seen.get("conversation", 1500) <= seen.get("verifiers", 1500) < 1500, seen
        ranges = [(path, given) for _, path, given in hub.requests if given]
        assert len(ranges) == len(set(ranges))  # nothing asked for twice


async def test_a_single_move_reads_its_trial_at_once_and_paging_reads_where_it_stops(tmp_path, monkeypatch):
    """One move to a trial not read yet fetches it at once; moves in quick succession (paging, a held key)
    wait a moment before each fetch, so only the trial the cursor stops on is read (and the first one it
    moved to, fetched at once)."""
    from tracetui.ui.triage import fetch

    traces = write_traces(tmp_path, 600, shards=1, text=40, episodes=6, row_group=2)
    monkeypatch.setattr(fetch, "SETTLE_SECONDS", 1.0)  # quick succession on a loaded machine too
    slept: list[float] = []
    sleep = time.sleep

    def settling(seconds: float) -> None:
        if seconds == fetch.SETTLE_SECONDS:
            slept.append(seconds)
        sleep(seconds)

    monkeypatch.setattr(time, "sleep", settling)
    with FakeHub({REPO: traces}) as server:
        use_hub(monkeypatch, server.url)
        app = make_app(prepare([SourceSpec(REPO)], progressive=True), StartOptions(download=False))
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await wait_loaded(app, pilot)
            await until(pilot, lambda: screen.conversation.messages, "the first trial's text")
            fetched: list[int] = []
            session_fetch = screen.session.fetch
            monkeypatch.setattr(screen.session, "fetch", lambda trial: fetched.append(trial) or session_fetch(trial))
            await pilot.pause(1.1)
            await pilot.press("j")
            await until(pilot, lambda: screen.conversation.messages and screen.trial in fetched, "the next trial")
            assert not slept and fetched == [screen.trial]
            first = screen.trial
            await pilot.pause(1.1)
            await pilot.press("j", "j", "j", "j")
            await until(
                pilot, lambda: screen.conversation.messages and screen.trial in fetched, "the trial it stopped on"
            )
            await pilot.pause(0.2)
            assert slept and fetched[1] != first and fetched[-1] == screen.trial
            assert len(fetched) <= 3  # the one after `first` at once, maybe one the cursor passed, the last


async def test_f_before_the_verifier_index_looks_only_at_trials_read_and_never_waits_on_the_hub(hub):
    """F (the next failed test) before the verifier index is in parses the logs at hand: a trial whose text is
    still on the hub is passed over (reading it would take a request per trial), not an error."""
    async with first_trial_shown() as (app, pilot, screen):
        assert screen.verifiers.index is None
        for _ in range(3):
            await pilot.press("F")
        await pilot.pause()
        assert app.is_running and app.return_code is None
        assert screen.status_line.text  # where it went, or why not


async def test_compare_reads_the_attempt_chosen_on_its_right_before_it_shows_it(hub):
    from tracetui.data.compare import pick_counterpart
    from tracetui.ui.screens.compare import CompareScreen
    from tracetui.ui.screens.compare_picker import ComparePicker

    async with first_trial_shown() as (app, pilot, screen):
        trial = screen.trial
        other = pick_counterpart(app.session, trial)
        compare = CompareScreen(app.session, trial, trial)
        await app.push_screen(compare)
        await until(pilot, lambda: all(side.messages for side in compare.sides), "both sides")
        assert other is not None and not app.session.ready(other)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ComparePicker), "the picker")
        picker = app.screen
        picker.dismiss(other)
        await until(pilot, lambda: app.session.ready(other) and compare.trials[1] == other, "the other attempt read")
        await until(pilot, lambda: compare.sides[1].history is not None and compare.sides[1].messages, "shown")
        assert app.is_running and isinstance(app.screen, CompareScreen)

"""The app on a hub dataset whose metadata is still coming in: the first screen shows the trials of the
files read so far and says how many files are in; actions over every trial say they wait (a search or
an export takes its answer and holds it); the list grows under the user's cursor, and what waited starts
once it is whole."""

from __future__ import annotations

import contextlib

from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.ui.app import StartOptions
from tracetui.ui.widgets.download_bar import DownloadBar

from .hub_server import FakeHub, use_hub
from .test_hub_growth import REPO, files, held  # noqa: F401  (fixtures)
from .ui_helpers import make_app, text_of, until, wait_loaded


@contextlib.asynccontextmanager
async def growing_app(folder, monkeypatch, **options):
    """The app on the hub's copy of `folder`, its list growing (`held`): (app, pilot, screen, session)."""
    with FakeHub({REPO: folder}, cdn=True) as hub:
        use_hub(monkeypatch, hub.url)
        app = make_app(prepare([SourceSpec(REPO)], progressive=True), StartOptions(download=False, **options))
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await wait_loaded(app, pilot)
            assert app.session is not None and app.session.growing is not None
            yield app, pilot, screen, app.session


async def test_the_list_grows_under_the_cursor_as_the_metadata_comes_in(files, held, monkeypatch):  # noqa: F811
    with FakeHub({REPO: files}, cdn=True) as hub:
        use_hub(monkeypatch, hub.url)
        app = make_app(prepare([SourceSpec(REPO)], progressive=True), StartOptions(download=False))
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await wait_loaded(app, pilot)
            session = app.session
            assert session is not None and session.growing == (1, 4)
            listed = len(screen.trial_list.order)
            bar = screen.query_one(DownloadBar)
            await until(pilot, lambda: bar.display, "the listing's progress")
            assert "listing: 1 of 4 files" in text_of(bar.query_one("Static"))
            assert f"{listed}/{listed}+ trials" in text_of(screen.header)  # so far

            await pilot.press("L", "L")
            await until(pilot, lambda: screen.conversation.messages, "the third trial's text")
            trial = screen.trial
            name = session.info(trial).trial_name
            await pilot.press("s", *"IndexError", "enter")  # typed on, as a user does
            assert screen.status_line.text.startswith("Search for 'IndexError' starts once the list is whole")
            assert screen.search.result is None and not screen.prompt.display  # the prompt took every key
            await pilot.press("escape")  # dropped (a search's matches would filter the list below)
            await pilot.press("S")
            assert screen.status_line.text.startswith("Stats waits for the whole list") and len(app.screen_stack) == 2
            assert screen.verifiers.index is None  # its background work waits too

            held.set()
            await until(pilot, lambda: session.growing is None, "the whole list", tries=1500)
            await until(pilot, lambda: len(screen.trial_list.order) > listed, "the list to grow")
            assert len(screen.trial_list.order) == len(open_session(prepare([SourceSpec(str(files))])))
            assert screen.trial == trial and session.info(screen.trial).trial_name == name
            assert f"{len(screen.trial_list.order):,}/{len(session):,} trials" in text_of(screen.header)
            assert not screen.status_line.text.startswith("Stats waits")  # the message went with the wait
            await until(pilot, lambda: not bar.display, "the listing's progress to go")
            await until(pilot, lambda: screen.verifiers.index is not None, "the verifier index", tries=1500)
            await pilot.press("s")
            assert screen.prompt.display  # and a search now starts when it is answered


async def test_a_trial_asked_for_in_a_file_not_read_yet_is_opened_once_the_list_is_whole(
    files,  # noqa: F811
    held,  # noqa: F811
    monkeypatch,
):
    whole = open_session(prepare([SourceSpec(str(files))]))
    name = whole.info(len(whole) - 1).trial_name  # in the last file
    async with growing_app(files, monkeypatch, trial=name) as (app, pilot, screen, session):
        assert session.find_trial(name) is None and not app._notifications  # not said missing: not in yet
        held.set()
        await until(pilot, lambda: session.growing is None, "the whole list", tries=1500)
        await until(pilot, lambda: screen.trial is not None and session.info(screen.trial).trial_name == name)
        assert not app._notifications


async def test_a_saved_view_reopened_on_a_growing_list_is_not_saved_over_and_comes_back_whole(
    files,  # noqa: F811
    held,  # noqa: F811
    monkeypatch,
):
    """The view saved last time (a filter and a trial in the last file) reopens on a list that has not read
    that file: the trial is not there yet, so the view is not saved over (it would lose it), and once the
    list is whole the trial is shown."""
    from tracetui.data.facets import FilterState
    from tracetui.ui.triage.labels import LabelBook

    with FakeHub({REPO: files}, cdn=True) as hub:
        use_hub(monkeypatch, hub.url)
        held.set()
        before = open_session(prepare([SourceSpec(REPO)], progressive=True))
        last = len(before) - 1
        name, model = before.info(last).trial_name, before.info(last).model
        LabelBook(before).save_view(FilterState(selected={"model": frozenset({model})}), last)
        before.datasets[0].discard()  # its metadata not kept: the next open reads it again
        held.clear()

        app = make_app(prepare([SourceSpec(REPO)], progressive=True), StartOptions(download=False))
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await wait_loaded(app, pilot)
            session = app.session
            assert session is not None and session.growing is not None
            assert screen.state.selected == {"model": frozenset({model})} and session.find_trial(name) is None
            await pilot.pause(1.5)  # past the view's save delay
            held.set()
            await until(pilot, lambda: session.growing is None, "the whole list", tries=1500)
            await until(pilot, lambda: screen.trial is not None and session.info(screen.trial).trial_name == name)
            assert screen.state.selected == {"model": frozenset({model})}


async def test_the_trial_shown_grows_with_rows_not_read_yet_and_the_list_goes_on_growing(
    files,  # noqa: F811
    held,  # noqa: F811
    monkeypatch,
):
    """The trial on screen is cut at the first file's end: once the list grows, its new rows are in row
    groups not read yet. They are read, its conversation grows in place, and the list grows to whole (a
    read that waited for nothing stopped the list's growth for good)."""
    whole = open_session(prepare([SourceSpec(str(files))]))
    first_rows = 600  # the first of the 4 files
    cut = next(t for t in range(len(whole)) if min(whole.trials.rows(t)) < first_rows <= max(whole.trials.rows(t)))
    name, messages = whole.info(cut).trial_name, len(whole.history(cut).messages)
    async with growing_app(files, monkeypatch, trial=name) as (_, pilot, screen, session):
        assert session.growing == (1, 4)
        await until(pilot, lambda: screen.trial is not None and screen.conversation.messages, "the trial shown")
        assert session.info(screen.trial).trial_name == name
        assert len(screen.conversation.messages) < messages  # its first file's rows only

        held.set()
        await until(pilot, lambda: session.growing is None, "the whole list", tries=1500)
        await until(pilot, lambda: len(screen.conversation.messages) == messages, "its grown conversation")
        assert session.info(screen.trial).trial_name == name
        assert len(screen.trial_list.order) == len(whole)


async def test_an_answer_that_waits_for_the_whole_list_is_checked_at_once_dropped_by_esc_replaced_by_the_next(
    files,  # noqa: F811
    held,  # noqa: F811
    monkeypatch,
    tmp_path,
):
    async with growing_app(files, monkeypatch) as (_app, pilot, screen, _session):
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
        await pilot.press("A", *"flaky?", "enter")
        assert screen.status_line.text.startswith("no endpoint to ask")  # said now, not once the list is whole
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never asked: replaced below
        await pilot.press("A", *"flaky?", "enter")
        assert screen.status_line.text.startswith("Asking 'flaky?' starts once the list is whole")
        asking = screen.when_whole.held
        await pilot.press("s", "ctrl+u", *"/(/", "enter")  # a query that does not parse: said now
        assert screen.status_line.text.startswith("invalid regex") and screen.when_whole.held is asking
        await pilot.press("s", "ctrl+u", *"first", "enter", "escape")  # replaces the question, then dropped
        assert screen.status_line.text == "Search for 'first': cancelled."
        target = tmp_path / "out.jsonl"
        target.write_text("mine\n")
        await pilot.press("ctrl+e", "ctrl+u", *str(target), "enter")
        assert screen.prompt.display and "the file exists" in screen.prompt.placeholder  # asked now
        await pilot.press("y", "enter")
        assert screen.status_line.text.startswith(f"Export to {target} starts once the list is whole")
        await pilot.press("s", "ctrl+u", *"second", "enter")  # the later answer replaces the export
        assert screen.status_line.text.startswith("Search for 'second' starts once the list is whole")
        held.set()
        await until(pilot, lambda: screen.search.result is not None, "the search that waited", tries=1500)
        assert screen.search.result.pattern == "second"
        assert target.read_text() == "mine\n"  # the dropped export never ran

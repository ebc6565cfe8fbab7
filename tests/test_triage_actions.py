"""Triage-screen actions that leave something behind or reach outside: labels, notes, resume, search,
copy, export, pager."""

from __future__ import annotations

from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.ui.screens.note import NoteScreen
from tracetui.ui.triage.query import parse_query

from .ui_helpers import make_app, text_of, visible_lines, wait_loaded


async def wait_idle(screen, pilot, group: str) -> None:
    for _ in range(500):
        await pilot.pause(0.02)
        if not any(w.group == group and w.is_running for w in screen.workers):
            await pilot.pause()
            return
    raise AssertionError(f"{group} did not finish")


async def test_labels_and_notes_persist_and_filter(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        trial = screen.trial
        await pilot.press("1")
        assert "reward-hack" in text_of(screen.query_one("#status")) and "saved" in text_of(screen.query_one("#status"))
        await pilot.press("a")
        assert isinstance(app.screen, NoteScreen)
        await pilot.press(*"looks like a test hack", "escape")
        assert "Note saved" in text_of(screen.query_one("#status"))
        name = app.session.info(trial).trial_name
        # the label facet filters to the labelled trial
        screen.state = screen.state.toggled("label", "reward-hack")
        assert list(screen.trial_list.order) == [trial]
        await pilot.press("q")
    # a new app instance sees the label and the note, and resumes the filters and the trial
    again = make_app(sources)
    async with again.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(again, pilot)
        assert screen.state.selected.get("label") == frozenset({"reward-hack"})
        assert again.session.info(screen.trial).trial_name == name
        from tracetui.store.trial_keys import trial_key

        assert screen.labels.store.note(trial_key(again.session, screen.trial)) == "looks like a test hack"
        assert "reward-hack" in screen.labels.cell(screen.trial, 16)
        from .scenarios import loaded

        await loaded(pilot)  # the background verifier index is in, and nothing else is running
        await pilot.press("1")  # toggles it off again
        assert "Removed label" in text_of(screen.query_one("#status"))


def test_parse_query_smart_case_and_regex():
    assert parse_query("error") == ("error", False, True)
    assert parse_query("Error") == ("Error", False, False)
    assert parse_query("/err(or)?s?/") == ("err(or)?s?", True, True)
    assert parse_query("/\\Berr/") == ("\\Berr", True, True)  # an escape is not an upper-case letter
    assert parse_query("/") == ("/", False, True)
    assert parse_query("/Error: .*/i") == ("Error: .*", True, True)


async def test_search_filters_the_list_and_highlights(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.press("s", *"output limited", "enter")
        await wait_idle(screen, pilot, "search")
        status = text_of(screen.query_one("#status"))
        assert status.startswith("matches: ")
        count = int(status.split()[1].replace(",", ""))
        assert 0 < count < len(app.session) and screen.trial_list.row_count == count
        assert screen.conversation.matches  # the first trial opens at its first match
        assert "matches~output limited" in text_of(screen.query_one("#header"))
        await pilot.press("escape")
        assert screen.search.result is None and screen.trial_list.row_count == len(app.session)


async def test_copy_without_a_terminal_saves_a_file(sources, isolated_dirs):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        screen.trial_list.focus()
        await pilot.press("y")
        status = text_of(screen.query_one("#status"))
        assert "saved to" in status  # the test runner's stdout is not a terminal
        (path,) = (isolated_dirs / "cache" / "copied").iterdir()
        assert path.name in status or "…" in status  # the line may cut a long path
        assert path.read_text() == app.session.info(screen.trial).trial_name


async def test_export_from_the_ui_reopens(sources, tmp_path):
    app = make_app(sources)
    out = tmp_path / "failed.parquet"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        screen.state = screen.state.toggled("outcome", "fail")
        listed = screen.trial_list.row_count
        await pilot.press("ctrl+e", "ctrl+a", "ctrl+k", *str(out), "enter")
        await wait_idle(screen, pilot, "export")
        assert f"Exported {listed:,} trials" in text_of(screen.query_one("#status"))
    reopened = open_session(prepare([SourceSpec(str(out))]))
    assert len(reopened) == listed
    assert all(reopened.info(t).outcome == "fail" for t in range(len(reopened)))


async def test_pager_runs_through_suspend(sources, tmp_path, monkeypatch):
    seen = tmp_path / "seen.txt"
    script = tmp_path / "pager.sh"
    script.write_text(f'#!/bin/sh\ncat "$1" > {seen}\n')
    script.chmod(0o755)
    monkeypatch.setenv("PAGER", str(script))
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        from contextlib import nullcontext

        monkeypatch.setattr(type(app), "suspend", lambda self: nullcontext())  # headless: nothing to hand over
        await pilot.press("p")
        assert seen.read_text() == screen.conversation.current_message().content


async def test_label_marker_held_status_and_undo(sources):
    from tracetui.store.trial_keys import trial_key

    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        trial = screen.trial
        key = trial_key(app.session, trial)
        await pilot.press("1", "2")
        assert screen.labels.store.labels(key) == {"reward-hack", "bad-task"}
        row = visible_lines(screen.trial_list)[screen.trial_list.cursor]
        assert "●" in row  # the list marks the labelled trial, even at 80 columns
        status = text_of(screen.query_one("#status"))
        assert status.startswith("Added label 'bad-task' (saved; U undoes)")
        screen.status("Reading verifier logs… 50%", background=True)  # background news waits its turn
        assert text_of(screen.query_one("#status")) == status
        await pilot.press("U")
        assert screen.labels.store.labels(key) == {"reward-hack"}
        await pilot.press("U")
        assert screen.labels.store.labels(key) == frozenset()
        assert "●" not in visible_lines(screen.trial_list)[screen.trial_list.cursor]
        assert text_of(screen.query_one("#status")).startswith("Undone:")
        await pilot.press("U")
        assert text_of(screen.query_one("#status")) == "No label change to undo."


async def test_digits_in_a_text_box_never_label(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        screen.query_one("#name-filter").focus()
        await pilot.press("1", "2", "3")
        assert screen.query_one("#name-filter").value == "123"
        screen.conversation.focus()
        await pilot.press("e", "1", "escape", "slash", "4", "escape", "s", "5", "escape")
        assert not screen.labels.records and not screen.labels.undo_stack

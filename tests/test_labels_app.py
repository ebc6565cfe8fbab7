"""Nothing the user wrote is lost, in the app: a disk that refuses writes at start or mid-session (the
message line says not saved, the header counts what is held, the timer flushes it merged and says so),
quitting with unsaved changes (the prompt, its file, `tracetui labels import`), two instances writing
one note, and a damaged store moved aside and said once."""

from __future__ import annotations

import os
import signal
from contextlib import ExitStack

import pytest
from textual.widgets import Input

from tracetui.cli import main
from tracetui.data.session import open_session
from tracetui.store.labels import LabelStore
from tracetui.store.trial_keys import trial_key
from tracetui.ui.screens.note import NoteScreen
from tracetui.ui.screens.quit import QuitScreen

from .disk_faults import refused_writes
from .scenarios import loaded
from .ui_helpers import closed, make_app, text_of, wait_loaded


def status(screen) -> str:
    return text_of(screen.query_one("#status"))


def header(screen) -> str:
    return text_of(screen.query_one("#header"))


async def wait_for(pilot, condition, what: str) -> None:
    for _ in range(400):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"no {what}")


async def test_a_disk_full_at_start_holds_labels_and_notes_and_says_so_until_flushed(sources, monkeypatch):
    monkeypatch.setattr("tracetui.ui.screens.triage.RETRY_SECONDS", 3600)  # the test says when to try again
    open_session(sources)  # converted before the disk is full: the app only reads it
    app = make_app(sources)
    full = ExitStack()
    full.enter_context(refused_writes())  # the app opens the store as it starts
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        full.close()  # but the store does not know: it goes on in memory until it tries again
        assert not screen.labels.store.on_disk
        assert any("held in memory" in n.message for n in app._notifications)
        key = trial_key(app.session, screen.trial)
        await pilot.press("1")
        line = status(screen)
        assert line.startswith("Added label 'reward-hack', held in memory, NOT saved (") and "saved;" not in line
        assert header(screen).startswith("⚠ 1 unsaved ")
        await pilot.press("a", *"flaky verifier", "escape")
        assert status(screen).startswith("Note held in memory, NOT saved (")
        assert header(screen).startswith("⚠ 2 unsaved ")  # at 80 columns too
        assert LabelStore.open().labels(key) == frozenset()  # truly not on the disk

        screen.labelling.retry_due()  # what the timer calls: the disk has room now
        await wait_for(pilot, lambda: status(screen).startswith("Saved "), "flush")
        assert status(screen) == "Saved 2 held changes to labels.db."
        assert "unsaved" not in header(screen)
        on_disk = LabelStore.open()
        assert on_disk.labels(key) == {"reward-hack"} and on_disk.note(key) == "flaky verifier"
        await pilot.press("2")
        assert status(screen).startswith("Added label 'bad-task' (saved; U undoes)")


async def test_writes_failing_mid_session_are_flushed_by_the_timer_over_another_instance(sources, monkeypatch):
    monkeypatch.setattr("tracetui.ui.screens.triage.RETRY_SECONDS", 0.2)
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        screen = app.screen
        key = trial_key(app.session, screen.trial)
        await pilot.press("1")
        assert status(screen).startswith("Added label 'reward-hack' (saved; U undoes)")
        with refused_writes():
            await pilot.press("2")
            assert status(screen).startswith("Added label 'bad-task', held in memory, NOT saved (")
            await pilot.press("U")
            assert status(screen).startswith("Undone, held in memory, NOT saved (disk I/O error): ")
            await pilot.press("3")
            await pilot.pause(0.5)  # the timer tries, and the disk still refuses
            assert header(screen).startswith("⚠ 2 unsaved ") and not screen.labels.store.on_disk
        other = LabelStore.open(writer=True)  # another instance labels the same trial meanwhile
        assert other.toggle(key, "good-example").saved
        await wait_for(pilot, lambda: status(screen).startswith("Saved "), "flush")
        assert status(screen) == "Saved 2 held changes to labels.db."
        assert LabelStore.open().labels(key) == {"reward-hack", "env-issue", "good-example"}
        assert "good-example" in screen.labels.cell(screen.trial, 40)  # the list shows what the disk has
        assert "unsaved" not in header(screen)


async def test_quit_with_unsaved_changes_asks_and_its_file_restores_them(sources, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        screen = app.screen
        key = trial_key(app.session, screen.trial)
        with refused_writes():
            await pilot.press("1", "a", *"test hack", "escape")
            await pilot.press("ctrl+q")  # every way out asks
            assert isinstance(app.screen, QuitScreen) and app.is_running
            prompt = app.screen
            assert "1 label change and 1 note not saved" in text_of(prompt.query_one("Static"))
            await pilot.press("escape")  # stay
            assert app.screen is screen and app.is_running
            await pilot.press("q")
            prompt = app.screen
            assert isinstance(prompt, QuitScreen)
            prompt.query_one(Input).value = str(tmp_path / "no" / "such" / "folder.json")
            await pilot.press("w")
            problem = prompt.query_one("#unsaved-problem")
            await wait_for(
                pilot, lambda: "Cannot write" in text_of(problem), "the refused path said"
            )  # keys wait in order
            assert app.is_running
            path = tmp_path / "unsaved.json"
            prompt.query_one(Input).value = str(path)
            await pilot.press("w")
            await closed(pilot)
    assert not app.is_running and app.return_code == 0
    said = app.return_value  # printed once the terminal is back
    assert (
        said == f"tracetui: 1 label change and 1 note written to {path}; `tracetui labels import {path}` restores them"
    )
    assert LabelStore.open().labels(key) == frozenset()  # the disk never took them
    assert main(["labels", "import", str(path)]) == 0
    restored = LabelStore.open()
    assert restored.labels(key) == {"reward-hack"} and restored.note(key) == "test hack"


async def test_quit_anyway_says_what_was_lost(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        with refused_writes():
            await pilot.press("1", "q")
            assert isinstance(app.screen, QuitScreen)
            await pilot.press("Q")
            await closed(pilot)
    assert not app.is_running
    assert app.return_value == "tracetui: 1 label change not saved (disk I/O error): lost"


async def test_quitting_from_the_note_editor_saves_the_note_first(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.press("a", *"half a thought")
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert not app.is_running
    assert LabelStore.open().note(trial_key(app.session, screen.trial)) == "half a thought"


@pytest.mark.parametrize("number", [signal.SIGHUP, signal.SIGTERM])
async def test_a_terminal_that_hangs_up_saves_the_note_being_written(sources, number):
    """An SSH connection dropped (SIGHUP) or a stop asked of the process (SIGTERM) while a note is being
    written: the note is saved as it stands and the app ends; the signal's default is back once it has."""
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.press("a", *"typed before the line dropped")
        os.kill(os.getpid(), number)
        await closed(pilot)
    assert not app.is_running and app.return_value is None and app.return_code == 128 + number
    assert LabelStore.open().note(trial_key(app.session, screen.trial)) == "typed before the line dropped"
    assert signal.getsignal(number) == signal.SIG_DFL


async def test_a_hangup_the_process_ignores_stays_ignored(sources):
    """Under `nohup` a hangup is ignored: the app leaves it so, and heeds a SIGTERM still."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        app = make_app(sources)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_loaded(app, pilot)
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) != signal.SIG_DFL
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


async def test_a_terminal_that_hangs_up_writes_what_the_disk_refused_to_a_file(sources, tmp_path, monkeypatch):
    """Nobody is there to answer the quit prompt: what the disk still refuses goes to the file the
    prompt offers, and `tracetui labels import` restores it."""
    monkeypatch.chdir(tmp_path)
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        key = trial_key(app.session, screen.trial)
        with refused_writes():
            await pilot.press("1", "a", *"test hack")
            os.kill(os.getpid(), signal.SIGHUP)
            await closed(pilot)
    [path] = tmp_path.glob("tracetui-unsaved-*.json")
    assert app.return_value == (
        f"tracetui: 1 label change and 1 note written to {path}; `tracetui labels import {path}` restores them"
    )
    assert main(["labels", "import", str(path)]) == 0
    restored = LabelStore.open()
    assert restored.labels(key) == {"reward-hack"} and restored.note(key) == "test hack"


async def test_two_instances_writing_one_note_keep_both_and_the_second_is_told(sources):
    first, second = make_app(sources), make_app(sources)
    async with first.run_test(size=(120, 40)) as one, second.run_test(size=(120, 40)) as two:
        a, b = await wait_loaded(first, one), await wait_loaded(second, two)
        assert first.session.info(a.trial).trial_name == second.session.info(b.trial).trial_name
        await one.press("a")
        await two.press("a")  # both editors open on the same (empty) note
        assert isinstance(first.screen, NoteScreen) and isinstance(second.screen, NoteScreen)
        await one.press(*"A-note", "escape")
        assert status(a) == "Note saved."
        await two.press(*"B-note", "escape")
        assert status(b) == "Note saved; a newer note saved elsewhere is kept below yours."
        note = LabelStore.open().note(trial_key(first.session, a.trial))
        assert note.startswith("B-note\n\n--- a newer note saved elsewhere (") and note.endswith("kept ---\nA-note")


async def test_a_damaged_store_is_left_by_tracetui_labels_then_moved_aside_by_the_app_said_once(
    sources, demo_dir, capsys
):
    store = LabelStore.open(writer=True)
    store.close()
    junk = b"this is not an sqlite database" * 100
    store.path.write_bytes(junk)
    assert main(["labels", str(demo_dir)]) == 2  # reports, moves nothing
    assert "is damaged" in capsys.readouterr().err and store.path.read_bytes() == junk

    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded_screen(app, pilot)
        [moved] = store.path.parent.glob("labels.db.corrupt-*")
        assert moved.read_bytes() == junk
        said = [n.message for n in app._notifications if "damaged" in n.message]
        assert said == [f"{store.path} was damaged (file is not a database): kept as {moved}; a new one was started"]
        await pilot.press("1")
        assert status(screen).startswith("Added label 'reward-hack' (saved; U undoes)")
        screen.labelling.retry_due()
        await pilot.pause(0.2)
        assert [n.message for n in app._notifications if "damaged" in n.message] == said  # once
    assert LabelStore.open().labels(trial_key(app.session, screen.trial)) == {"reward-hack"}


async def loaded_screen(app, pilot):
    await loaded(pilot)
    return app.screen

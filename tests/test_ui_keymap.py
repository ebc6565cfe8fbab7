"""Remappable keys (`[keymap]` in the config file) and the command palette's per-screen commands."""

from __future__ import annotations

from pathlib import Path

from textual.command import CommandList, CommandPalette

from tracetui.store.config import config_path, load_config
from tracetui.ui import keymap
from tracetui.ui.screens.help import HelpScreen, key_names
from tracetui.ui.screens.stats import StatsScreen
from tracetui.ui.user_keymap import bindings_by_id, checked_keymap

from .ui_helpers import make_app, wait_loaded


def write_config(text: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def test_every_binding_has_an_id_and_one_id_means_one_binding():
    seen = {}
    for bindings in keymap.SECTIONS.values():
        for binding in bindings:
            assert binding.id, binding
            first = seen.setdefault(binding.id, binding)
            assert (first.key, first.action) == (binding.key, binding.action), binding.id
    assert {"trial.next", "verifier.toggle", "cursor.down", "screen.close", "label.9"} <= set(seen)


def test_keymap_entries_are_checked():
    usable, warning = checked_keymap({"trial.next": "ctrl+n", "cursor.down": " j , ctrl+j "})
    assert usable == {"trial.next": "ctrl+n", "cursor.down": "j,ctrl+j"} and warning is None
    usable, warning = checked_keymap(
        {
            "trial.nxet": "n",
            "verifier.toggle": "",
            "find.start": ["f"],
            "pane.zoom": "ctlr+z",
            "copy.message": "+",
            "help": 1,
        }
    )
    assert usable == {"copy.message": "+"}
    assert warning and "\n" not in warning
    for problem in ("'trial.nxet'", "verifier.toggle", "find.start", "'ctlr+z'", "'help'"):
        assert problem in warning


def test_the_config_file_keeps_its_labels_when_the_keymap_is_not_a_table():
    write_config('labels = ["hack"]\nkeymap = "ctrl+n"\n')
    config, warning = load_config()
    assert config.labels == ("hack",) and config.keymap == {}
    assert warning and "keymap" in warning
    write_config('labels = ["hack"]\n[keymap]\n"trial.next" = "ctrl+n"\nlabel.1 = "!"\nscreen = {close = "x"}\n')
    config, warning = load_config()
    assert warning is None and config.keymap == {"trial.next": "ctrl+n", "label.1": "!", "screen.close": "x"}


async def test_a_remapped_key_does_the_action_and_the_old_one_no_longer_does(sources):
    write_config('[keymap]\ntrial.next = "ctrl+n"\n"verifier.toggle" = "f5"\n')
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        first = screen.trial
        await pilot.press("L")
        assert screen.trial == first
        await pilot.press("ctrl+n")
        assert screen.trial != first
        assert screen.verifier.display
        await pilot.press("v")
        assert screen.verifier.display
        await pilot.press("f5")
        assert not screen.verifier.display
        footer = screen_text(app).splitlines()[-1]
        assert "f5 Verifier" in footer and "v Verifier" not in footer
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        [next_trial] = [line for line in screen_text(app).splitlines() if "Next trial" in line]
        assert "ctrl+n" in next_trial and " L " not in next_trial


async def test_a_bad_keymap_entry_is_one_warning_and_the_rest_applies(sources):
    write_config('[keymap]\n"no.such.binding" = "x"\n"trial.next" = ""\n"trial.prev" = "ctrl+b"\n')
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        warnings = [n.message for n in app._notifications if "[keymap]" in n.message]
        assert len(warnings) == 1 and "no.such.binding" in warnings[0] and "trial.next" in warnings[0]
        assert app.user_keymap == {"trial.prev": "ctrl+b"}
        first = screen.trial
        await pilot.press("L")  # trial.next kept its key
        assert screen.trial != first
        await pilot.press("ctrl+b")
        assert screen.trial == first


async def palette_titles(app, pilot) -> list[str]:
    await pilot.press("ctrl+p")
    for _ in range(200):
        if isinstance(app.screen, CommandPalette) and app.screen.query_one(CommandList).option_count:
            break
        await pilot.pause(0.02)
    await pilot.pause(0.2)  # every provider has answered
    commands = app.screen.query_one(CommandList)
    titles = [str(commands.get_option_at_index(i).prompt).split("\n")[0] for i in range(commands.option_count)]
    await pilot.press("escape")
    return titles


async def test_the_palette_offers_the_commands_of_the_screen_it_is_opened_on(sources):
    write_config('[keymap]\n"stats.sort" = "ctrl+o"\n')
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(app, pilot)
        triage = await palette_titles(app, pilot)
        assert "Next trial" in triage and "Sort by model" in triage and "Sort tasks" not in triage
        await pilot.press("S")
        await pilot.pause()
        assert isinstance(app.screen, StatsScreen)
        stats = await palette_titles(app, pilot)
        assert "Sort tasks" in stats and "Close" in stats
        assert "Next trial" not in stats and "Sort by model" not in stats
        assert "Theme" in stats  # Textual's own commands stay everywhere
        order = app.screen.matrix.sort_key
        await pilot.press("ctrl+p", *"sort tasks")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, StatsScreen) and app.screen.matrix.sort_key != order


def test_every_binding_id_is_documented_with_its_default_keys():
    documented = (Path(__file__).parents[1] / "docs" / "keymap.md").read_text()
    for binding_id, binding in bindings_by_id().items():
        assert f"| `{binding_id}` | {key_names(binding, {})} | {binding.description} |" in documented

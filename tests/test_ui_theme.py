"""The conversation and verifier panel follow the app's Textual theme, light themes included."""

from __future__ import annotations

import pytest
from rich.style import Style
from textual.color import Color
from textual.theme import BUILTIN_THEMES, Theme

from tracetui.render.palette import DEFAULT_PALETTE, DEFAULT_ROLES
from tracetui.ui.theme import MIN_CONTRAST, ROLE_SPECS, contrast, palette_for

from .ui_helpers import make_app, wait_loaded

COLOUR_THEMES = [name for name in BUILTIN_THEMES if not name.startswith("ansi")]


def test_the_default_theme_keeps_its_hand_picked_colours():
    assert palette_for(BUILTIN_THEMES["textual-dark"]) is DEFAULT_PALETTE
    assert set(ROLE_SPECS) == set(DEFAULT_ROLES)


@pytest.mark.parametrize("name", COLOUR_THEMES)
def test_every_colour_is_readable_on_the_theme_background(name):
    theme = BUILTIN_THEMES[name]
    background = Color.parse(theme.to_color_system().generate()["background"])
    palette = palette_for(theme)
    styles = [*palette.roles.values(), *(s for s in palette.tokens.values() if s is not None)]
    assert len(styles) > len(DEFAULT_ROLES)
    for style in styles:
        if style.color is None or style.color.triplet is None:
            continue  # the default theme's named colours are the terminal's
        backdrop = Color(*style.bgcolor.triplet) if style.bgcolor is not None else background
        assert contrast(Color(*style.color.triplet), backdrop) >= MIN_CONTRAST, (name, str(style))


def test_light_themes_get_dark_text_and_their_own_colours():
    light, solarized = palette_for(BUILTIN_THEMES["textual-light"]), palette_for(BUILTIN_THEMES["solarized-light"])
    for palette in (light, solarized):
        assert palette["assistant"].color.triplet.hex != DEFAULT_PALETTE["assistant"].color.triplet.hex
        assert sum(palette["terminal"].color.triplet) < sum(DEFAULT_PALETTE["terminal"].color.triplet)
    assert light["assistant"] != solarized["assistant"]
    assert light["badge.parse_error"].bgcolor is not None  # badges keep their own background


def test_ansi_themes_leave_colours_to_the_terminal():
    palette = palette_for(BUILTIN_THEMES["ansi-dark"])
    assert palette["assistant"].color.number is not None and palette["assistant"].color.triplet is None
    assert palette["meta"].dim  # translucent text cannot blend in a terminal's own colours


def test_a_theme_with_odd_variables_still_gets_a_palette():
    odd = Theme("odd", primary="#336699", variables={"text-primary": "not a colour", "text-error": ""})
    palette = palette_for(odd)
    assert palette["assistant"] == Style()  # plain rather than a guess
    assert palette["user"].color is not None
    assert set(palette.roles) == set(DEFAULT_ROLES)


async def test_switching_the_theme_restyles_the_conversation_in_place(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.press("L", "enter")
        view = screen.conversation
        view.next_message(1)
        await pilot.pause()
        top = view.scroll_offset.y
        height = view.scrollable_content_region.height
        dark = [view.render_line(y) for y in range(height)]
        header = next(y for y, strip in enumerate(dark) if strip.text.lstrip("▌ ").startswith(("user", "assistant")))
        role = dark[header].text.lstrip("▌ ").split()[0]

        def role_colour(strips) -> str:
            segment = next(s for s in strips[header] if s.text.strip() == role)
            return segment.style.color.triplet.hex

        assert role_colour(dark) == DEFAULT_PALETTE[role].color.triplet.hex
        app.theme = "solarized-light"
        await pilot.pause()
        light = [view.render_line(y) for y in range(height)]
        assert [s.text for s in light] == [s.text for s in dark] and view.scroll_offset.y == top
        assert role_colour(light) == palette_for(BUILTIN_THEMES["solarized-light"])[role].color.triplet.hex
        app.theme = "textual-dark"
        await pilot.pause()
        assert [view.render_line(y) for y in range(height)] == dark

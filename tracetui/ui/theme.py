"""The renderers' palette for a Textual theme, so conversations and verifier logs follow the theme
the command palette switches (light themes included).

Each palette role is a Textual style with theme variables (`bold $text-primary`), and code takes
Textual's own token → theme-variable mapping (`textual.highlight.HighlightTheme`, the one its
Markdown code fences use); both are resolved against the theme's background into Rich styles. The
default theme keeps the hand-picked colours and monokai it was designed with (`DEFAULT_PALETTE`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from rich.color import Color as RichColor
from rich.style import Style as RichStyle
from textual.color import Color
from textual.highlight import HighlightTheme
from textual.style import Style
from textual.theme import Theme

from ..render.palette import DEFAULT_PALETTE, Palette

DEFAULT_THEME = "textual-dark"

ROLE_SPECS = {
    "assistant": "bold $text-primary",
    "user": "bold $text-success",
    "system": "bold $text-accent",
    "other_role": "bold $foreground",
    "meta": "$text 60%",
    "restart": "bold $text-accent",
    "badge.parse_error": "bold $text on $error",
    "badge.warning": "bold $text on $warning",
    "badge.completion_check": "bold $text on $primary",
    "badge.timeout": "bold $text on $warning",
    "badge.output_limit": "bold $text on $error",
    "badge.handoff": "bold $text on $accent",
    "badge.unparsed": "bold $text on $error",
    "badge.prompt": "$text-success",
    "badge.observation": "$text 60%",
    "harness.parse_error": "$text-error",
    "harness.warning": "$text-warning",
    "harness.completion_check": "$text-primary",
    "harness.timeout": "$text-warning",
    "harness.output_limit": "$text-error",
    "harness.handoff": "",
    "think": "italic $text 60%",
    "label": "bold $text-primary",
    "folded": "$text 60%",
    "marker": "italic $text 50%",
    "omitted": "reverse $text-warning",
    "error": "$text-error",
    "error.heading": "bold $text-error",
    "warning": "$text-warning",
    "command": "$text 60%",
    "key": "bold $text-warning",
    "complete": "bold $text-success",
    "tool": "bold $text-accent",
    "terminal": "$foreground",
    "divider": "$text 50%",
    "heading": "bold",
    "fold": "$text 60%",
    "outcome.pass": "bold $text-success",
    "outcome.partial": "bold $text-warning",
    "outcome.fail": "bold $text-error",
    "outcome.error": "bold $text-accent",
    "failed_test": "$text-error",
    "log.passed": "$text-success",
    "log.failed": "bold $text-error",
    "log.error_line": "$text-error",
    "log.skipped": "$text-warning",
}
"""Every palette role (`render.palette.DEFAULT_ROLES`) as a Textual style with theme variables."""


def palette_for(theme: Theme) -> Palette:
    """The palette of `theme` (the same object for the same theme: re-rendering stays cheap)."""
    if theme.name == DEFAULT_THEME:
        return DEFAULT_PALETTE
    return _derived(tuple(sorted(_variables(theme).items())))


def _variables(theme: Theme) -> dict[str, str]:
    """The theme's CSS variables, as `App.get_css_variables` makes them."""
    return {**theme.to_color_system().generate(), **theme.variables}


@lru_cache(maxsize=8)
def _derived(variables: tuple[tuple[str, str], ...]) -> Palette:
    values = dict(variables)
    background = Color.parse(values["background"])
    roles = {role: _resolve(spec, values, background) or RichStyle() for role, spec in ROLE_SPECS.items()}
    tokens = {ttype: _resolve(spec, values, background) for ttype, spec in HighlightTheme.STYLES.items()}
    return Palette(roles, tokens)


_VARIABLE = re.compile(r"\$([\w-]+)")
MIN_CONTRAST = 3.0
"""WCAG's minimum contrast for large text: a colour a theme makes fainter is moved towards black (on
light backgrounds) or white until it reaches it, so every theme, a user's too, stays readable."""


def _resolve(spec: str, variables: dict[str, str], background: Color) -> RichStyle | None:
    """A Textual style as a Rich style: variables substituted, translucent and `auto` colours worked
    out over the background, which itself is left to the widget unless the spec sets one (`on …`).
    ANSI themes cannot blend, so their translucent text is dim. None for an empty spec, or one that
    a user theme's variables do not make into a style."""
    try:  # only the variables the spec names: Textual tokenizes all it is given, on every parse
        style = Style.parse(spec, {name: variables[name] for name in _VARIABLE.findall(spec)})
    except Exception:  # a registered theme can hold anything in its variables
        return None
    if not style:
        return None
    over = (Style(background=background) + style).rich_style
    colours = RichStyle(
        color=_readable(over.color, over.bgcolor), bgcolor=over.bgcolor if style.background is not None else None
    )
    translucent_ansi = "%" in spec and style.foreground is not None and style.foreground.ansi is not None
    return style.rich_style.without_color + colours + (RichStyle(dim=True) if translucent_ansi else None)


def _readable(colour: RichColor | None, backdrop: RichColor | None) -> RichColor | None:
    """`colour`, moved towards the backdrop's contrasting text colour until it has MIN_CONTRAST."""
    if colour is None or backdrop is None or colour.triplet is None or backdrop.triplet is None:
        return colour  # ANSI and default colours are the terminal's to choose
    text, back = Color(*colour.triplet), Color(*backdrop.triplet)
    target = back.get_contrast_text(1.0)
    for _ in range(10):
        if contrast(text, back) >= MIN_CONTRAST:
            break
        text = text.blend(target, 0.15)
    return text.rich_color


def contrast(a: Color, b: Color) -> float:
    """The WCAG contrast ratio of two colours, from 1 (the same) to 21 (black on white)."""
    lighter, darker = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _luminance(colour: Color) -> float:
    r, g, b = (v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in colour.normalized)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b

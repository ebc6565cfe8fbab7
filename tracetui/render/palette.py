"""The colours of rendered traces, by role: blocks name a role ("error", "think", "badge.timeout")
and a Pygments token type, never a colour, and get their Rich style from a Palette when they are
styled. The UI builds the palette of the current Textual theme (`ui.theme`); this module holds the
default one, the hand-picked colours of the default dark theme, with monokai for code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pygments.styles import get_style_by_name
from pygments.token import Token, _TokenType
from rich.style import Style


@dataclass(frozen=True, eq=False)
class Palette:
    """Rich styles by role, and by Pygments token type for code."""

    roles: Mapping[str, Style]
    tokens: Mapping[_TokenType, Style | None]
    """Token types not listed take their nearest listed parent's style; None leaves plain text."""
    _resolved: dict[_TokenType, Style | None] = field(default_factory=dict, repr=False)

    def __getitem__(self, role: str) -> Style:
        return self.roles[role]

    def token(self, ttype: _TokenType) -> Style | None:
        """The style of a token type (code highlighting asks once per token: memoized)."""
        try:
            return self._resolved[ttype]
        except KeyError:
            listed = ttype
            while listed not in self.tokens and listed.parent is not None:
                listed = listed.parent
            style = self._resolved[ttype] = self.tokens.get(listed)
            return style


DEFAULT_ROLES = {
    # message headers: blue assistant, green user, magenta for harness plumbing
    "assistant": "bold #5fafff",
    "user": "bold #87d75f",
    "system": "bold #d787ff",
    "other_role": "bold #d0d0d0",
    "meta": "#808080",
    "restart": "bold #d787ff",
    "badge.parse_error": "bold #ffffff on #af0000",
    "badge.warning": "bold #000000 on #d7af00",
    "badge.completion_check": "bold #000000 on #5fafd7",
    "badge.timeout": "bold #000000 on #ff8700",
    "badge.output_limit": "bold #ffffff on #af0000",
    "badge.handoff": "bold #ffffff on #875faf",
    "badge.unparsed": "bold #ffffff on #af0000",
    "badge.prompt": "#87d75f",
    "badge.observation": "#808080",
    # harness messages' text, by kind
    "harness.parse_error": "#ff8787",
    "harness.warning": "#ffd75f",
    "harness.completion_check": "#87d7ff",
    "harness.timeout": "#ffaf5f",
    "harness.output_limit": "#ff8787",
    "harness.handoff": "",
    # message bodies: red errors, yellow warnings, grey for whatever is folded or secondary
    "think": "italic #8a8a8a",
    "label": "bold #87afd7",
    "folded": "#808080",
    "marker": "italic #6c6c6c",
    "omitted": "reverse #d7af00",
    "error": "#ff8787",
    "error.heading": "bold #ff8787",
    "warning": "#ffd75f",
    "command": "#808080",
    "key": "bold #ffaf5f",
    "complete": "bold #5fd75f",
    "tool": "bold #5fd7d7",
    "terminal": "#d0d0d0",
    "divider": "bright_black",
    # the verifier panel
    "heading": "bold",
    "fold": "dim",
    "outcome.pass": "bold green",
    "outcome.partial": "bold yellow",
    "outcome.fail": "bold red",
    "outcome.error": "bold magenta",
    "failed_test": "red",
    "log.passed": "green",
    "log.failed": "bold red",
    "log.error_line": "red",
    "log.skipped": "yellow",
}
"""Every role, with its style in the default theme: xterm-256 colours for a dark background."""


def _pygments_tokens(name: str) -> dict[_TokenType, Style | None]:
    """A Pygments style's token colours, without backgrounds; plain text keeps the block's own style."""
    tokens: dict[_TokenType, Style | None] = {Token: None, Token.Text: None}
    for ttype, spec in get_style_by_name(name):
        if ttype in Token.Text or ttype is Token:
            continue
        style = Style(
            color=f"#{spec['color']}" if spec["color"] else None,
            bold=spec["bold"] or None,
            italic=spec["italic"] or None,
            underline=spec["underline"] or None,
        )
        tokens[ttype] = style or None
    return tokens


DEFAULT_PALETTE = Palette(
    {role: Style.parse(spec) for role, spec in DEFAULT_ROLES.items()}, _pygments_tokens("monokai")
)

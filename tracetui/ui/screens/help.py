"""The help screen (`?`, F1): every binding, generated from the keymap so it is always true, with the
keys the user's config file gave it, and the letters of the trial list's findings column."""

from __future__ import annotations

from collections.abc import Mapping

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...findings import KINDS
from .. import keymap
from ..user_keymap import keymap_of
from ..widgets.findings_panel import kind_style


def key_names(binding: Binding, user_keymap: Mapping[str, str]) -> str:
    """The binding's keys as a reader writes them (`?`, `/`), remapped ones if the user remapped it."""
    names = []
    for key in user_keymap.get(binding.id or "", binding.key).split(","):
        key = key.strip()
        names.append(
            {
                "question_mark": "?",
                "exclamation_mark": "!",
                "ampersand": "&",
                "at": "@",
                "slash": "/",
                "left_square_bracket": "[",
                "right_square_bracket": "]",
                "plus": "+",
                "minus": "-",
                "less_than_sign": "<",
                "greater_than_sign": ">",
            }.get(key, key)
        )
    return " / ".join(names)


def bindings_table(user_keymap: Mapping[str, str]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for section, bindings in keymap.SECTIONS.items():
        table.add_row(Text(section, style="bold underline"), "")
        seen = set()
        for binding in bindings:
            if binding.action in seen:
                continue
            seen.add(binding.action)
            table.add_row(Text(key_names(binding, user_keymap)), Text(binding.description or binding.action))
        table.add_row("", "")
    table.add_row(Text("Mouse", style="bold underline"), "")
    table.add_row(Text("click / double-click"), Text("select / open a trial or toggle a filter value"))
    table.add_row(Text("wheel"), Text("scroll the pane under the pointer"))
    table.add_row(Text("click the position bar"), Text("seek there (the recording screen)"))
    table.add_row("", "")
    table.add_row(Text("Findings column", style="bold underline"), "")
    for kind in KINDS:
        table.add_row(Text(kind.mark, style=kind_style(kind.name)), Text(f"{kind.name}: {kind.summary}"))
    return table


class HelpBody(VerticalScroll):
    """The help's text: j / k, g / G and space / b scroll it, as the stats page."""

    BINDINGS = [*keymap.SCROLL]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [*keymap.HELP]

    def compose(self) -> ComposeResult:
        with HelpBody(id="help-body"):
            yield Static(Text("tracetui keys", style="bold"), id="help-title")
            yield Static(bindings_table(keymap_of(self.app)), id="help-table")

"""The triage screen's panes as the user arranges them: the verifier shown or hidden (`v`) and resized, the
sidebar resized, a pane zoomed (`z`), and the pane a prompt's answer acts on kept in view.
"""

from __future__ import annotations

from typing import Protocol

from textual.widget import Widget
from textual.widgets import Input

from ..evidence import FeatureHost
from ..widgets.facet_list import FacetList
from ..widgets.reading_panes import ReadingPanes
from ..widgets.sidebar import Sidebar
from ..widgets.verifier_panel import VerifierPanel


class LayoutHost(FeatureHost, Protocol):
    """What the layout uses of the triage screen (a Textual screen: it zooms a pane)."""

    @property
    def sidebar(self) -> Sidebar: ...
    @property
    def facet_list(self) -> FacetList: ...
    @property
    def verifier(self) -> VerifierPanel: ...
    @property
    def reading_panes(self) -> ReadingPanes: ...
    @property
    def maximized(self) -> Widget | None: ...
    @property
    def focused(self) -> Widget | None: ...
    def maximize(self, widget: Widget, container: bool = True) -> bool: ...
    def minimize(self) -> None: ...


class PaneLayout:
    def __init__(self, host: LayoutHost) -> None:
        self.host = host

    def toggle_verifier(self) -> None:
        host = self.host
        panel = host.verifier
        panel.display = not panel.display
        if not panel.display and panel.has_focus:
            host.conversation.focus()
        host.status_line.recheck()

    def zoom(self) -> None:
        """`z`: the focused pane fills the screen (the name filter's box zooms the sidebar); again, back."""
        host = self.host
        if host.maximized is not None:
            host.minimize()
        elif host.focused is not None:
            target = host.focused
            if isinstance(target, Input):
                target = host.facet_list
            host.maximize(target)

    def show_conversation(self) -> None:
        """A prompt was answered: the conversation, focused, in view (what the answer acts on)."""
        host = self.host
        if host.maximized is not None and host.maximized is not host.conversation:
            host.maximize(host.conversation)
        host.conversation.focus()

    def sidebar_resized(self, event: FacetList.Resized) -> None:
        sidebar = self.host.sidebar
        width = sidebar.resize(event.delta)

        def about() -> object:
            return sidebar.styles.width, sidebar.display

        if width is not None:
            self.host.status(f"Sidebar: {width} columns (+ / -).", about=about)
        else:
            self.host.status(
                "The sidebar is as wide as it gets here."
                if event.delta > 0
                else "The sidebar is as narrow as it gets.",
                about=about,
            )

    def verifier_resized(self, event: VerifierPanel.Resized) -> None:
        """`+` / `-` in the verifier: it grows or shrinks, or the message line says why it cannot."""
        host = self.host
        verifier = host.verifier
        height = None if host.maximized is verifier else host.reading_panes.resize_verifier(event.delta)

        def about() -> object:
            return verifier.styles.height, verifier.display, host.maximized

        if host.maximized is verifier:
            host.status("The verifier is zoomed (z goes back; then + / - resize it).", about=about)
        elif height is not None:
            host.status(f"Verifier: {height} lines (+ / -).", about=about)
        elif event.delta > 0:
            host.status(
                "The verifier is as tall as it gets here (the conversation keeps 5 lines); z zooms it.", about=about
            )
        else:
            host.status("The verifier is as short as it gets; v hides it.", about=about)

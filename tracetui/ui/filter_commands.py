"""The command palette's filter values: ctrl+p, a few letters, Enter toggles that filter.

Every value the sidebar shows with trials in it (and every value that is on) is a command titled
`facet: value` ("model: gpt-5-mini-2025-08-07"), with its live count, so any filter is a few keys away
without walking the sidebar. A value matches when each word typed is part of its title, as the
sidebar's `/` narrows values (letters scattered over a name do not match it), and it comes before a
command that matches as well: the same query picks the same entry wherever the focus is.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from textual.command import Hit, Hits, Provider

from .format import counted
from .widgets.facet_list import FacetList

BEFORE_COMMANDS = 0.01
"""Added to a value's score: of a value and a command that match a query as well, the value is first."""


class FilterValueCommands(Provider):
    """Registered on the triage screen: reads its sidebar, and toggles a value as the sidebar does (by
    posting `FacetList.Toggled` to the screen)."""

    def _entries(self) -> Iterator[tuple[str, str, str, str]]:
        facets = self.screen.query_one(FacetList)
        selected = facets.state.selected
        for facet in facets.facets:
            counts = facets.result.counts[facet.name] if facets.result else None
            for code in facets.value_codes(facet.name):
                label = facet.labels[code]
                count = int(counts[code]) if counts is not None else 0
                on = label in selected.get(facet.name, ())
                if not count and not on:
                    continue  # it would list nothing
                title = f"{facet.title.lower()}: {facets.shown_label(facet.name, label)}"
                help_text = f"{counted(count, 'trial')} · " + (
                    "on: Enter removes this filter" if on else "Enter filters to it"
                )
                yield title, facet.name, label, help_text

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        words = query.lower().split()
        for title, facet, label, help_text in self._entries():
            lowered = title.lower()
            if not all(word in lowered for word in words):
                continue
            score = matcher.match(title)
            if score > 0:
                toggled = FacetList.Toggled(facet, label)
                yield Hit(
                    score + BEFORE_COMMANDS,
                    matcher.highlight(title),
                    partial(self.screen.post_message, toggled),
                    help=help_text,
                )

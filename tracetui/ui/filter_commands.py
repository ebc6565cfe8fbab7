"""The command palette's filter values: ctrl+p, a few letters, Enter toggles that filter.

Every value the sidebar shows is a command titled `facet: value` ("model: gpt-5-mini-2025-08-07"),
with its live count, so any filter is a few keys away without walking the sidebar.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from textual.command import Hit, Hits, Provider

from .format import counted
from .widgets.facet_list import FacetList


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
                title = f"{facet.title.lower()}: {facets.shown_label(facet.name, label)}"
                help_text = f"{counted(count, 'trial')} · " + (
                    "on: Enter removes this filter" if on else "Enter filters to it"
                )
                yield title, facet.name, label, help_text

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        letters = set(query.lower().replace(" ", ""))
        for title, facet, label, help_text in self._entries():
            if not letters <= set(title.lower()):  # cheap test before the fuzzy match (task facets are long)
                continue
            score = matcher.match(title)
            if score > 0:
                toggled = FacetList.Toggled(facet, label)
                yield Hit(score, matcher.highlight(title), partial(self.screen.post_message, toggled), help=help_text)

"""The command palette's filter values: ctrl+p, a few letters, Enter toggles that filter.

Every value the sidebar shows is a command titled `facet: value` ("model: gpt-5-mini-2025-08-07"),
with its live count, so any filter is a few keys away without walking the sidebar.
"""

from __future__ import annotations

from functools import partial

from textual.command import Hit, Hits, Provider


class FilterValueCommands(Provider):
    """Registered on the triage screen (needs its `facet_list` and `toggle_filter`)."""

    def _entries(self):
        facets = self.screen.facet_list
        selected = facets.state.selected
        for facet in facets.facets:
            counts = facets.result.counts[facet.name] if facets.result else None
            for code in facets.value_codes(facet.name):
                label = facet.labels[code]
                count = int(counts[code]) if counts is not None else 0
                on = label in selected.get(facet.name, ())
                title = f"{facet.title.lower()}: {facets.shown_label(facet.name, label)}"
                help_text = f"{count:,} trials · " + ("on: Enter removes this filter" if on else "Enter filters to it")
                yield title, facet.name, label, help_text

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        letters = set(query.lower().replace(" ", ""))
        for title, facet, label, help_text in self._entries():
            if not letters <= set(title.lower()):  # cheap test before the fuzzy match (task facets are long)
                continue
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(title), partial(self.screen.toggle_filter, facet, label), help=help_text
                )

"""Filter values on the triage screen: toggled from the sidebar or the command palette, found by
typing in the sidebar (`/`), and described in the header."""

from __future__ import annotations

from textual.widgets import Input

from ..widgets.bars import PromptBar
from ..widgets.facet_list import FacetList


class FilterActions:
    """Mixed into TriageScreen (needs `state`, `apply_filters`, `facet_list`, `trial_list`, `prompt`,
    `search_result`, `status`). Message handlers are named `on_…`, so they work from a mixin."""

    def toggle_filter(self, facet: str, label: str) -> None:
        """A filter value on or off (the sidebar, the command palette)."""
        self.state = self.state.toggled(facet, label)
        self.apply_filters()
        shown = f"{facet}={self.facet_list.shown_label(facet, label)}"
        on = label in self.state.selected.get(facet, ())
        self.status(f"Filter {shown} on: {len(self.trial_list.order):,} trials." if on else f"Filter {shown} off.")

    def on_facet_list_filter_values(self, event: FacetList.FilterValues) -> None:
        self.prompt.ask("values", "show filter values containing… (↑ / ↓ move, Enter toggles, Esc)")

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input is self.prompt and self.prompt.mode == "values":
            self.facet_list.set_query(event.value)

    def on_prompt_bar_stepped(self, event: PromptBar.Stepped) -> None:
        if event.mode == "values":
            self.facet_list.move_to(self.facet_list.cursor + event.step)

    def _values_answered(self, text: str) -> None:
        """Enter toggles the value under the sidebar's cursor; either way all values show again."""
        facets = self.facet_list
        if text and facets.current_value() is not None:
            facets.activate()
        facets.set_query("")
        facets.focus()

    def _filters_text(self) -> str:
        """The active filters as `facet=value|value`, models by their short names."""
        names = self.trial_list.model_names
        parts = [
            f"{facet}=" + "|".join(sorted(names.get(v, v) if facet == "model" else v for v in values))
            for facet, values in self.state.selected.items()
        ]
        if self.state.text:
            parts.append(f"name~{self.state.text}")
        if self.search_result is not None:
            parts.append(f"matches~{self.search_result.pattern}")
        return " ".join(parts)

"""The filters and the sort order as the triage screen's keys and sidebar change them: which facets the
sidebar shows, a value on or off, the name filter's box (`&`), the filter-values prompt (`/` in the
sidebar), `x`, `o` / `O` and the filters picked on the stats and head-to-head screens.

The filters are the screen's `state` (the sidebar is bound to it; a change applies them); the sort
order is kept here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

import numpy as np
from textual.widgets import Input

from ...data.facets import ASK_PREFIX, FilterState
from ..evidence import FeatureHost
from ..format import counted
from ..widgets.bars import PromptBar, PromptMode
from ..widgets.facet_list import FacetList
from ..widgets.sidebar import Sidebar
from .lines import filters_text

NAME_PLACEHOLDER = "& task, trial…"
"""The name filter's box says what it matches and its key (`&`; Enter or Esc goes back to the list)."""
ALWAYS_SHOWN = ("outcome", "result", "model", "task")
SHOWN_WHEN_VARIED = ("agent", "model_provider", "trace_source", "dataset")
SHOWN_FIRST = ("outcome", "finding", ASK_PREFIX)
"""What went wrong comes right after the outcome, once the findings are in; then the answers to the
questions asked (`ask:NAME`)."""


def _shown_order(name: str) -> int:
    kind = ASK_PREFIX if name.startswith(ASK_PREFIX) else name
    return SHOWN_FIRST.index(kind) if kind in SHOWN_FIRST else len(SHOWN_FIRST)


class FiltersHost(FeatureHost, Protocol):
    """What the filters use of the triage screen."""

    @property
    def facet_list(self) -> FacetList: ...
    @property
    def sidebar(self) -> Sidebar: ...
    @property
    def name_filter(self) -> Input: ...
    @property
    def prompt(self) -> PromptBar: ...
    def apply_filters(self, keep: int | None = None) -> None: ...


class Filters:
    def __init__(self, host: FiltersHost) -> None:
        self.host = host
        self.sort_key = "task"
        self.sort_reverse = False

    def show_facets(self) -> None:
        """The sidebar's facets: the core ones, the others when they vary, and any added later."""
        facets = self.host.session.facets
        totals = facets.apply(FilterState()).counts
        names = [*ALWAYS_SHOWN, *(n for n in SHOWN_WHEN_VARIED if int(np.count_nonzero(totals[n])) > 1)]
        names += [n for n in facets.facets if n not in ALWAYS_SHOWN + SHOWN_WHEN_VARIED and totals[n].any()]
        names.sort(key=_shown_order)
        model_names = self.host.trial_list.model_names
        self.host.facet_list.set_facets([facets.facets[n] for n in names], totals, {"model": model_names})

    def _listed(self) -> str:
        return counted(len(self.host.trial_list.order), "trial")

    # --- values ----------------------------------------------------------------------------------
    def toggle(self, facet: str, label: str) -> None:
        """A filter value on or off (the sidebar, the command palette)."""
        host = self.host
        host.state = host.state.toggled(facet, label)
        shown = f"{facet}={host.facet_list.shown_label(facet, label)}"
        on = label in host.state.selected.get(facet, ())
        host.status(f"Filter {shown} on: {self._listed()}." if on else f"Filter {shown} off.", about=host.about_filters)

    def picked(self, picked: FilterState | None) -> None:
        """A filter chosen on the stats or head-to-head screen narrows the current one."""
        host = self.host
        if picked is not None:
            host.state = replace(host.state, selected={**host.state.selected, **picked.selected})
            if len(host.trial_list.order):
                shown = filters_text(picked, host.trial_list.model_names, None)
                host.status(f"Filter {shown} on: {self._listed()}.", about=host.about_filters)

    def clear(self) -> None:
        host = self.host
        if host.state == FilterState():
            host.status("No filters to clear.", about=host.about_filters)
            return
        host.state = FilterState()
        host.name_filter.value = ""
        host.status("Filters cleared.", about=host.about_filters)

    def focus_sidebar(self) -> None:
        self.host.sidebar.display = True
        self.host.facet_list.focus()

    # --- the name filter's box -------------------------------------------------------------------
    def focus_name(self) -> None:
        """`&`: type in the name filter's box (Enter or Esc goes back to the list)."""
        self.host.sidebar.display = True
        self.host.name_filter.focus()

    def name_changed(self, text: str) -> None:
        self.host.state = replace(self.host.state, text=text)

    def name_submitted(self) -> None:
        host = self.host
        host.trial_list.focus()
        text = host.state.text
        host.status(f"Name filter {text!r}: {self._listed()}." if text else "No name filter.", about=host.about_filters)

    # --- the filter-values prompt ----------------------------------------------------------------
    def ask_values(self) -> None:
        self.host.prompt.ask(PromptMode.VALUES, "show filter values containing… (↑ / ↓ move, Enter toggles, Esc)")

    def values_typed(self, text: str) -> None:
        if self.host.prompt.mode is PromptMode.VALUES:
            self.host.facet_list.narrow_to(text)

    def values_stepped(self, event: PromptBar.Stepped) -> None:
        if event.mode is PromptMode.VALUES:
            self.host.facet_list.move_to(self.host.facet_list.cursor + event.step)

    def values_answered(self, text: str) -> None:
        """Enter toggles the value under the sidebar's cursor; either way all values show again."""
        facets = self.host.facet_list
        if text and facets.current_value() is not None:
            facets.activate()
        facets.narrow_to("")
        facets.focus()

    # --- the sort order --------------------------------------------------------------------------
    def cycle_sort(self) -> None:
        keys = self.host.session.ordering.keys  # the source's: usage orders only where trials record usage
        self.sort_key = keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self._sorted()

    def sort_by(self, key: str) -> None:
        if key in self.host.session.ordering.keys:
            self.sort_key = key
            self._sorted()

    def reverse_sort(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self._sorted()

    def _sorted(self) -> None:
        self.host.apply_filters()
        name = self.sort_key.replace("_", " ")  # agent_time: the agent's time
        line = f"Sorted by {name}{' (reversed)' if self.sort_reverse else ''}."
        self.host.status(line, about=self.host.about_filters)

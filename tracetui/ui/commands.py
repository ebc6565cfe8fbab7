"""The command palette (ctrl+p) offers the actions of the screen it is opened on: `ScreenCommands`
(in `App.COMMANDS`) lists the calling screen's own key bindings, with the keys the user gave them,
and a screen adds commands without a key through its `COMMANDS` (the triage screen: sort by …)."""

from __future__ import annotations

from functools import partial

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from .screens.help import key_names
from .user_keymap import bindings_by_id, keymap_of
from .widgets.trial_list import TrialList


class EntryCommands(Provider):
    """A provider of (title, action, help) entries that run on the calling screen."""

    def entries(self) -> list[tuple[str, str, str]]:
        raise NotImplementedError

    async def _run(self, action: str) -> None:
        await self.screen.run_action(action)

    async def discover(self) -> Hits:
        for title, action, help_text in self.entries():
            yield DiscoveryHit(title, partial(self._run, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action, help_text in self.entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self._run, action), help=help_text)


class ScreenCommands(EntryCommands):
    """Every action the calling screen binds to a key, in its keymap order."""

    def entries(self) -> list[tuple[str, str, str]]:
        user_keymap = keymap_of(self.app)
        entries = []
        seen = set()
        for binding in type(self.screen).BINDINGS:
            if not isinstance(binding, Binding) or binding.action in seen:
                continue
            seen.add(binding.action)
            entries.append(
                (binding.description or binding.action, binding.action, f"key: {key_names(binding, user_keymap)}")
            )
        return entries


class SortCommands(EntryCommands):
    """The triage screen's sort orders, which `o` cycles through (tokens, cost and agent time only for
    sources that record them)."""

    def entries(self) -> list[tuple[str, str, str]]:
        cycle = key_names(bindings_by_id()["sort.cycle"], keymap_of(self.app))
        keys = self.screen.query_one(TrialList).session.ordering.keys
        return [(f"Sort by {key}", f"sort_by('{key}')", f"{cycle} cycles the sort order") for key in keys]

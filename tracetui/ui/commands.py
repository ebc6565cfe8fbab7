"""The command palette (ctrl+p): every action of the keymap, plus the ones without a key."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ..data.ordering import SORT_KEYS
from . import keymap
from .screens.help import key_names


def palette_entries() -> list[tuple[str, str, str]]:
    """(title, action, help) for every screen-level action, in keymap order."""
    entries = []
    seen = set()
    for binding in keymap.APP:
        if binding.action in seen:
            continue
        seen.add(binding.action)
        entries.append((binding.description or binding.action, binding.action, f"key: {key_names(binding)}"))
    for key in SORT_KEYS:
        entries.append((f"Sort by {key}", f"sort_by('{key}')", "o cycles the sort order"))
    return entries


class ActionCommands(Provider):
    def _run(self, action: str) -> None:
        self.screen.run_action(action)

    async def discover(self) -> Hits:
        for title, action, help_text in palette_entries():
            yield DiscoveryHit(title, partial(self._run, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action, help_text in palette_entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self._run, action), help=help_text)

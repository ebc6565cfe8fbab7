"""The unit the conversation view lays out: a block of sanitized text with deferred styling.

Renderers turn a message into blocks; the view wraps `text` cheaply to know heights, and calls
`styler` only for blocks that scroll into view, so highlighting never runs on hidden content.
Blocks name palette roles, not colours, so a theme change restyles them without rebuilding them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from rich.text import Text

from .palette import Palette


class Toggle(Enum):
    """Enter on a block that folds: the view flips a state and renders the blocks again."""

    THINKING = "thinking"
    """A message's reasoning: folded to a one-line preview, or shown."""
    EXPAND = "expand"
    """Something cut to its head and tail (a long message, a long log): shown whole, or cut again."""


@dataclass(frozen=True, slots=True)
class GotoLogLine:
    """Enter on a failed test: the verifier panel's cursor goes to this line of the log (0-based)."""

    line: int


@dataclass(frozen=True, slots=True)
class UnfoldNoise:
    """Enter on folded install output: the verifier panel shows the report's noise range `fold`."""

    fold: int


BlockAction = Toggle | GotoLogLine | UnfoldNoise
"""What Enter does on a block."""


@dataclass(eq=False, slots=True)
class Block:
    text: str
    """Plain text as shown: sanitized (no control characters but newlines) and already cut."""
    style: str = ""
    """Palette role of the whole block's base style (applied beneath the styler's spans); "" for none."""
    styler: Callable[[Palette], Text] | None = None
    """Returns a Text whose `.plain == text`, with highlighting in the palette's colours; called lazily."""
    indent: int = 0
    """Cells of left padding on every line."""
    wrap: bool = True
    """Wrap at the last space that fits when True (prose, code, logs: no word is cut that could stay
    whole); when False, each line is cut at the width, never wrapped (rules drawn with ─)."""
    action: BlockAction | None = None
    """What Enter does on this block."""
    message: int = -1
    """Index of the message this block belongs to in the trial history; -1 for trial-level blocks."""

    def styled(self, palette: Palette) -> Text:
        """The block's Text with its base style and any highlighting (never parses markup)."""
        text = self.styler(palette) if self.styler is not None else Text(self.text)
        if self.style:
            text.stylize_before(palette[self.style])
        return text

"""Horizontal bar charts (a Rich renderable) for the stats screen's distributions."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.style import Style
from rich.text import Text

from ..format import fit

DIM = Style(dim=True)


@dataclass(frozen=True, slots=True)
class BarChart:
    """Horizontal bars under a title: label, count, bar; drawn to whatever width it is given."""

    title: str
    bars: list[tuple[str, int, Style]]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        yield Text(self.title, style="bold underline", no_wrap=True, overflow="ellipsis")
        if not self.bars:
            yield Text("no trials", style="dim")
            return
        digits = len(f"{max(n for _, n, _ in self.bars):,}")
        label = min(max(cell_len(name) for name, _, _ in self.bars), max(6, min(width // 2, width - digits - 12)))
        room = max(1, width - label - digits - 2)
        top = max(max(n for _, n, _ in self.bars), 1)
        for name, count, style in self.bars:
            line = Text(no_wrap=True, overflow="crop")
            line.append(fit(name, label) + " ")
            line.append(f"{count:>{digits},} ", DIM if not count else "")
            eighths = round(8 * room * count / top)
            if count and not eighths:
                eighths = 1
            line.append("█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8], style)
            yield line

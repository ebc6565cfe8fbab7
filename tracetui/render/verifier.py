"""The verifier panel's content as blocks: the verdict, the failed tests first, then the log with its
install noise folded. Enter on a failed test jumps to its traceback in the log."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text

from ..trace.sanitize import sanitize
from .ansi import SgrChain, ansi_text
from .block import Block, GotoLogLine, Toggle, UnfoldNoise
from .palette import Palette

if TYPE_CHECKING:
    from ..verifier import VerifierReport

HEAD_LINES, TAIL_LINES = 1500, 3000
"""A log longer than both is shown cut, like a long message, until expanded."""
PIECE_LINES = 200
"""Log lines to a block (see `_log_block`)."""
STATUS_ROLES = tuple(
    (re.compile(pattern, re.MULTILINE), role)
    for pattern, role in (
        (r"\b(PASSED|passed|PASS|ok)\b", "log.passed"),
        (r"\b(FAILED|failed|FAIL|ERROR|error|panicked)\b", "log.failed"),
        (r"^E\s.*$", "log.error_line"),
        (r"\b(SKIPPED|skipped|XFAIL|xfailed)\b", "log.skipped"),
    )
)
"""Palette roles of the status words in a log."""
COLOURED_OUTCOMES = ("pass", "partial", "fail", "error")
"""Outcomes whose verdict has a colour (palette role `outcome.<outcome>`); others are just bold."""


@dataclass(slots=True)
class VerifierView:
    """What the panel shows and where each log line landed (for jumps)."""

    blocks: list[Block]
    line_block: list[tuple[int, int]] = field(default_factory=list)  # (first log line, block index)


def verifier_view(
    text: str | None,
    outcome: str,
    result: str | None,
    report: VerifierReport,
    unfolded: frozenset[int] = frozenset(),
    expanded: bool = False,
    usage: Sequence[str] = (),
) -> VerifierView:
    """`usage`: lines under the verdict (the trial's time split, tokens and cost, where recorded)."""
    from ..verifier import verdict_line  # the caller parsed the log: the parser is loaded already

    role = f"outcome.{outcome}" if outcome in COLOURED_OUTCOMES else "heading"
    figures = [Block(line, style="meta") for line in usage]
    if text is None:
        if outcome == "running":  # a job still running: its verifier comes after the agent
            return VerifierView(
                [Block("The verifier has not run yet: the trial is still running.", style=role), *figures]
            )
        why = f" — the trial ended with {sanitize(result)}" if outcome == "error" and result else ""
        return VerifierView([Block(f"The verifier did not run{why}.", style=role), *figures])
    blocks = [Block(sanitize(verdict_line(outcome, result, report)), style=role), *figures]
    failures = {f.test: f for f in report.failures}
    failed = report.failed_tests
    if failed:
        blocks.append(Block(f"Failed tests ({len(failed)}) — Enter jumps to the traceback", style="heading"))
        for name in failed:
            failure = failures.get(name)
            line = failure.line if failure else next((t.line for t in report.tests if t.name == name), -1)
            assertion = f"\n    {failure.assertion}" if failure and failure.assertion else ""
            blocks.append(
                Block(sanitize(f"✘ {name}{assertion}"), style="failed_test", action=GotoLogLine(line), indent=1)
            )
    blocks.append(Block("Log", style="heading"))
    view = VerifierView(blocks)
    raw_lines = text.split("\n")
    shown = _shown_ranges(len(raw_lines), expanded)
    noise = list(report.noise)
    for start, stop in shown:
        position = start
        for number, (a, b) in enumerate(noise):
            if b <= position or a >= stop:
                continue
            if number in unfolded:
                continue
            if a > position:
                _log_block(view, raw_lines, position, a)
            blocks.append(
                Block(f"▸ {b - a} lines of install output — Enter to show", style="fold", action=UnfoldNoise(number))
            )
            view.line_block.append((a, len(blocks) - 1))
            position = max(position, b)
        if position < stop:
            _log_block(view, raw_lines, position, stop)
        if stop < len(raw_lines) and (start, stop) == shown[0] and len(shown) > 1:
            hidden = shown[1][0] - stop
            blocks.append(Block(f"… {hidden:,} lines hidden — Enter to expand", style="fold", action=Toggle.EXPAND))
    return view


def _shown_ranges(count: int, expanded: bool) -> list[tuple[int, int]]:
    if expanded or count <= HEAD_LINES + TAIL_LINES:
        return [(0, count)]
    return [(0, HEAD_LINES), (count - TAIL_LINES, count)]


def _log_block(view: VerifierView, raw_lines: list[str], start: int, stop: int) -> None:
    """Log lines [start, stop) as blocks of up to PIECE_LINES lines: each is styled when it is first
    drawn, so a long log's first screen does not style all of it (3,000 lines took ~0.1 s of the UI
    thread on every switch to such a trial); the colours in force run on from block to block."""
    firsts = range(start, stop, PIECE_LINES)
    log = SgrChain(["\n".join(raw_lines[first : min(first + PIECE_LINES, stop)]) for first in firsts])
    for number, first in enumerate(firsts):
        view.line_block.append((first, len(view.blocks)))
        view.blocks.append(Block(sanitize(log.sources[number]), styler=partial(_log_text, log, number)))


def _log_text(log: SgrChain, number: int, palette: Palette) -> Text:
    text = ansi_text(log.sources[number], log.state(number))
    for pattern, role in STATUS_ROLES:
        text.highlight_regex(pattern, palette[role])
    return text

"""The verifier panel's content as blocks: the verdict, the failed tests first, then the log with its
install noise folded. Enter on a failed test jumps to its traceback in the log."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.text import Text

from ..trace.sanitize import sanitize
from .ansi import ansi_text
from .block import Block

if TYPE_CHECKING:
    from ..verifier import VerifierReport

HEAD_LINES, TAIL_LINES = 1500, 3000
"""A log longer than both is shown cut, like a long message, until expanded."""
STATUS_STYLES = tuple(
    (re.compile(pattern, re.MULTILINE), style)
    for pattern, style in (
        (r"\b(PASSED|passed|PASS|ok)\b", "green"),
        (r"\b(FAILED|failed|FAIL|ERROR|error|panicked)\b", "bold red"),
        (r"^E\s.*$", "red"),
        (r"\b(SKIPPED|skipped|XFAIL|xfailed)\b", "yellow"),
    )
)
OUTCOME_STYLE = {"pass": "bold green", "partial": "bold yellow", "fail": "bold red", "error": "bold magenta"}


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
) -> VerifierView:
    from ..verifier import verdict_line  # the caller parsed the log: the parser is loaded already

    style = OUTCOME_STYLE.get(outcome, "bold")
    if text is None:
        why = f" — the trial ended with {sanitize(result)}" if outcome == "error" and result else ""
        return VerifierView([Block(f"The verifier did not run{why}.", style=style)])
    blocks = [Block(sanitize(verdict_line(outcome, result, report)), style=style)]
    failures = {f.test: f for f in report.failures}
    failed = report.failed_tests
    if failed:
        blocks.append(Block(f"Failed tests ({len(failed)}) — Enter jumps to the traceback", style="bold"))
        for name in failed:
            failure = failures.get(name)
            line = failure.line if failure else next((t.line for t in report.tests if t.name == name), -1)
            assertion = f"\n    {failure.assertion}" if failure and failure.assertion else ""
            blocks.append(Block(sanitize(f"✘ {name}{assertion}"), style="red", action=f"goto:{line}", indent=1))
    blocks.append(Block("Log", style="bold"))
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
                Block(f"▸ {b - a} lines of install output — Enter to show", style="dim", action=f"noise:{number}")
            )
            view.line_block.append((a, len(blocks) - 1))
            position = max(position, b)
        if position < stop:
            _log_block(view, raw_lines, position, stop)
        if stop < len(raw_lines) and (start, stop) == shown[0] and len(shown) > 1:
            hidden = shown[1][0] - stop
            blocks.append(Block(f"… {hidden:,} lines hidden — Enter to expand", style="dim", action="expand"))
    return view


def _shown_ranges(count: int, expanded: bool) -> list[tuple[int, int]]:
    if expanded or count <= HEAD_LINES + TAIL_LINES:
        return [(0, count)]
    return [(0, HEAD_LINES), (count - TAIL_LINES, count)]


def _log_block(view: VerifierView, raw_lines: list[str], start: int, stop: int) -> None:
    raw = "\n".join(raw_lines[start:stop])

    def styler(raw: str = raw) -> Text:
        text = ansi_text(raw)
        for pattern, style in STATUS_STYLES:
            text.highlight_regex(pattern, style)
        return text

    view.line_block.append((start, len(view.blocks)))
    view.blocks.append(Block(sanitize(raw), styler=styler, wrap=False))

"""The verifier panel's blocks: a long log comes in blocks of whole lines, each styled when first drawn,
and every log line still maps to the block (and line within it) that shows it."""

from __future__ import annotations

from bisect import bisect_right

from rich.color import Color

from tracetui.render.block import GotoLogLine
from tracetui.render.palette import DEFAULT_PALETTE
from tracetui.render.verifier import PIECE_LINES, verifier_view
from tracetui.trace.sanitize import sanitize
from tracetui.verifier import parse_verifier


def test_a_long_log_is_in_blocks_of_whole_lines_and_a_jump_lands_on_its_line():
    lines = [f"tests/test_mod.py::test_case_{i} \x1b[32mPASSED\x1b[0m [{i % 100:3d}%]" for i in range(5000)]
    lines[4321] = "tests/test_mod.py::test_case_4321 \x1b[31mFAILED\x1b[0m [ 21%]"
    lines += [
        "",
        "=" * 20 + " FAILURES " + "=" * 20,
        "_" * 10 + " test_case_4321 " + "_" * 10,
        "",
        "    def test_case_4321():",
    ]
    lines += [">       assert 4321 == 0", "E       assert 4321 == 0", "", "tests/test_mod.py:9: AssertionError"]
    lines += ["=" * 10 + " 1 failed, 4999 passed in 12.30s " + "=" * 10]
    log = "\n".join(lines)
    report = parse_verifier(log)
    view = verifier_view(log, "fail", "0.0", report, expanded=True)
    starts = [start for start, _ in view.line_block]
    log_blocks = [view.blocks[block] for _, block in view.line_block]
    assert len(log_blocks) > 20 and all(b.text.count("\n") < PIECE_LINES for b in log_blocks)
    assert "\n".join(b.text for b in log_blocks) == sanitize(log)  # every line once, whole
    [jump] = [b.action for b in view.blocks if isinstance(b.action, GotoLogLine)]
    for line in (jump.line, 4321, 0, len(lines) - 1):
        start, block = view.line_block[bisect_right(starts, line) - 1]
        styled = view.blocks[block].styled(DEFAULT_PALETTE)
        assert styled.plain.split("\n")[line - start] == sanitize(lines[line])
    assert jump.line > 5000 and "test_case_4321" in lines[jump.line]  # its traceback, past many blocks


def test_a_colour_set_before_a_block_boundary_goes_on_past_it():
    """A log cut in blocks shows the same colours as the whole: an SGR colour still in force at a block's
    first line (set in the block before, not reset) colours it."""
    lines = [f"line {i}" for i in range(2 * PIECE_LINES)]
    lines[PIECE_LINES - 2] = "\x1b[31mred from here"
    lines[PIECE_LINES + 3] = "still red\x1b[0m plain again"
    view = verifier_view("\n".join(lines), "fail", "0.0", parse_verifier("\n".join(lines)))
    starts = [start for start, _ in view.line_block]
    start, block = view.line_block[bisect_right(starts, PIECE_LINES + 1) - 1]
    assert start == PIECE_LINES
    styled = view.blocks[block].styled(DEFAULT_PALETTE)
    line_start = styled.plain.index("line 201")
    colours = {s.style.color for s in styled.spans if s.start <= line_start < s.end and s.style.color}
    assert colours == {Color.from_ansi(1)}  # SGR 31
    plain_at = styled.plain.index("plain again")
    assert not [s for s in styled.spans if s.start <= plain_at < s.end and s.style.color]

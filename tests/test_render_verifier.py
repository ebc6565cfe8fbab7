"""The verifier panel's blocks: a long log comes in blocks of whole lines, each styled when first drawn,
and every log line still maps to the block (and line within it) that shows it."""

from __future__ import annotations

from bisect import bisect_right

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

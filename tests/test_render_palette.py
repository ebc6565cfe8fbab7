"""Palettes: blocks name roles and token types, and the palette they are styled with picks the colours."""

from __future__ import annotations

import json
from pathlib import Path

from pygments.token import Token
from rich.style import Style

from tracetui.render.highlight import highlight
from tracetui.render.messages import BADGES, MessageState, message_blocks
from tracetui.render.palette import DEFAULT_PALETTE, DEFAULT_ROLES, Palette
from tracetui.render.verifier import verifier_view
from tracetui.trace.harness import HARNESS_KINDS
from tracetui.trace.model import Message
from tracetui.verifier import parse_verifier

GOLDEN = Path(__file__).parent / "fixtures" / "harbor-golden"


KEYWORD = Style(color="#0100c8")


def numbered_palette() -> Palette:
    """Each role in its own colour (#010001, #010002, ...), keywords in #0100c8."""
    roles = {role: Style(color=f"#0100{n:02x}") for n, role in enumerate(sorted(DEFAULT_ROLES), 1)}
    return Palette(roles, {Token: None, Token.Keyword: KEYWORD})


def golden_histories() -> list[list[Message]]:
    histories = []
    for path in sorted(GOLDEN.glob("*.traces.json")):
        row = json.loads(path.read_text())[-1]
        histories.append(
            [Message(m["role"], m["content"], episode=0, index=k) for k, m in enumerate(row["conversations"])]
        )
    return histories


def role_at(palette: Palette, styled, offset: int) -> list[str]:
    """The roles whose style covers a character of a styled block."""
    by_style = {style: role for role, style in palette.roles.items()}
    return [by_style[span.style] for span in styled.spans if span.start <= offset < span.end and span.style in by_style]


def test_every_kind_of_badge_and_harness_message_has_a_role():
    assert {f"badge.{kind}" for kind in BADGES} <= set(DEFAULT_ROLES)
    assert {f"harness.{kind}" for kind in HARNESS_KINDS} <= set(DEFAULT_ROLES)


def test_the_palette_decides_every_colour_of_a_message():
    palette = numbered_palette()
    ours = {style.color for style in palette.roles.values()} | {KEYWORD.color}
    for history in golden_histories():
        for i, _message in enumerate(history):
            for state in (MessageState(), MessageState(think_open=True, expanded=True)):
                for block in message_blocks(history, i, state):
                    styled = block.styled(palette)
                    assert styled.plain == block.text
                    colours = {
                        span.style.color
                        for span in styled.spans
                        if isinstance(span.style, Style)
                        and span.style.color is not None
                        and span.style.color.triplet is not None
                    }
                    assert colours <= ours, block.text[:80]  # no colour of its own, and no monokai
    history = golden_histories()[0]
    first_reply = next(i for i, m in enumerate(history) if m.role == "assistant")
    header = message_blocks(history, first_reply)[0].styled(palette)
    assert role_at(palette, header, 0) == ["assistant"]


def test_verifier_blocks_take_their_roles_from_the_palette():
    log = "tests/test_a.py::test_one PASSED\ntests/test_a.py::test_two FAILED\nE   assert 1 == 2\n"
    view = verifier_view(log, "fail", "0.0", parse_verifier(log))
    palette = numbered_palette()
    verdict = view.blocks[0].styled(palette)
    assert view.blocks[0].style == "outcome.fail"
    assert verdict.spans[0].style == palette["outcome.fail"]
    styled_log = view.blocks[-1].styled(palette)
    failed = styled_log.plain.index("FAILED")
    assert "log.failed" in role_at(palette, styled_log, failed)


def test_code_takes_its_token_colours_from_the_palette():
    text = highlight("def f(x):\n    return x\n", "python", numbered_palette())
    assert [span.style for span in text.spans if text.plain[span.start : span.end] == "def"] == [KEYWORD]
    assert highlight("def f(x):\n", "python", DEFAULT_PALETTE).spans[0].style.color.triplet.hex == "#66d9ef"


def test_token_types_inherit_their_parents_style():
    palette = numbered_palette()
    assert palette.token(Token.Keyword.Namespace) == KEYWORD
    assert palette.token(Token.Name.Function) is None
    assert DEFAULT_PALETTE.token(Token.Text.Whitespace) is None  # plain text keeps the block's style

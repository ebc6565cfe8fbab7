"""message_blocks: what the conversation view gets for each message."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.style import Style

from tracetui.render import messages as msgs
from tracetui.render.block import Toggle
from tracetui.render.messages import MAX_LINES, MessageState, message_blocks
from tracetui.render.palette import DEFAULT_PALETTE
from tracetui.trace.model import Message

from .linear import growth

GOLDEN = Path(__file__).parent / "fixtures" / "harbor-golden"
STATES = [MessageState(), MessageState(think_open=True), MessageState(expanded=True), MessageState(True, True)]
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff]")


def history(*pairs: tuple[str, str], restart_at: int = -1) -> list[Message]:
    return [
        Message(role, content, episode=k // 2, index=k, restart=k == restart_at)
        for k, (role, content) in enumerate(pairs)
    ]


def golden(name: str, row: int = -1) -> list[Message]:
    rows = json.loads((GOLDEN / f"{name}.traces.json").read_text())
    return history(*((m["role"], m["content"]) for m in rows[row]["conversations"]))


def check(blocks, i):
    """The contract every block keeps."""
    for block in blocks:
        assert block.message == i
        assert not CONTROL.search(block.text), repr(block.text)
        styled = block.styled(DEFAULT_PALETTE)
        assert styled.plain == block.text
        assert all(getattr(span.style, "link", None) is None for span in styled.spans)
    return blocks


def styles_at(styled, offset: int) -> list[Style]:
    """The styles of the spans over a character (the block's base style included)."""
    return [
        Style.parse(s.style) if isinstance(s.style, str) else s.style for s in styled.spans if s.start <= offset < s.end
    ]


def colours_at(styled, offset: int) -> set[str]:
    return {
        style.color.triplet.hex if style.color.triplet else f"ansi {style.color.number}"
        for style in styles_at(styled, offset)
        if style.color
    }


def texts(blocks) -> str:
    return "\n".join(block.text for block in blocks)


ALL_GOLDEN = sorted(p.name.removesuffix(".traces.json") for p in GOLDEN.glob("*.traces.json"))


@pytest.mark.parametrize("name", ALL_GOLDEN)
@pytest.mark.parametrize("state", STATES)
def test_every_golden_message_renders(name, state):
    rows = json.loads((GOLDEN / f"{name}.traces.json").read_text())
    for row in range(len(rows)):
        hist = golden(name, row)
        for i in range(len(hist)):
            blocks = check(message_blocks(hist, i, state), i)
            assert blocks[0].text.startswith(hist[i].role) and "\n" not in blocks[0].text


def test_invalid_json_reply_is_shown_unparsed_with_the_harness_error_beneath():
    hist = golden("terminus-2_hello-world-invalid-json")
    blocks = check(message_blocks(hist, 1), 1)
    text = [b.text for b in blocks]
    assert "⚠ unparsed reply" in text[0]
    marker = text.index("⚠ unparsed reply")
    raw = next(k for k, t in enumerate(text) if '"keystrokes": "printf' in t)
    error = next(k for k, t in enumerate(text) if t.startswith("ERROR: Missing required fields: analysis, plan"))
    assert marker < raw < error
    assert "Extra text detected before JSON object" in text[error]
    assert blocks[error].style == "error"


def test_prose_reply_flagged_by_the_harness_is_unparsed():
    feedback = (
        "Previous response had parsing errors:\nERROR: No valid JSON found in response\n"
        "WARNINGS: - No valid JSON object found\n\nPlease fix these issues and provide a proper JSON response."
    )
    hist = history(("user", "go"), ("assistant", "I will just do it."), ("user", feedback))
    text = [b.text for b in check(message_blocks(hist, 1), 1)]
    assert "⚠ unparsed reply" in text[0] and "I will just do it." in text
    assert text[-1] == "ERROR: No valid JSON found in response\nWARNINGS: - No valid JSON object found"


def test_reply_with_own_parse_error_and_no_harness_message():
    hist = history(("user", "go"), ("assistant", '{"analysis": "a", "plan": "p" "commands": []}'))
    text = texts(check(message_blocks(hist, 1), 1))
    assert "⚠ unparsed reply" in text and "↳ parser: Invalid JSON: Expecting ',' delimiter" in text


@pytest.mark.parametrize(
    "name, i, badge",
    [
        ("terminus-2_hello-world-invalid-json", 2, "⚠ parse error"),
        ("terminus-2_hello-world-invalid-json", 6, "? completion check"),
        ("terminus-2_hello-world-context-summarization", 1, "⇄ handoff"),
        ("terminus-2_hello-world-context-summarization", 3, "⇄ handoff"),
        ("terminus-2_hello-world-context-summarization.summarization-1-answers", 5, "⇄ handoff"),
        ("terminus-2_hello-world-context-summarization.summarization-1-answers", 7, "⇄ handoff"),
    ],
)
def test_harness_messages_get_badges(name, i, badge):
    header = message_blocks(golden(name), i)[0]
    assert badge in header.text
    styled = header.styled(DEFAULT_PALETTE)
    start = styled.plain.index(badge)
    assert any(s.start <= start < s.end and "on" in str(s.style) for s in styled.spans)


def test_restart_note_in_header():
    hist = history(("user", "prompt"), ("user", "You are picking up work from a previous AI agent"), restart_at=1)
    assert "context summarized — history restarts" in message_blocks(hist, 1)[0].text
    assert "restarts" not in message_blocks(hist, 0)[0].text


def test_think_folds_to_one_line_and_unfolds_whole():
    reasoning = "The task is straightforward. " + "More thoughts. " * 200
    hist = history(
        ("user", "go"), ("assistant", f"<think>{reasoning}</think>" + '{"analysis": "a", "plan": "p", "commands": []}')
    )
    folded = check(message_blocks(hist, 1), 1)
    [think] = [b for b in folded if b.action is Toggle.THINKING]
    assert "\n" not in think.text and len(think.text) < 140
    assert think.text.startswith("▸ thinking (3.0 KB): The task is straightforward.")
    opened = check(message_blocks(hist, 1, MessageState(think_open=True)), 1)
    assert [b.text for b in opened if b.action is Toggle.THINKING] == ["▾ thinking (3.0 KB)"]
    assert reasoning.strip() in texts(opened)


def test_actions_with_commands_keys_durations_and_completion():
    action = {
        "analysis": "Look around.",
        "plan": "List, then stop.",
        "commands": [
            {"keystrokes": "ls -la\n", "duration": 0.1},
            {"keystrokes": "C-c", "duration": 1},
            {"keystrokes": "vim x", "duration": 2.5},
        ],
        "task_complete": True,
    }
    blocks = check(message_blocks(history(("user", "go"), ("assistant", json.dumps(action))), 1), 1)
    text = [b.text for b in blocks]
    assert "Analysis: Look around." in text and "Plan: List, then stop." in text
    assert " 1. ⏱ 0.1s" in text and " 2. ⌨ C-c   ⏱ 1s" in text
    assert " 3. ⏱ 2.5s   (no Enter: typed, not run)" in text
    assert text[-1] == "✔ task_complete"
    code = [b for b in blocks if b.text in ("ls -la", "vim x")]
    assert len(code) == 2 and all(b.styler is not None and b.indent == 4 for b in code)


def test_heredoc_in_a_command_is_highlighted_in_its_language():
    keystrokes = "cat > solve.py << 'EOF'\ndef main():\n    return 1\nEOF\npython3 solve.py\n"
    action = {"analysis": "a", "plan": "p", "commands": [{"keystrokes": keystrokes, "duration": 0.1}]}
    blocks = check(message_blocks(history(("user", "go"), ("assistant", json.dumps(action))), 1), 1)
    [code] = [b for b in blocks if b.text == keystrokes[:-1]]
    styled = code.styled(DEFAULT_PALETTE)
    assert "#66d9ef" in colours_at(styled, styled.plain.index("def"))


def test_blocks_never_run_pygments(monkeypatch):
    calls = []
    monkeypatch.setattr(
        msgs,
        "highlight",
        lambda code, lang, palette, start=0, end=None: (
            calls.append(lang) or __import__("rich.text").text.Text(code[start:end])
        ),
    )
    keystrokes = "cat > a.py <<EOF\nx = 1\nEOF\n"
    content = json.dumps({"analysis": "a", "plan": "p", "commands": [{"keystrokes": keystrokes, "duration": 1}]})
    blocks = message_blocks(history(("user", "```python\nx = 1\n```"), ("assistant", content)), 1)
    blocks += message_blocks(history(("user", "```python\nx = 1\n```")), 0)
    assert calls == []
    for block in blocks:
        block.styled(DEFAULT_PALETTE)
    assert calls == ["bash", "python"]


def test_observation_terminal_block():
    content = (
        "New Terminal Output:\n\nroot@x:/app# pytest\n\x1b[31mFAILED\x1b[0m test_a\n"
        + "\n" * 38
        + "first half\n[... output limited to 10000 bytes; 12345 interior bytes omitted ...]\n"
        "second half\nroot@x:/app# "
    )
    blocks = check(message_blocks(history(("user", content)), 0), 0)
    [terminal] = [b for b in blocks if b.style == "terminal"]
    lines = terminal.text.split("\n")
    assert lines[:2] == ["root@x:/app# pytest", "FAILED test_a"]
    assert "… 38 blank lines" in lines
    assert "✂ 12,345 bytes omitted by the harness (output limited to 10,000 bytes)" in lines
    styled = terminal.styled(DEFAULT_PALETTE)
    assert "ansi 1" in colours_at(styled, styled.plain.index("FAILED"))
    assert "ansi 1" not in colours_at(styled, styled.plain.index("test_a"))
    assert any(style.reverse for style in styles_at(styled, styled.plain.index("✂")))
    assert any(style.italic for style in styles_at(styled, styled.plain.index("… 38 blank lines")))


def test_prompt_collapses_the_template():
    blocks = check(message_blocks(golden("terminus-2_hello-world-invalid-json"), 0), 0)
    text = [b.text for b in blocks]
    assert text[1] == "▸ terminus-2 prompt template (2.8 KB)" and blocks[1].action is Toggle.EXPAND
    assert 'Task: Create a file called hello.txt with "Hello, world!" as the content.' in text
    assert any(t.startswith("bash: cannot set terminal process group") for t in text)
    assert "Format your response as JSON" not in texts(blocks)
    expanded = message_blocks(golden("terminus-2_hello-world-invalid-json"), 0, MessageState(expanded=True))
    assert "Format your response as JSON" in texts(expanded)


def test_tool_calls_are_shown_with_code_arguments_highlighted():
    content = (
        'Writing it.\n<tool_call>\n{"name": "str_replace_editor", "arguments": {"command": "create", '
        '"path": "/app/solve.py", "file_text": "def f():\\n    return 1\\n"}}\n</tool_call>\n'
        '<tool_call>{"name": "execute_bash", "arguments": {"command": "echo \\"hi\\" > /app/x"}}</tool_call>'
    )
    blocks = check(message_blocks(history(("user", "go"), ("assistant", content)), 1), 1)
    text = [b.text for b in blocks]
    assert "⚙ str_replace_editor  command=create  path=/app/solve.py" in text
    [python] = [b for b in blocks if b.text.startswith("def f():")]
    assert "#66d9ef" in colours_at(python.styled(DEFAULT_PALETTE), 0)
    [bash] = [b for b in blocks if b.text == 'echo "hi" > /app/x']
    assert bash.styler is not None and colours_at(bash.styled(DEFAULT_PALETTE), 0)


def test_fenced_code_in_prose():
    big = "x = 1\n" * 1000
    content = f"Here:\n```python\ndef f(): pass\n```\nand\n```\nimport os\nprint(os.sep)\n```\nbig:\n```\n{big}```\n"
    blocks = check(message_blocks(history(("system", content)), 0), 0)
    code = [b for b in blocks if b.styler is not None and not b.style and b.indent]  # the code, not the header
    assert [b.text.split("\n")[0] for b in code[:2]] == ["def f(): pass", "import os"]
    assert code[0].styled(DEFAULT_PALETTE).spans and code[1].styled(DEFAULT_PALETTE).spans  # tagged, and a small guess
    assert not any(b.styled(DEFAULT_PALETTE).spans for b in code[2:])  # never guessed on big input


def test_other_roles_render_as_prose():
    for role in ("system", "tool", "weird\x1b]0;role\x07"):
        blocks = check(message_blocks(history((role, "some [bold]text[/bold]")), 0), 0)
        assert blocks[1].text == "some [bold]text[/bold]"
    assert message_blocks(history(("tool", "x")), 0)[0].text.startswith("tool")


def test_markup_and_links_are_literal():
    content = "[bold red]x[/] and [link=file:///etc/passwd]click[/link] \x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\"
    for role in ("user", "assistant", "system"):
        blocks = check(message_blocks(history((role, content)), 0), 0)
        assert "[bold red]x[/] and [link=file:///etc/passwd]click[/link] link" in texts(blocks)
    observation = check(message_blocks(history(("user", "New Terminal Output:\n" + content)), 0), 0)
    assert "[link=file:///etc/passwd]" in texts(observation)


def test_escape_sequences_never_reach_a_block():
    nasty = "a\x1b[2J\x1b]52;c;ZWNobw==\x07b\x1bPtmux;\x1b\x1b]0;t\x07\x1b\\c\u202eevil\u200bd\x9b31me\r\nf\x00"
    for role, content in [
        ("user", nasty),
        ("user", "New Terminal Output:\n" + nasty),
        ("assistant", nasty),
        ("assistant", json.dumps({"analysis": nasty, "plan": nasty, "commands": [{"keystrokes": nasty}]})),
    ]:
        blocks = check(message_blocks(history(("user", "x"), (role, content)), 1), 1)
        assert "\ufffd" in texts(blocks)


def test_long_content_is_cut_and_expands():
    lines = [f"line {k}" for k in range(5000)]
    hist = history(("user", "New Terminal Output:\n" + "\n".join(lines)))
    blocks = check(message_blocks(hist, 0), 0)
    [marker] = [b for b in blocks if b.action is Toggle.EXPAND]
    assert marker.text.startswith("… 4,840 lines") and marker.text.endswith("hidden — Enter to expand")
    shown = texts(blocks)
    assert "line 0\n" in shown and "line 4999" in shown and "line 2500" not in shown
    assert sum(b.text.count("\n") + 1 for b in blocks) <= MAX_LINES
    expanded = check(message_blocks(hist, 0, MessageState(expanded=True)), 0)
    assert "line 2500" in texts(expanded)
    assert [b.text for b in expanded if b.action is Toggle.EXPAND] == ["▴ shown whole — Enter to collapse"]


def test_one_megabyte_line_without_newline_is_cut():
    hist = history(("system", "y" * 1_000_000))
    blocks = check(message_blocks(hist, 0), 0)
    assert sum(len(b.text) for b in blocks) < 10_000
    assert any(b.action is Toggle.EXPAND and "characters" in b.text for b in blocks)


def _writing(body: str) -> str:
    return json.dumps({"analysis": "a", "plan": "p", "commands": [{"keystrokes": body, "duration": 1}]})


@pytest.mark.parametrize(
    "role, unit, message",
    [
        ("assistant", "print('hello world')  # comment\n", lambda text: _writing(f"cat > x.py << 'EOF'\n{text}EOF\n")),
        ("assistant", "thinking hard. ", lambda text: f"<think>{text}</think>{{}}"),
        (
            "user",
            "\x1b[32mPASSED\x1b[0m tests/test_x.py::test_thing output\n",
            lambda text: f"New Terminal Output:\n{text}",
        ),
        ("user", "y", lambda text: f"New Terminal Output:\n{text}"),
        ("system", "word ", lambda text: text),
    ],
)
def test_five_megabyte_messages_are_cut_in_time_linear_in_their_length(role, unit, message):
    content = message(unit * (5_000_000 // len(unit)))
    hist = history(("user", "go"), (role, content))
    blocks = check(message_blocks(hist, 1, MessageState(think_open=True)), 1)
    assert sum(len(b.text) for b in blocks) < 100_000
    for state in (MessageState(), MessageState(think_open=True)):

        def blocks_of(text: str, state: MessageState = state) -> None:
            message_blocks(history(("user", "go"), (role, message(text))), 1, state)

        assert (ratio := growth(blocks_of, unit, size=1_250_000)) < 8, ratio


ROLES = st.sampled_from(["user", "assistant", "system", "tool", "", "\x1b[31m"])
PIECES = st.sampled_from(
    [
        "<think>",
        "</think>",
        '{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "ls\\n"}]}',
        "```python\n",
        "```",
        "\n",
        "\n\n\n\n",
        "New Terminal Output:\n",
        "\x1b[31m",
        "\x1b]8;;x\x1b\\",
        "[... output limited to 10000 bytes; 5 interior bytes omitted ...]",
        "<tool_call>",
        "</tool_call>",
        '{"name": "execute_bash", "arguments": {"command": "ls"}}',
        "\t",
        "\r",
        "Previous response had parsing errors:\n",
        "cat > a.py <<EOF\n",
        "EOF\n",
        "[bold]",
        "\u202e",
    ]
)
CONTENT = st.lists(st.one_of(PIECES, st.characters()), max_size=25).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(ROLES, CONTENT), min_size=1, max_size=4), st.booleans(), st.booleans())
def test_message_blocks_never_raise_and_keep_the_contract(pairs, think_open, expanded):
    hist = history(*pairs, restart_at=len(pairs) - 1)
    for i in range(len(hist)):
        check(message_blocks(hist, i, MessageState(think_open, expanded)), i)


def test_a_long_file_shown_whole_is_highlighted_as_it_is_drawn_not_all_at_once():
    """Enter on a cut heredoc shows the whole file: its blocks are pieces of whole lines, each highlighted
    alone when drawn (a 200 KB file in one block held the UI thread ~1 s), the body still Python."""
    from pygments.token import Keyword

    from tracetui.render.highlight import PIECE_CHARS

    body = "".join(f"def f{i}(x):\n    return x * {i}\n" for i in range(6000))
    keystrokes = f"cat > big.py << 'EOF'\n{body}EOF\n"
    content = json.dumps({"analysis": "a", "plan": "p", "commands": [{"keystrokes": keystrokes, "duration": 1}]})
    hist = history(("user", "task"), ("assistant", content))
    cut = message_blocks(hist, 1)
    whole = message_blocks(hist, 1, MessageState(expanded=True))
    code = [b for b in whole if b.styler is not None and b.indent == 4]
    assert len(code) > 40 and len(whole) > len(cut)
    assert "\n".join(b.text for b in code) == keystrokes.removesuffix("\n")
    assert all(len(b.text) <= PIECE_CHARS for b in code)
    deep = code[len(code) // 2].styled(DEFAULT_PALETTE)
    assert any(span.style == DEFAULT_PALETTE.token(Keyword) for span in deep.spans)  # `def`, as Python


def test_long_terminal_output_shown_whole_comes_in_pieces_its_colours_running_on():
    """A 300 KB output shown whole was one block styled in one call (~0.1 s of the UI thread): now pieces
    of whole lines, each styled alone; a colour set in one and not reset still holds in the next, and a
    reset inside a collapsed run of blank lines still ends it."""
    from tracetui.render.highlight import PIECE_CHARS

    lines = [f"collected item {i} of the suite, with a few words to make it long" for i in range(4000)]
    lines[1000] = "\x1b[31mred from here"
    lines[1500] = "still red"
    lines[2000:2005] = ["\x1b[0m", "", "", "", ""]
    lines[2500] = "plain again"
    content = "New Terminal Output:\n\n" + "\n".join(lines) + "\n"
    hist = history(("user", content))
    blocks = [b for b in check(message_blocks(hist, 0, MessageState(expanded=True)), 0) if b.style == "terminal"]
    assert len(blocks) > 40 and all(len(b.text) <= PIECE_CHARS for b in blocks)
    assert "\n".join(b.text for b in blocks).split("\n")[1999:2002] == [lines[1999], "… 5 blank lines", lines[2005]]

    def colours(line: str) -> set[str]:
        [block] = [b for b in blocks if line in b.text.split("\n")]
        styled = block.styled(DEFAULT_PALETTE)
        return colours_at(styled, styled.plain.index(line))

    assert "ansi 1" in colours("red from here") & colours("still red")
    assert "ansi 1" not in colours("plain again") | colours(lines[999])


def test_long_prose_shown_whole_comes_in_pieces():
    """The view styles a block and cuts it into its lines at once when it first shows: 500 KB of prose as
    one block took ~40 ms of a frame; pieces of whole lines, in order, take a few each."""
    from tracetui.render.highlight import PIECE_CHARS

    prose = "".join(f"{'word ' * 12}{i}\n" for i in range(8000))
    hist = history(("user", "task"), ("assistant", prose))
    blocks = check(message_blocks(hist, 1, MessageState(expanded=True)), 1)[1:-1]
    assert len(blocks) > 50 and all(len(b.text) <= PIECE_CHARS for b in blocks)
    assert "\n".join(b.text for b in blocks) == prose.strip("\n")

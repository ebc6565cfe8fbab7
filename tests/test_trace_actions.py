"""parse_assistant: terminus-2 JSON (as the harness parses it), XML, tool calls, reasoning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracetui.trace.actions import Command, parse_assistant, split_think

from .linear import growth

GOLDEN = Path(__file__).parent / "fixtures" / "harbor-golden"


def golden(name: str) -> list[dict]:
    """The conversation of the last (longest) row of a golden file."""
    return json.loads((GOLDEN / f"{name}.traces.json").read_text())[-1]["conversations"]


def test_invalid_json_reply_gets_the_harness_error_and_warnings():
    conversation = golden("terminus-2_hello-world-invalid-json")
    reply = parse_assistant(conversation[1]["content"])
    assert reply.format == "json"
    assert reply.error == "Missing required fields: analysis, plan"
    assert reply.warnings == ("Extra text detected before JSON object", "Extra text detected after JSON object")
    harness = conversation[2]["content"]
    assert f"ERROR: {reply.error}" in harness
    assert all(warning in harness for warning in reply.warnings)
    assert reply.think == (
        "The task is straightforward - I need to create a single file with specific "
        "content. Using printf is more reliable than echo for exact content control.",
    )


@pytest.mark.parametrize(
    "name", ["terminus-2_hello-world-invalid-json", "terminus-2_hello-world-context-summarization"]
)
def test_golden_terminus_replies_parse(name):
    replies = [m["content"] for m in golden(name) if m["role"] == "assistant"]
    parsed = [parse_assistant(r) for r in replies if r.lstrip().startswith(("{", "<think>"))]
    good = [p for p in parsed if p.error is None]
    assert len(good) == len(parsed) - (name.endswith("invalid-json")) >= 3
    for reply in good:
        assert reply.analysis and reply.plan is not None
        assert all(c.duration == 0.1 for c in reply.commands)
    assert good[-1].task_complete and not good[-1].commands
    assert any(c.keystrokes == "printf 'Hello, world!\\n' > hello.txt\n" for p in good for c in p.commands)


def test_summarization_answers_are_prose_not_errors():
    for message in golden("terminus-2_hello-world-context-summarization.summarization-1-answers"):
        if message["role"] == "assistant" and not message["content"].startswith("{"):
            reply = parse_assistant(message["content"])
            assert reply.format == "prose" and reply.error is None and reply.prose


def test_openhands_tool_calls():
    replies = [parse_assistant(m["content"]) for m in golden("openhands_hello-world") if m["role"] == "assistant"]
    edit, finish = replies
    assert edit.format == "tool_call" and edit.error is None
    [call] = edit.tool_calls
    assert call.name == "str_replace_editor"
    assert call.arguments == {
        "command": "create",
        "path": "/app/hello.txt",
        "file_text": "Hello, world!",
        "security_risk": "LOW",
    }
    assert edit.prose == "I edited the file /app/hello.txt."
    assert finish.tool_calls[0].name == "finish"
    assert finish.tool_calls[0].arguments["message"].startswith("Task complete.")


ACTION = '{"analysis": "look", "plan": "do", "commands": [{"keystrokes": "ls -la\\n", "duration": 0.1}], "task_complete": false}'


def test_fenced_json():
    reply = parse_assistant(f"```json\n{ACTION}\n```")
    assert reply.error is None and reply.analysis == "look" and reply.plan == "do"
    assert reply.commands == (Command("ls -la\n", 0.1),)
    assert reply.prose == ""  # the fence is not prose
    assert "Extra text detected before JSON object" in reply.warnings


def test_json_wrapped_in_prose_keeps_the_prose():
    reply = parse_assistant(f"Sure, here is my answer:\n{ACTION}\nHope that helps.")
    assert reply.error is None and reply.commands[0].keystrokes == "ls -la\n"
    assert reply.prose == "Sure, here is my answer:\n\nHope that helps."


def test_json_errors_in_the_harness_words():
    assert parse_assistant('{"analysis": "a", "plan": "p" "commands": []}').error.startswith(
        "Invalid JSON: Expecting ',' delimiter: line 1 column 31 (char 30) | Content: "
    )
    assert (
        parse_assistant('{"analysis": "a", "plan": "p", "commands": "ls"}').error == "Field 'commands' must be an array"
    )
    assert parse_assistant('{"analysis": "a", "plan": "p", "commands": [{"duration": 1}]}').error == (
        "Command 1 missing required 'keystrokes' field"
    )
    assert parse_assistant('{"analysis": "a", "plan": "p", "commands": ["ls"]}').error == "Command 1 must be an object"


def test_harness_auto_fix_of_a_missing_brace():
    reply = parse_assistant('{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "ls\\n", "duration": 1}]')
    assert reply.error is None
    assert reply.warnings[0].startswith("AUTO-CORRECTED: Fixed incomplete JSON by adding missing closing brace")
    assert reply.commands == (Command("ls\n", 1.0),)


def test_harness_warnings_and_task_complete_rules():
    reply = parse_assistant(
        '{"plan": "p", "analysis": "a", "commands": [{"keystrokes": "ls"}, {"keystrokes": "pwd\\n", "x": 1}], "task_complete": "true"}'
    )
    assert reply.error is None and reply.task_complete
    assert (
        "Fields appear in wrong order. Found: plan → analysis → commands, expected: analysis → plan → commands"
        in reply.warnings
    )
    assert "Command 1: Missing duration field, using default 1.0" in reply.warnings
    assert "Command 2: Unknown fields: x" in reply.warnings
    assert any(w.startswith("Command 1 should end with newline") for w in reply.warnings)
    assert reply.commands[0].duration is None
    finished = parse_assistant('{"analysis": "a", "plan": "p", "commands": [1], "task_complete": true}')
    assert finished.error is None and finished.task_complete and "Command 1 must be an object" in finished.warnings


def test_stray_closing_brace_is_auto_corrected_like_the_harness_does():
    # The harness's scanner counts braces from the start, so a stray `}` makes it find the inner
    # command object; its mixed-content fix then recovers the whole action, with a warning.
    reply = parse_assistant("oops } " + ACTION)
    assert reply.error is None and reply.commands == (Command("ls -la\n", 0.1),)
    assert reply.warnings == (
        "AUTO-CORRECTED: Extracted JSON from mixed content - please fix this in future responses",
    )
    assert reply.prose == "oops }"


def test_xml_action():
    reply = parse_assistant(
        "<response>\n<analysis>A</analysis>\n<plan>P</plan>\n<commands>\n"
        '<keystrokes duration="0.1">ls -la\n</keystrokes>\n<keystrokes>C-c</keystrokes>\n'
        "</commands>\n<task_complete>true</task_complete>\n</response>"
    )
    assert reply.format == "xml" and reply.error is None
    assert (reply.analysis, reply.plan, reply.task_complete) == ("A", "P", True)
    assert reply.commands == (Command("ls -la\n", 0.1), Command("C-c", None))
    assert reply.commands[1].key == "C-c"
    assert "Command 2: Missing duration attribute, using default 1.0" in reply.warnings
    assert parse_assistant("<response><analysis>A</analysis></response>").error == "Missing <commands> section"


def test_json_action_writing_xml_is_still_json():
    action = {"analysis": "a", "plan": "p", "commands": [{"keystrokes": "echo '<response>' > x\n", "duration": 1}]}
    assert parse_assistant(json.dumps(action)).format == "json"


def test_think_blocks():
    assert split_think("<think>a</think>rest") == (["a"], "rest")
    assert split_think("<think>unclosed reasoning") == (["unclosed reasoning"], "")
    assert split_think("lone reasoning</think>{}") == (["lone reasoning"], "{}")
    assert split_think("x<think>1</think>y<think>2</think>z") == (["1", "2"], "xyz")
    reply = parse_assistant("<think>hmm " + ACTION + "</think>" + ACTION)
    assert reply.think[0].startswith("hmm") and reply.error is None and reply.commands


def test_labelled_prose_with_tool_calls():
    reply = parse_assistant(
        "Analysis: The file is missing.\nPlan: Create it.\n<tool_call>\n"
        '{"name": "bash_command", "arguments": {"keystrokes": "touch a\\n", "duration": 0.5}}\n</tool_call>'
    )
    assert (reply.format, reply.analysis, reply.plan) == ("tool_call", "The file is missing.", "Create it.")
    assert reply.tool_calls[0].arguments == {"keystrokes": "touch a\n", "duration": 0.5}


def test_tool_call_variants():
    reply = parse_assistant(
        '<tool_call>{"name": "execute_bash", "arguments": "{\\"command\\": \\"ls\\"}"}</tool_call><tool_call>{broken'
    )
    good, bad = reply.tool_calls
    assert good.arguments == {"command": "ls"}
    assert bad.error and bad.raw == "{broken" and reply.error == bad.error


@pytest.mark.parametrize(
    "keys, key",
    [
        ("C-c", "C-c"),
        ("C-d\n", "C-d"),
        ("Escape", "Escape"),
        ("Enter", "Enter"),
        ("M-x", "M-x"),
        ("ls\n", None),
        ("q", None),
        ("C-c C-c", None),
        ("", None),
    ],
)
def test_special_keys(keys, key):
    assert Command(keys, 0.1).key == key


def test_plain_prose_is_not_an_error():
    reply = parse_assistant("I have the following questions:\n1. What is {x}?")
    assert reply.format == "prose" and reply.error is None


def _reply_writing(body: str) -> str:
    """A reply whose one command writes `body` to a file, after some thinking."""
    heredoc = "cat > x.py << 'EOF'\n" + body + "EOF\n"
    command = {"keystrokes": heredoc, "duration": 1}
    return "<think>" + "why " * 10_000 + "</think>" + json.dumps({"analysis": "a", "plan": "p", "commands": [command]})


def test_a_five_megabyte_reply_parses_whole_in_time_linear_in_its_length():
    body = "print('hello world')\n" * 250_000
    content = _reply_writing(body)
    assert len(content) > 5_000_000
    reply = parse_assistant(content)
    assert reply.error is None and reply.commands[0].keystrokes == "cat > x.py << 'EOF'\n" + body + "EOF\n"
    assert growth(lambda text: parse_assistant(_reply_writing(text)), "print('hello world')\n", size=1_250_000) < 8


# (prefix, repeated unit): replies that make the brace scanner and the auto-fixes work hardest
PATHOLOGICAL = {
    "unterminated string": ('{"analysis": "', 'a\\"'),
    "open braces": ("", "{"),
    "unclosed nested objects": ("{", " {x}"),
    "quotes and backslashes": ("", '"\\'),
    "unclosed object": ('{"analysis": {', '"k": 1, '),
    "objects in prose": ("x ", '{"a": {"b": 1}} {'),
}


@pytest.mark.parametrize("name", PATHOLOGICAL)
def test_json_scanner_is_linear_on_pathological_input(name):
    """Four times the reply costs about four times the CPU, never sixteen (no backtracking blow-up)."""
    prefix, unit = PATHOLOGICAL[name]
    assert growth(parse_assistant, unit, prefix, size=100_000) < 8


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "{",
                    "}",
                    '"',
                    "\\",
                    "[",
                    "]",
                    ":",
                    ",",
                    "\n",
                    "analysis",
                    "plan",
                    "commands",
                    "keystrokes",
                    "<think>",
                    "</think>",
                    "<tool_call>",
                    "</tool_call>",
                    "<response>",
                    "<commands>",
                    "<keystrokes>",
                    "true",
                    '"analysis": ',
                    "Analysis: ",
                    "Plan: ",
                ]
            ),
            st.characters(),
        ),
        max_size=60,
    ).map("".join)
)
def test_parse_assistant_never_raises(content):
    reply = parse_assistant(content)
    assert reply.format in ("json", "xml", "tool_call", "prose")

"""classify_user: prompts, terminal observations and the harness's messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracetui.trace.harness import KINDS, classify_user

GOLDEN = Path(__file__).parent / "fixtures" / "harbor-golden"


def user_kinds(name: str) -> list[str]:
    conversation = json.loads((GOLDEN / f"{name}.traces.json").read_text())[-1]["conversations"]
    return [classify_user(m["content"], first=i == 0).kind for i, m in enumerate(conversation) if m["role"] == "user"]


@pytest.mark.parametrize(
    "name, kinds",
    [
        ("terminus-2_hello-world-invalid-json", ["prompt", "parse_error", "observation", "completion_check"]),
        (
            "terminus-2_hello-world-context-summarization",
            ["prompt", "handoff", "handoff", "observation", "observation", "completion_check"],
        ),
        (
            "terminus-2_hello-world-context-summarization.summarization-1-summary",
            ["prompt", "observation", "observation", "handoff"],
        ),
        ("terminus-2_hello-world-context-summarization.summarization-1-questions", ["handoff"]),
        (
            "terminus-2_hello-world-context-summarization.summarization-1-answers",
            ["prompt", "observation", "observation", "handoff", "handoff"],
        ),
        ("openhands_hello-world", ["prompt", "plain", "plain", "plain", "plain"]),
    ],
)
def test_golden_user_messages(name, kinds):
    assert user_kinds(name) == kinds


def test_terminus_prompt_parts():
    content = json.loads((GOLDEN / "terminus-2_hello-world-invalid-json.traces.json").read_text())[0]["conversations"][
        0
    ]["content"]
    message = classify_user(content, first=True)
    template, task, screen = message.parts
    assert template.kind == "template" and template.label == "terminus-2 prompt template"
    assert template.text.startswith("You are an AI assistant") and "Task Description" not in template.text
    assert (task.kind, task.label) == ("prose", "Task")
    assert task.text == 'Create a file called hello.txt with "Hello, world!" as the content.'
    assert screen.kind == "terminal" and screen.text.startswith("bash: cannot set terminal process group")
    assert classify_user(content, first=False).kind != "prompt"


def test_completion_check_follows_terminal_output():
    message = classify_user(
        "Current terminal state:\nNew Terminal Output:\n\nroot@x:/app# ls\nhello.txt\n\n"
        "Are you sure you want to mark the task as complete? This will trigger...",
        first=False,
    )
    assert message.kind == "completion_check"
    screen, question = message.parts
    assert (screen.kind, screen.text) == ("terminal", "root@x:/app# ls\nhello.txt\n\n")
    assert question.kind == "harness" and question.text.startswith("Are you sure")


def test_harness_messages():
    assert (
        classify_user(
            "Previous response had parsing errors:\nERROR: No valid JSON found in response\n\n"
            "Please fix these issues and provide a proper JSON response.",
            False,
        ).kind
        == "parse_error"
    )
    warning = classify_user(
        "Previous response had warnings:\nWARNINGS: - Extra text detected after JSON object\n\n"
        "New Terminal Output:\n\nroot@x:/app# ls\n",
        False,
    )
    assert warning.kind == "warning"
    assert [p.kind for p in warning.parts] == ["harness", "terminal"]
    assert warning.parts[1].text == "root@x:/app# ls\n"
    limit = classify_user(
        "ERROR!! NONE of the actions you just requested were performed because you exceeded "
        "16384 tokens. Your outputs must be less than 16384 tokens.",
        False,
    )
    assert limit.kind == "output_limit"


def test_timeout_message():
    message = classify_user(
        "Previous command:\ncat > a.py << 'EOF'\nprint(1)\nEOF\n\n\nThe previous command timed out after 2.0 seconds\n\n"
        "It is possible that the command is not yet finished executing.\n\n"
        "Here is the current state of the terminal:\n\nroot@x:/app# sleep 10\n",
        False,
    )
    assert message.kind == "timeout"
    command, notice, screen = message.parts
    assert (command.kind, command.lang, command.text) == ("code", "bash", "cat > a.py << 'EOF'\nprint(1)\nEOF")
    assert notice.text.startswith("The previous command timed out after 2.0 seconds")
    assert (screen.kind, screen.text) == ("terminal", "root@x:/app# sleep 10\n")


@pytest.mark.parametrize(
    "opening",
    [
        "You are picking up work from a previous AI agent on this task:",
        "Here are the answers the other agent provided.",
        "You are about to hand off your work to another AI agent.",
        "The next agent has a few questions for you, please answer each of them one by one in detail:",
    ],
)
def test_summarization_prompts_are_handoffs(opening):
    assert classify_user(f"{opening}\n\nmore text", first=False).kind == "handoff"
    assert classify_user(f"{opening}\n\nmore text", first=True).kind == "handoff"


def test_observations():
    for header in ("New Terminal Output:\n", "Current Terminal Screen:\n", "Current terminal state:\n"):
        message = classify_user(f"{header}root@x:/app# ls\n", first=False)
        assert message.kind == "observation" and message.parts[0].text == "root@x:/app# ls\n"
    assert classify_user("File created successfully at: /app/hello.txt", first=False).kind == "plain"
    # a program's own time-out message is terminal output, not the harness's notice
    assert classify_user("New Terminal Output:\ncurl: command timed out after 5 s\n", first=False).kind == "observation"


def test_big_observation_is_classified_by_its_head():
    content = "New Terminal Output:\n" + "x" * 5_000_000
    message = classify_user(content, first=False)
    assert message.kind == "observation" and len(message.parts[0].text) == 5_000_000


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "Task Description:\n",
                    "Current terminal state:\n",
                    "New Terminal Output:\n",
                    "Are you sure you want to mark the task as complete?",
                    "Previous command:\n",
                    "The previous command timed out after 3 seconds",
                    "Here is the current state of the terminal:\n",
                    "Previous response had warnings:",
                    "**Current Terminal Screen:**\n",
                    "You are picking up work from a previous AI agent",
                    "\n",
                ]
            ),
            st.characters(),
        ),
        max_size=30,
    ).map("".join),
    st.booleans(),
)
def test_classify_user_never_raises(content, first):
    message = classify_user(content, first)
    assert message.kind in KINDS and message.parts

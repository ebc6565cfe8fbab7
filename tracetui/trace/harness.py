"""Classify user-role messages: the prompt, terminal observations, and the harness's own notes.

In agent traces most "user" messages are written by the harness, not a person: the prompt
template, terminal output, and feedback such as parse errors or the completion check. Telling
them apart lets the viewer collapse the boilerplate and flag the events worth a reader's eye.

Only prefixes and fixed phrases are searched (str.find/startswith), so a 5 MB observation costs
next to nothing; the parts returned are slices of the raw, unsanitized content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = (
    "prompt",
    "observation",
    "parse_error",
    "warning",
    "completion_check",
    "timeout",
    "output_limit",
    "handoff",
    "plain",
)
HARNESS_KINDS = frozenset(KINDS) - {"prompt", "observation", "plain"}


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a user message, by how it should be shown."""

    kind: str
    """`template` (boilerplate, folded), `prose`, `terminal`, `harness` (the harness's words)
    or `code` (with `lang`)."""
    text: str
    label: str = ""
    lang: str | None = None


@dataclass(frozen=True, slots=True)
class UserMessage:
    kind: str
    """One of KINDS."""
    parts: tuple[Part, ...]


_TERMINUS_TEMPLATE = "You are an AI assistant tasked with solving command-line tasks"
_OPENHANDS_TEMPLATE = "You are OpenHands agent"
_TASK = "Task Description:\n"
_STATE = "Current terminal state:\n"
_SCREEN_HEADERS = ("New Terminal Output:\n", "Current Terminal Screen:\n", _STATE, "Current state:\n")
_PARSE_ERROR = "Previous response had parsing errors:"
_WARNING = "Previous response had warnings:"
_COMPLETION = "Are you sure you want to mark the task as complete?"
_OUTPUT_LIMIT = "NONE of the actions you just requested were performed because"
_TIMEOUT = re.compile(  # at a line start, so a program's own "timed out" output is not taken for it
    r"^(?:The previous command timed out after [\d.]+ ?s|Command timed out after [\d.]+ ?s|\[TIMEOUT\])", re.MULTILINE
)
_TIMEOUT_SCREEN = "Here is the current state of the terminal:\n"
HANDOFF_PROMPT = "You are picking up work from a previous AI agent"
"""How the main conversation restarts after a context summarization (its second message)."""
_HANDOFFS = (
    HANDOFF_PROMPT,
    "Here are the answers the other agent provided",
    "You are about to hand off your work",
    "The next agent has a few questions for you",
)
_HANDOFF_SCREEN = "**Current Terminal Screen:**\n"
_HEAD = 2000
"""How far from its start (or, for the completion check, its end) a message's kind is looked for."""


def classify_user(content: str, first: bool) -> UserMessage:
    """What a user message is, and its parts; `first` is True for a history's first message."""
    head = content[:_HEAD]
    if _OUTPUT_LIMIT in head:
        return UserMessage("output_limit", (Part("harness", content),))
    if content.startswith(_PARSE_ERROR):
        return UserMessage("parse_error", (Part("harness", content),))
    if content.startswith(_WARNING):
        return UserMessage("warning", _harness_then_screen(content))
    if content.startswith(_HANDOFFS):
        return UserMessage("handoff", _handoff(content))
    completion = content.rfind(_COMPLETION, max(0, len(content) - _HEAD))
    if completion >= 0:
        parts = _screen(content[:completion]) if content[:completion].strip() else ()
        return UserMessage("completion_check", (*parts, Part("harness", content[completion:])))
    timeout = _TIMEOUT.search(head)
    if timeout is None and content.startswith("Previous command:\n"):
        timeout = _TIMEOUT.search(content)  # the command before the notice may be long
    if timeout is not None:
        return UserMessage("timeout", _timeout(content, timeout.start()))
    if first and (content.startswith((_TERMINUS_TEMPLATE, _OPENHANDS_TEMPLATE)) or _TASK in content):
        return UserMessage("prompt", _prompt(content))
    if content.startswith(_SCREEN_HEADERS):
        return UserMessage("observation", _screen(content))
    return UserMessage("plain", (Part("prose", content),))


def _screen(text: str) -> tuple[Part, ...]:
    """Terminal output without the headers in front of it (there may be two:
    `Current terminal state:` then `New Terminal Output:`); the last header is its label."""
    label = ""
    text = text.lstrip("\n")
    while text.startswith(_SCREEN_HEADERS):
        newline = text.find("\n")
        label, text = text[:newline].rstrip(":"), text[newline + 1 :]
    return (Part("terminal", text.lstrip("\n"), label),)


def _harness_then_screen(content: str) -> tuple[Part, ...]:
    """Harness feedback followed by the terminal output it came with."""
    cut = min((i for i in (content.find("\n" + h) for h in _SCREEN_HEADERS) if i >= 0), default=-1)
    if cut < 0:
        return (Part("harness", content),)
    return (Part("harness", content[:cut].rstrip()), *_screen(content[cut + 1 :]))


def _timeout(content: str, notice: int) -> tuple[Part, ...]:
    """`Previous command:` (shell), the time-out notice, and the screen after it."""
    parts = []
    if content.startswith("Previous command:\n") and notice > 0:
        parts.append(Part("code", content[len("Previous command:\n") : notice].strip("\n"), "Previous command", "bash"))
        content = content[notice:]
    screen = content.find(_TIMEOUT_SCREEN)
    if screen < 0:
        return (*parts, Part("harness", content))
    return (
        *parts,
        Part("harness", content[:screen].rstrip()),
        Part("terminal", content[screen + len(_TIMEOUT_SCREEN) :].lstrip("\n"), "terminal"),
    )


def _handoff(content: str) -> tuple[Part, ...]:
    """The hand-off prose, with the terminal screen it quotes (if any) shown as a terminal."""
    start = content.find(_HANDOFF_SCREEN)
    if start < 0:
        return (Part("prose", content),)
    body = start + len(_HANDOFF_SCREEN)
    end = content.find("\n\n\nPlease begin", body)  # the screen's padding runs into the ask
    end = len(content) if end < 0 else end
    parts = [Part("prose", content[:start].rstrip()), Part("terminal", content[body:end], "Current Terminal Screen")]
    if content[end:].strip():
        parts.append(Part("prose", content[end:].strip("\n")))
    return tuple(parts)


def _prompt(content: str) -> tuple[Part, ...]:
    """The fixed template (folded), the task instruction, and the initial screen."""
    label = (
        "terminus-2 prompt template"
        if content.startswith(_TERMINUS_TEMPLATE)
        else "openhands system prompt"
        if content.startswith(_OPENHANDS_TEMPLATE)
        else "prompt template"
    )
    task = content.find(_TASK)
    if task < 0:
        return (Part("template", content, label),)
    parts = [Part("template", content[:task], label)]
    instruction = content[task + len(_TASK) :]
    state = instruction.find("\n" + _STATE)
    if state < 0:
        state = instruction.find("\nCurrent Terminal Screen:\n")
    if state < 0:
        return (*parts, Part("prose", instruction.strip("\n"), "Task"))
    return (*parts, Part("prose", instruction[:state].strip("\n"), "Task"), *_screen(instruction[state + 1 :]))

"""Building small trial histories for the findings tests: terminus-2 JSON and XML replies, tool calls."""

from __future__ import annotations

import json

from tracetui.trace.model import Message, TrialHistory

PROMPT = (
    "You are an AI assistant tasked with solving command-line tasks in a Linux environment.\n\n"
    "Task Description:\nFix the parser in /app so that the tests pass.\n\n"
    "Current terminal state:\nCurrent Terminal Screen:\nroot@box:/app#\n"
)


def reply(
    *keystrokes: str,
    analysis: str = "Looking at the code.",
    plan: str = "Run the next commands.",
    complete: bool = False,
    think: str = "",
) -> str:
    """A terminus-2 JSON reply sending each string as one command."""
    body = json.dumps(
        {
            "analysis": analysis,
            "plan": plan,
            "commands": [{"keystrokes": k if k.endswith("\n") else k + "\n", "duration": 0.1} for k in keystrokes],
            "task_complete": complete,
        },
        indent=2,
    )
    return f"<think>{think}</think>\n{body}" if think else body


def xml_reply(*keystrokes: str, complete: bool = False) -> str:
    commands = "".join(f'<keystrokes duration="0.1">{k}\n</keystrokes>' for k in keystrokes)
    done = "<task_complete>true</task_complete>" if complete else ""
    return (
        f"<response><analysis>Checking.</analysis><plan>Run it.</plan><commands>{commands}</commands>{done}</response>"
    )


def tool_call(name: str, thought: str = "Next step.", **arguments) -> str:
    return f"{thought}\n<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def output(text: str = "", command: str = "") -> str:
    """A terminal observation: the echoed command line, then its output."""
    echo = f"root@box:/app# {command}\n" if command else ""
    return f"New Terminal Output:\n\n{echo}{text}\nroot@box:/app# \n\n"


def history(*turns: str, prompt: str = PROMPT) -> TrialHistory:
    """[prompt, turns...]: turns alternate assistant reply, user observation (the last may be either)."""
    contents = [prompt, *turns]
    roles = ["user"] + ["assistant" if i % 2 == 0 else "user" for i in range(len(turns))]
    return TrialHistory(
        tuple(Message(role, content, 0, i) for i, (role, content) in enumerate(zip(roles, contents))), ()
    )


def kinds(findings) -> list[str]:
    return [f.kind for f in findings]


def session_of(*commands: str, before: tuple[str, ...] = (), final: str | None = None) -> TrialHistory:
    """A trial that runs each command in its own reply (after the `before` turns), then sends `final`."""
    turns = list(before)
    for command in commands:
        turns += [reply(command), output("ok")]
    return history(*turns, *([final] if final else []))


def trial_rows_of(
    h: TrialHistory,
    task: str,
    trial: str,
    result: str | None,
    model: str = "openai/gpt-5-mini-2025-08-07",
    verifier: str | None = None,
) -> list[dict]:
    """Dataset rows (nested-prefix episodes, as Harbor exports them) of one trial's history."""
    messages = [{"role": m.role, "content": m.content} for m in h.messages]
    ends = [i + 1 for i, m in enumerate(messages) if m["role"] == "assistant"]
    return [
        {
            "conversations": messages[:end],
            "agent": "terminus-2",
            "model": model,
            "model_provider": model.split("/")[0],
            "date": "2026-07-15T10:00:00Z",
            "task": task,
            "episode": f"episode-{k}",
            "run_id": "run-1",
            "trial_name": trial,
            "result": result,
            "verifier_output": verifier,
            "trace_source": "main",
        }
        for k, end in enumerate(ends)
    ]

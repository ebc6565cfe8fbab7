"""What the agent did in each reply, read from its structured action (never from its prose).

terminus-2 JSON and XML replies send keystrokes to a shell (heredocs included); tool-call replies run
shell commands (`bash_command`, `execute_bash`...), edit files (`str_replace_editor` and friends) or
run Python. `parse_assistant` decides what a reply asked for, as the harness would: a reply whose
action did not parse ran nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..trace.actions import AssistantReply, ToolCall
from .effects import Cwd, Effect, editor_effect, effects
from .shell import Simple, read_script

_SHELL_TOOLS = ("bash", "shell", "terminal", "command", "exec", "run", "cmd")
_SHELL_ARGUMENTS = ("command", "cmd", "keystrokes", "script")
_PATH_ARGUMENTS = ("path", "file_path", "filename", "file", "target_file")
_CONTENT_ARGUMENTS = ("file_text", "content", "new_str", "text", "contents", "code_edit")
_EDITOR_VERBS = {
    "write": "create",
    "create": "create",
    "edit": "edit",
    "replace": "str_replace",
    "insert": "insert",
    "append": "append",
    "delete": "delete",
    "patch": "edit",
}


@dataclass(slots=True)
class Step:
    """One assistant reply's actions."""

    message: int
    scripts: list[str] = field(default_factory=list)
    """Shell text it sent, one entry per command or tool call."""
    commands: list[Simple] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    keys: tuple[str, ...] = ()
    """What it ran, whitespace-normalized, for telling a repeated step (tmux keys included)."""
    cwd: str | None = None
    """The shell's directory after it, as far as known."""


def read_step(message: int, reply: AssistantReply, cwd: Cwd) -> Step:
    """The actions of one parsed reply; `cwd` carries the shell's directory from step to step."""
    step = Step(message)
    keys: list[str] = []
    for command in reply.commands:
        keys.append(" ".join(command.keystrokes.split()))
        if command.key is None:
            step.scripts.append(command.keystrokes)
    for call in reply.tool_calls:
        keys.append(call.name + " " + " ".join(json.dumps(call.arguments, sort_keys=True, default=str).split()))
        _read_tool_call(call, step)
    for script in step.scripts:
        commands = read_script(script)
        step.commands.extend(commands)
        step.effects.extend(effects(commands, cwd))
    step.keys = tuple(k for k in keys if k)
    step.cwd = cwd.path
    return step


def _read_tool_call(call: ToolCall, step: Step) -> None:
    if call.error:
        return
    name = call.name.lower()
    arguments = call.arguments
    path = next((arguments[k] for k in _PATH_ARGUMENTS if isinstance(arguments.get(k), str)), None)
    if path is not None:
        command = arguments.get("command")
        verb = (
            command
            if isinstance(command, str)
            else next((v for word, v in _EDITOR_VERBS.items() if word in name), None)
        )
        content = next((arguments[k] for k in _CONTENT_ARGUMENTS if isinstance(arguments.get(k), str)), None)
        if verb is not None:
            call_text = f"{call.name} {verb} {path}"
            effect = editor_effect(verb, path, content, Simple((call.name, verb, path), text=call_text))
            if effect is not None:
                step.effects.append(effect)
            elif verb == "view":
                step.commands.append(Simple(("cat", path), text=call_text))
            return
    script = next((arguments[k] for k in _SHELL_ARGUMENTS if isinstance(arguments.get(k), str)), None)
    if script is not None and any(word in name for word in _SHELL_TOOLS):
        step.scripts.append(script)
    elif isinstance(arguments.get("code"), str) and ("python" in name or "ipython" in name):
        code = arguments["code"]
        shell = "\n".join(line.lstrip()[1:] for line in code.splitlines() if line.lstrip().startswith("!"))
        if shell:
            step.scripts.append(shell)
        step.scripts.append(f"python3 - <<'__TRACETUI_EOF__'\n{code}\n__TRACETUI_EOF__\n")

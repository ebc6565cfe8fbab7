"""Playing a trial: the conversation an agent builds, episode by episode, from the trial's seed alone.

terminus-2 trials alternate JSON replies and terminal observations, with timeouts, parse errors, warnings,
token-limit cuts and summarizations (three sub-agent conversations and a fresh context); openhands trials
are `<tool_call>` replies and tool results. A trial's rows are slices of one history sharing message objects.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from typing import Iterator

from .catalog import HOSTILE_MARKUP, HOSTILE_TERMINAL
from .planning import Trial
from .prompts import (
    ANSWERS_REQUEST,
    COMPLETION_CHECK,
    HANDOFF,
    OPENHANDS_PROMPT,
    PARSE_ERRORS,
    QUESTIONS_REQUEST,
    SHELL_BANNER,
    SUMMARY_REQUEST,
    TERMINUS_PROMPT,
    TIMEOUT,
    TOKEN_LIMIT,
    WARNINGS,
)
from .prose import ANALYSIS, ERRORS_SEEN, PLAN, QUESTIONS, THINK_FACTS, Fill, say, think
from .source_files import CODE_LINES, source_file
from .terminal import (
    build_log,
    cat_n,
    data_lines,
    file_list,
    install_log,
    limit_output,
    local_tests,
    ls,
    run_error,
    run_ok,
    wc,
)

Message = dict  # {"role": str, "content": str}, shared between the rows of a trial


def builder(trial: Trial) -> _Terminus | _OpenHands:
    """The simulator of the trial's agent: `main_rows()` yields its episode rows, `sub_rows()` its sub-agent rows."""
    return _OpenHands(trial) if trial.run.model.agent == "openhands" else _Terminus(trial)


def _msg(role: str, content: str) -> Message:
    return {"role": role, "content": content}


# --------------------------------------------------------------------------------------------------
# terminus-2
# --------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Command:
    keys: str
    duration: float
    output: str  # what the terminal prints after echoing the command line


class _Terminus:
    """One terminus-2 trial: its history, its episode rows and its summarization sub-agent rows."""

    def __init__(self, trial: Trial):
        self.trial = trial
        self.task = trial.task
        self.rng = random.Random(trial.seed)
        rng = self.rng
        self.prompt = f"root@{rng.getrandbits(48):012x}:/app#"
        self.screen: list[str] = SHELL_BANNER.split("\n") + [self.prompt]
        model = trial.run.model
        marathon = trial.kind == "marathon"  # always thinks at length, whatever the model
        scale = 1.25 if marathon else rng.lognormvariate(0, 0.35)
        self.think_kb = (6.0 if marathon else model.think_kb) * scale
        self.think_skip = 0.05 if marathon or model.think_kb >= 5 else 0.3
        self.verbosity = scale
        self.extra_text = model.extra_text
        self.fixed_at = (
            rng.randint(max(2, trial.episodes * 3 // 10), max(2, trial.episodes * 7 // 10))
            if trial.outcome != "fail"
            else trial.episodes + 1
        )
        self.actions: list[str] = []  # first lines of the commands run, for the hand-off summary
        self.episode = 0
        self.last_kind = ""
        self.pending_timeout = False  # the previous command timed out: wait for it or interrupt it
        self.parse_shape = 0  # which malformed reply was sent, so the error message matches it
        self.events = self._schedule()

    def _schedule(self) -> dict[int, str]:
        """Put each forced feature on its own episode, away from the first and the completion episodes."""
        events: dict[int, str] = {}
        slots = [
            ep
            for ep in range(1, self.trial.episodes - (2 if self.trial.completes else 0))
            if ep not in self.trial.restarts
        ]
        order = ("install", "timeout", "interrupt", "parse_error", "warnings", "token_limit")
        for feature in (f for f in order if f in self.trial.force):
            if slots:
                events[slots.pop(0)] = feature
        return events

    # -- rows --------------------------------------------------------------------------------------

    def main_rows(self) -> Iterator[list[Message]]:
        """The episode rows: each one the history so far, sharing message objects with the others."""
        for kind, value in self._walk():
            if kind == "row":
                yield list(value)

    def sub_rows(self) -> list[tuple[str, list[Message]]]:
        """The sub-agent rows of every summarization, as (trace_source, conversation)."""
        out = []
        handoffs = (value for kind, value in self._walk() if kind == "handoff")
        for n, (summary, questions, answers, _) in enumerate(handoffs, 1):
            out += [
                (f"summarization-{n}-summary", summary),
                (f"summarization-{n}-questions", questions),
                (f"summarization-{n}-answers", answers),
            ]
        return out

    def _walk(self) -> Iterator[tuple[str, object]]:
        """Play the trial: yields ("row", history) after each reply and ("handoff", parts) at each summarization."""
        first = _msg("user", self._first_prompt())
        history = [first]
        pending: Message | None = None
        for ep in range(self.trial.episodes):
            if ep in self.trial.restarts:
                parts = self._handoff(history)
                yield "handoff", parts
                history = [first] + parts[3]
            elif pending is not None:
                history.append(pending)
            reply, observation = self._episode(ep)
            history.append(_msg("assistant", reply))
            pending = _msg("user", observation) if observation is not None else None
            yield "row", history

    def _handoff(self, history: list[Message]) -> tuple[list, list, list, list]:
        """The three sub-agent conversations of a summarization and the new context's opening messages.

        As in Harbor, the summarizer sees the history without its last reply (unwound to fit the context).
        """
        rng, task = self.rng, self.task
        seen = history[:-1]
        actions = self.actions[-12:] or ["ls -la"]
        summary = (
            f"I have been working on {task.name}. Here's what I've accomplished:\n\n1. **Major Actions Completed**:\n"
            + "".join(f"   - Ran `{a}`\n" for a in actions)
            + f"\n2. **Important Information Learned**:\n   - The solution lives in /app/{task.main_file}\n"
            f"   - {say(rng.choice(THINK_FACTS), task, rng)}\n\n3. **Challenging Problems Addressed**:\n"
            f"   - {rng.choice(ERRORS_SEEN)}: {say(rng.choice(THINK_FACTS), task, rng)}\n\n"
            f"4. **Current Status**:\n   - {'The tests pass locally' if self.fixed_at <= self.episode else 'Still debugging the failing cases'}\n"
        )
        asked = rng.sample(QUESTIONS, rng.randint(5, 7))
        questions = "I have the following questions about the current state:\n\n" + "\n".join(
            f"{i}. {say(q, task, rng)}" for i, q in enumerate(asked, 1)
        )
        answers = "Here are the answers:\n\n" + "\n".join(
            f"{i}. {say(rng.choice(THINK_FACTS), task, rng)}" for i in range(1, len(asked) + 1)
        )
        request = _msg("user", SUMMARY_REQUEST.format(instruction=task.instruction))
        summary_msg = _msg("assistant", summary)
        ask = _msg(
            "user", QUESTIONS_REQUEST.format(instruction=task.instruction, summary=summary, screen=self._screen())
        )
        questions_msg = _msg("assistant", questions)
        summary_row = seen + [request, summary_msg]
        questions_row = [ask, questions_msg]
        answers_row = summary_row + [
            _msg("user", ANSWERS_REQUEST.format(questions=questions)),
            _msg("assistant", answers),
        ]
        restart = [ask, questions_msg, _msg("user", HANDOFF.format(answers=answers))]
        return summary_row, questions_row, answers_row, restart

    # -- messages ----------------------------------------------------------------------------------

    def _first_prompt(self) -> str:
        return f"{TERMINUS_PROMPT}Task Description:\n{self.task.instruction}\n\nCurrent terminal state:\nCurrent Terminal Screen:\n{self._screen()}"

    def _screen(self) -> str:
        """The visible 40-line screen: the last lines of the terminal, padded with blank lines."""
        lines = self.screen[-40:]
        return "\n".join(lines) + "\n" * (41 - len(lines))

    def _episode(self, ep: int) -> tuple[str, str | None]:
        """The agent's reply for episode `ep` and the harness's next user message (None after the last one)."""
        trial = self.trial
        self.episode = ep
        last = ep == trial.episodes - 1
        if trial.completes and last:
            return self._reply("confirm", [], complete=True), None
        if trial.completes and ep == trial.episodes - 2:
            reply = self._reply("complete", [], complete=True)
            return reply, f"Current terminal state:\n{self._observe([])}\n\n{COMPLETION_CHECK}"
        event = self.events.get(ep) or self._random_event(ep)
        self.pending_timeout = event == "timeout"
        if event == "parse_error":
            return self._malformed(), self._parse_error()
        if event == "token_limit":
            return self._truncated_reply(), TOKEN_LIMIT
        kind = self._kind(ep, event)
        commands = self._commands(kind, ep)
        reply = self._reply(kind, commands, extra=event == "warnings")
        if last:
            return reply, None
        if event == "timeout":  # the command is still running: the harness shows the screen, no prompt
            slow = commands[-1]
            self.screen += self._type([replace(slow, output="\n".join(slow.output.splitlines()[:20]))])[:-1]
            observation = TIMEOUT.format(command=slow.keys, seconds=slow.duration, screen=self._screen())
        else:
            observation = self._observe(commands)
        if event == "warnings":
            observation = WARNINGS + observation
        return reply, observation

    def _random_event(self, ep: int) -> str | None:
        rng = self.rng
        if ep == 0:
            return None
        if self.pending_timeout:
            return "interrupt" if rng.random() < 0.6 else "wait"
        roll = rng.random()
        if roll < 0.03:
            return "parse_error"
        if roll < 0.03 + self.extra_text:
            return "warnings"
        if roll < 0.08 + self.extra_text:
            return "timeout"
        if roll < 0.13 + self.extra_text:
            return "install"
        if roll < 0.135 + self.extra_text:
            return "token_limit"
        return None

    def _kind(self, ep: int, event: str | None) -> str:
        if ep == 0:
            return "explore"
        if event in ("install", "interrupt", "wait"):
            return event
        if event == "timeout":
            return "run"
        if ep == 1:
            return "inspect"
        nxt = {
            "explore": "inspect",
            "inspect": "write",
            "write": "run",
            "install": "run",
            "wait": "run",
            "interrupt": "write",
        }
        if self.last_kind in nxt:
            return nxt[self.last_kind]
        if ep < self.fixed_at:
            return self.rng.choice(("edit", "write", "run", "inspect"))
        return self.rng.choice(("test", "run", "test"))

    def _commands(self, kind: str, ep: int) -> list[_Command]:
        rng, task = self.rng, self.task
        self.last_kind = kind
        broken = ep < self.fixed_at
        file = task.main_file
        if kind == "explore":
            cmds = [
                _Command("ls -la\n", 0.1, ls(task, rng)),
                _Command("cat README.md 2>/dev/null | head -40\n", 0.1, task.instruction.strip()),
            ]
            cmds.append(_Command("find . -type f -not -path './.git/*' | head -60\n", 0.1, file_list(task, rng)))
            if self.trial.kind == "hostile":
                cmds.append(_Command("cat payload.txt\n", 0.1, HOSTILE_TERMINAL))
        elif kind == "inspect":
            lines = rng.randint(40, 160)
            cmds = [
                _Command(f"head -n {lines} data/input.log\n", 0.1, data_lines(rng, lines)),
                _Command("wc -l data/*.log\n", 0.1, wc(rng)),
            ]
            if task.name.startswith(("fix-git", "e2egit", "git-")):
                cmds.append(
                    _Command(
                        "git log --oneline --graph --all | head -20\n",
                        0.1,
                        "\n".join(
                            f"* \x1b[33m{rng.getrandbits(28):07x}\x1b[m {rng.choice(('Update layout', 'Fix typo', 'Add about page', 'Merge branch', 'WIP'))}"
                            for _ in range(12)
                        ),
                    )
                )
        elif kind == "write":
            cmds = [self._heredoc(file, task.lang)]
            if rng.random() < 0.2:
                cmds.append(self._heredoc("run.sh", "sh"))
            if rng.random() < 0.12:
                cmds.append(self._heredoc("config.json", "json"))
        elif kind == "run":
            runner = {
                "python": f"python3 {file}",
                "c": f"gcc -O2 -Wall -o solve {file} && ./solve data/input.log",
                "cpp": "cmake -S . -B build && cmake --build build",
                "rust": "cargo build --release 2>&1 | tail -30",
                "javascript": f"node {file} data/input.bin",
                "go": "go build ./... && go vet ./...",
                "java": "gradle compileJava --offline -q",
                "sh": f"bash {file}",
            }[task.lang]
            output = run_error(task, rng) if broken and rng.random() < 0.8 else run_ok(rng)
            if rng.random() < 0.5:
                output = build_log(rng, rng.randint(60, 400), task.lang) + "\n" + output
            cmds = [_Command(runner + "\n", rng.choice((1.0, 2.0, 5.0, 10.0, 30.0)), output)]
        elif kind == "edit":
            line = rng.randint(10, 60)
            code = source_file(task.lang, task, rng, file).splitlines()
            excerpt = cat_n(code, line - 10, line + 50)
            cmds = [
                _Command(f"cat -n {file} | sed -n '{line - 9},{line + 50}p'\n", 0.1, excerpt),
                _Command(f"sed -i '{line}s/range(len(items))/range(len(items) - 1)/' {file}\n", 0.1, ""),
                _Command(
                    f"grep -n 'def \\|fn \\|func ' {file} | head -20\n",
                    0.1,
                    "\n".join(f"{rng.randint(1, 200)}:{line}" for line in rng.sample(CODE_LINES[task.lang], 8)),
                ),
            ]
        elif kind == "test":
            failing = rng.randint(1, len(task.tests)) if broken else 0
            cmds = [_Command("python3 -m pytest tests/ -q 2>&1 | tail -40\n", 5.0, local_tests(task, rng, failing))]
        elif kind == "install":
            packages = rng.sample(["numpy", "scipy", "pandas", "requests", "cython", "pytest", "grpcio", "torch"], 3)
            cmds = [
                _Command(
                    f"apt-get update && apt-get install -y build-essential && pip install {' '.join(packages)}\n",
                    60.0,
                    install_log(rng, packages),
                )
            ]
        elif kind == "wait":
            cmds = [_Command("", float(rng.choice((10, 15, 30))), build_log(rng, rng.randint(5, 60), task.lang))]
        else:  # interrupt
            cmds = [_Command("C-c", 0.1, "")]
        self.actions += [c.keys.splitlines()[0] if c.keys else "(wait)" for c in cmds]
        return cmds

    def _heredoc(self, path: str, lang: str) -> _Command:
        code = source_file(lang, self.task, self.rng, path, helpers=int(self.rng.random() * 3 * self.verbosity))
        if self.trial.kind == "hostile" and lang == "sh":
            code += f"# {HOSTILE_MARKUP}\necho '{HOSTILE_TERMINAL}'\n"
        directory = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
        mkdir = f"mkdir -p {directory} && " if directory else ""
        return _Command(f"{mkdir}cat > {path} << 'EOF'\n{code}EOF\n", 0.1, "")

    def _observe(self, commands: list[_Command]) -> str:
        """Run `commands` on the simulated terminal and return the harness's observation message."""
        lines = self._type(commands)
        self.screen += lines
        if self.rng.random() < 0.08:
            return f"Current Terminal Screen:\n{self._screen()}"
        body = limit_output("\n".join(lines))
        return f"New Terminal Output:\n\n{body}" + "\n" * max(1, 40 - body.count("\n"))

    def _type(self, commands: list[_Command]) -> list[str]:
        """The terminal lines of `commands`: each echoed after the prompt (heredoc lines after "> "), then its output."""
        lines: list[str] = []
        for cmd in commands:
            if cmd.keys == "C-c":
                lines.append("^C")
                lines.append(self.prompt)
                continue
            if cmd.keys:
                keys = cmd.keys.rstrip("\n").split("\n")
                lines.append(f"{self.prompt} {keys[0]}")
                lines += [f"> {k}" for k in keys[1:]]
            if cmd.output:
                lines += cmd.output.split("\n")
            lines.append(self.prompt)
        if not commands:
            lines.append(self.prompt)
        return lines

    def _reply(self, kind: str, commands: list[_Command], complete: bool = False, extra: bool = False) -> str:
        rng, task = self.rng, self.task
        fill = Fill(task, rng)
        analysis = rng.choice(ANALYSIS[kind]).format_map(fill)
        if self.think_kb == 0:  # models that hide their reasoning explain more in the analysis
            analysis += " " + " ".join(say(fact, task, rng) for fact in rng.sample(THINK_FACTS, rng.randint(8, 24)))
        if self.trial.kind == "hostile" and kind in ("explore", "inspect", "write"):
            analysis += f" The payload contains markup like {HOSTILE_MARKUP} and escapes like \x1b]52;c;aGVsbG8=\x07."
        body = json.dumps(
            {
                "analysis": analysis,
                "plan": rng.choice(PLAN[kind]).format_map(fill),
                "commands": [{"keystrokes": c.keys, "duration": c.duration} for c in commands],
                "task_complete": complete,
            },
            indent=2,
            ensure_ascii=False,
        )
        if extra:
            body = rng.choice(
                (f"```json\n{body}\n```", f"Let me continue with the next step.\n\n{body}\n\nThis should work.")
            )
        think = self._think_block(kind)
        return f"<think>{think}</think>\n\n{body}" if think else body

    def _think_block(self, kind: str) -> str:
        rng = self.rng
        if "think" in self.trial.force and kind in ("explore", "inspect", "write"):
            return think(self.task, rng, 6.0 * self.verbosity)
        if self.think_kb <= 0 or rng.random() < self.think_skip:
            return ""
        text = think(self.task, rng, rng.expovariate(1 / self.think_kb))
        if self.trial.kind == "hostile":
            text += f"\n\nThe file prints {HOSTILE_MARKUP} when I cat it, and\x1b[2J clears the screen."
        return text

    def _malformed(self) -> str:
        rng = self.rng
        keys = f"python3 {self.task.main_file}\\n"
        shapes = (
            f'I need to run the solution again.\n{{\n  "commands": [\n    {{\n      "keystrokes": "{keys}",\n      "duration": 1.0\n    }}\n  ]\n}}\nThis should work!',
            # a raw newline inside a JSON string: "Invalid control character"
            '{\n  "analysis": "Writing the file.",\n  "plan": "Use a heredoc.",\n  "commands": [\n    {\n      "keystrokes":'
            " \"cat > x.py << 'EOF'\nprint('hi')\nEOF\n\",\n      \"duration\": 0.1\n    }\n  ]\n}",
            '{\n  "analysis": "Running it."\n  "plan": "Run.",\n  "commands": []\n}',  # missing comma
            "I think the task is basically done, I just need to double check the output format and then I will finish.",
        )
        self.parse_shape = rng.randrange(len(shapes))
        think = self._think_block("run")
        return (f"<think>{think}</think>\n" if think else "") + shapes[self.parse_shape]

    def _parse_error(self) -> str:
        rng = self.rng
        feedback = PARSE_ERRORS[self.parse_shape].format(
            line=rng.randint(3, 9), col=rng.randint(5, 60), char=rng.randint(40, 400)
        )
        return f"Previous response had parsing errors:\n{feedback}\n\nPlease fix these issues and provide a proper JSON response."

    def _truncated_reply(self) -> str:
        """A reply cut off by the output limit: a long think and a heredoc that never ends."""
        rng, task = self.rng, self.task
        code = "".join(source_file(task.lang, task, rng, task.main_file) for _ in range(14))
        start = json.dumps(
            {
                "analysis": "I will write the complete implementation in one go.",
                "plan": "Write everything.",
                "commands": [{"keystrokes": f"cat > {task.main_file} << 'EOF'\n{code}", "duration": 0.1}],
            },
            indent=2,
        )
        return f"<think>{think(task, rng, 12)}</think>\n\n{start[: int(len(start) * 0.9)]}"


# --------------------------------------------------------------------------------------------------
# openhands
# --------------------------------------------------------------------------------------------------


class _OpenHands:
    """An openhands trial: several user messages up front, then `<tool_call>` replies and tool results."""

    def __init__(self, trial: Trial):
        self.trial = trial
        self.task = trial.task
        self.rng = random.Random(trial.seed)

    def main_rows(self) -> Iterator[list[Message]]:
        task = self.task
        history = [
            _msg("user", OPENHANDS_PROMPT),
            _msg("user", task.instruction),
            _msg("user", f"Retrieving content for: {task.instruction[:50]}"),
            _msg("user", "Added workspace context"),
        ]
        for ep in range(self.trial.episodes):
            reply, result = self._step(ep)
            history.append(_msg("assistant", reply))
            yield list(history)
            history.append(_msg("user", result))

    def sub_rows(self) -> list[tuple[str, list[Message]]]:
        return []  # openhands never summarizes

    def _step(self, ep: int) -> tuple[str, str]:
        rng, task = self.rng, self.task
        file = f"/app/{task.main_file}"
        if self.trial.completes and ep == self.trial.episodes - 1:
            return _tool_call(
                "All done! The solution is in place and the tests pass.",
                "finish",
                {"message": f"Task complete. Implemented {file}."},
            ), ""
        choice = ep % 4 if ep < 4 else rng.randrange(4)
        if choice == 0:
            return _tool_call(
                "Let me explore the workspace first.",
                "execute_bash",
                {"command": "ls -la /app && cat /app/README.md", "security_risk": "LOW"},
            ), _bash_result(ls(task, rng, colours=False), 0)
        if choice == 1:
            code = source_file(task.lang, task, rng, task.main_file)
            return _tool_call(
                f"I'll create {file} with the implementation.",
                "str_replace_editor",
                {"command": "create", "path": file, "file_text": code, "security_risk": "MEDIUM"},
            ), f"File created successfully at: {file}"
        if choice == 2:
            code = source_file(task.lang, task, rng, task.main_file).splitlines()
            middle = len(code) // 2
            old = code[middle]
            snippet = cat_n(code, middle - 4, middle + 4)
            return _tool_call(
                "There is an off-by-one error; let me fix it.",
                "str_replace_editor",
                {
                    "command": "str_replace",
                    "path": file,
                    "old_str": old,
                    "new_str": old + "  # fixed",
                    "security_risk": "MEDIUM",
                },
            ), (
                f"The file {file} has been edited. Here's the result of running `cat -n` on a snippet of {file}:\n{snippet}\n"
                "Review the changes and make sure they are as expected. Edit the file again if necessary."
            )
        failing = rng.randint(0, 2) if self.trial.outcome == "fail" else 0
        output = local_tests(task, rng, failing)
        return _tool_call(
            "Now let me run the tests.",
            "execute_bash",
            {"command": "cd /app && python3 -m pytest -q", "security_risk": "LOW"},
        ), _bash_result(output, 1 if failing else 0)


def _tool_call(thought: str, name: str, arguments: dict) -> str:
    return f"{thought}\n<tool_call>\n{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}\n</tool_call>"


def _bash_result(output: str, code: int) -> str:
    return f"{output}\n[The command completed with exit code {code}.]\n[Current working directory: /app]\n[Python interpreter: /usr/local/bin/python]\n[Command finished with exit code {code}]"

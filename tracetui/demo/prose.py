"""The model's own words: pools of sentences for <think> blocks, the analysis and plan fields and the hand-off.

Separate from the harness prompts (fixed text) because this text is drawn at random and filled per task.
"""

from __future__ import annotations

import random

from .catalog import Task
from .source_files import CODE_LINES

_THINK_OPENERS = (
    "Let me look at the current state of the terminal first.",
    "Okay, so the previous command finished. Let me think about what happened.",
    "Hmm, the output is not what I expected.",
    "Let me re-read the task description carefully before doing anything else.",
    "The last step worked, so now I need to move on to the next part of the task.",
    "Wait, I should double check what the tests are actually going to look for.",
    "Alright. Let me reconsider the approach.",
)
THINK_FACTS = (
    "The task says the output must go to {out}, so I should make sure that path is exactly right.",
    "Looking at the error, {error} means the input does not match what {file} assumes.",
    "Maybe the problem is that {file} reads the whole input at once; for a large input that could be slow.",
    "I wonder whether the tests call {test} with edge cases like an empty input or a trailing newline.",
    "If I run `{cmd}` I can see whether the build actually produced anything.",
    "The {lang} version on this machine might be older than what I assumed, so some features may not exist.",
    "Let me count: there were {n} lines in the output, and {m} of them matched, which seems low.",
    "Actually, the simplest fix is to handle the special case before the main loop instead of inside it.",
    "I could also write a quick script to compare the expected and the actual output line by line.",
    "The previous attempt timed out, so I should use a shorter duration and poll instead of waiting.",
    "One concern: the heredoc must use a quoted 'EOF' so that the shell does not expand $variables inside it.",
    "I need to be careful with escaping in the JSON keystrokes: backslashes have to be doubled.",
    "There's no internet access problem so far, pip and apt both worked earlier.",
    "The test named {test} probably checks the format, not just the existence of the file.",
    "So the plan is: fix {file}, run it again, then run the tests and look at the first failure only.",
    "Let me not overthink this; {error} is a plain bug in my code, not an environment issue.",
    "I should check the permissions too; the verifier might run as a different user.",
    "If the directory layout is different from what I think, `ls -R` will show it quickly.",
    "It's possible the grader compares the output byte for byte, so trailing whitespace matters.",
    "Hmm, {n} seconds is too long for this command, something must be blocking on input.",
    "Let me verify my assumption about the input format before changing more code.",
    "The error message points at line {n} of {file}, which is inside the main loop.",
    "Running the whole test suite takes a while, so I'll run only {test} first.",
    "I should print the intermediate values to see where the numbers diverge.",
    "A cleaner approach would be to parse the input once into a list and work on that.",
    "Wait, maybe {out} is expected to have a trailing newline; many checkers are strict about that.",
    "The output has {m} entries but I expected about {n}, so the filter is too aggressive.",
    "The environment has no network access for the verifier, so everything must be installed now.",
    "I'll keep the previous version of {file} around in case the rewrite makes things worse.",
    "Using `set -euo pipefail` in the script will make failures visible instead of silent.",
    "Let me think about the complexity: {n} items squared is still fine, no need to optimize yet.",
    "The {lang} standard library should have everything needed here; no extra packages.",
    "I might be misreading the task: it asks for the result in {out}, not printed to stdout.",
    "The test {test} failed last time with {error}, so that is the first thing to fix.",
    "Before marking the task complete I want to run the full check one more time.",
)
_THINK_CODE = (
    "\n\n```\n{line}\n```\n\n",
    "\n\nSomething like:\n    {line}\nshould work.\n\n",
    " For example `{line}` would do it. ",
)
ERRORS_SEEN = (
    "IndexError: list index out of range",
    "KeyError: 'timestamp'",
    "a segmentation fault",
    "error[E0308]: mismatched types",
    "TypeError: Cannot read properties of undefined",
    "undefined: frame",
    "ModuleNotFoundError: No module named 'numpy'",
    "exit code 2",
)

ANALYSIS = {
    "explore": (
        "The terminal is at a fresh shell in /app. Nothing has been done yet for {task}.",
        "We are in /app with a clean shell. I need to see which files are provided before writing anything.",
    ),
    "inspect": (
        "The directory listing shows the input files. I need to understand their format before writing {file}.",
        "I have seen the layout. The data format and the existing code determine how {file} must work.",
    ),
    "write": (
        "I understand the input format now. Time to write the solution in {file}.",
        "The previous version of {file} had a bug ({error}). I will rewrite it with the fix.",
        "Based on what I found, I can implement the solution directly.",
    ),
    "run": (
        "{file} has been written. I need to run it and check the output.",
        "The file is in place; let me compile/run it to see whether it works.",
    ),
    "edit": (
        "The run failed with {error}. This is a small bug that a targeted edit can fix.",
        "The output is almost right; one case is handled incorrectly.",
    ),
    "test": (
        "The solution runs without errors. Let me run the tests to verify it.",
        "Output looks plausible. I should verify against the test cases before marking complete.",
    ),
    "install": (
        "A dependency is missing ({error}). I need to install it first.",
        "The build needs packages that are not installed in this image.",
    ),
    "wait": (
        "The command is still running; there is no prompt yet.",
        "The build is still in progress. I'll wait a bit more.",
    ),
    "interrupt": ("The command appears to hang. I will interrupt it with Ctrl+C and try a different approach.",),
    "complete": (
        "All checks pass and the output file is in place. The task is complete.",
        "The solution works for every case I tried. I believe the task is complete.",
    ),
    "confirm": ("Yes, the solution is in place and verified.", "Confirming completion; nothing left to do."),
}
PLAN = {
    "explore": ("List the files in /app and look at any README or data files.",),
    "inspect": ("Look at the first lines of the input and at the existing sources.",),
    "write": ("Write {file} with a heredoc, then run it.", "Create {file} implementing the full solution."),
    "run": ("Run {file} and inspect the output.",),
    "edit": ("Patch the faulty line with sed and re-run.",),
    "test": ("Run the test suite and look at failures.",),
    "install": ("Install the missing packages, then retry.",),
    "wait": ("Wait for the command to finish.",),
    "interrupt": ("Send C-c, then re-run with a smaller input.",),
    "complete": ("Mark the task as complete.",),
    "confirm": ("No further action needed.",),
}
QUESTIONS = (
    "What is the exact content of {file} right now, and does it run without errors?",
    "Which of the tests ({test}, ...) were run, and what was the last result?",
    "Were any packages installed, and did any installation fail?",
    "Is {out} already created, and in what format?",
    "Did any command time out or hang, and is anything still running in the background?",
    "Are there any files in /app that were created as temporary experiments and should be removed?",
    "What was the last error message you saw ({error}?), and what caused it?",
)


class Fill(dict):
    """Substitution values for the prose pools, drawn only when a template asks for them (for speed)."""

    def __init__(self, task: Task, rng: random.Random):
        super().__init__(
            task=task.name,
            file=task.main_file,
            lang=task.lang,
            out="/app/output.json" if task.verifier != "polyglot" else task.main_file,
        )
        self.task, self.rng = task, rng

    def __missing__(self, key: str):
        rng = self.rng
        value = {
            "test": lambda: rng.choice(self.task.tests),
            "error": lambda: rng.choice(ERRORS_SEEN),
            "cmd": lambda: rng.choice(
                ("ls -la /app", "make 2>&1 | tail", "python3 -m pytest -x -q", "cat -A output.txt")
            ),
            "n": lambda: rng.randint(3, 400),
            "m": lambda: rng.randint(0, self["n"] // 3),
        }[key]()
        self[key] = value
        return value


def say(template: str, task: Task, rng: random.Random) -> str:
    return template.format_map(Fill(task, rng))


def think(task: Task, rng: random.Random, kb: float) -> str:
    """A reasoning block of about `kb` KB, made of paragraphs of templated sentences."""
    target = int(kb * 1024)
    parts = [rng.choice(_THINK_OPENERS)]
    size = len(parts[0])
    while size < target:
        fill = Fill(task, rng)  # one test, error and number per paragraph
        paragraph = " ".join(fact.format_map(fill) for fact in rng.sample(THINK_FACTS, rng.randint(2, 6)))
        if rng.random() < 0.15:
            paragraph += rng.choice(_THINK_CODE).format(line=rng.choice(CODE_LINES[task.lang]))
        parts.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(parts)

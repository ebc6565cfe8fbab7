"""Which trials a dataset holds, decided before any text is generated.

Planning is cheap and fixes the row count exactly, so the writer knows the total up front and each trial's
text can later be generated (and regenerated, for the sub-agent rows) from nothing but the trial's seed.
The first trials are a fixed showcase that together exercise every feature a viewer must handle.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone

from .catalog import CORE_TASKS, ERRORS, MODELS, OPENHANDS, RUN_MODELS, TASK_BY_NAME, TASKS, VERIFIER_RAN, Model, Task

MARATHON_MIN_ROWS = 2000  # smaller datasets have no 149-episode trial
_BASE_DATE = datetime(2026, 7, 14, 8, 0, 0, tzinfo=timezone.utc)


@dataclass(frozen=True, slots=True)
class Run:
    run_id: str
    model: Model
    start: datetime
    date_style: int  # 0: ...Z with microseconds, 1: +00:00, 2: no zone (all seen in real exports)


@dataclass(frozen=True, slots=True)
class Trial:
    seed: int
    run: Run
    task: Task
    trial_name: str
    date: str
    episodes: int
    restarts: tuple[int, ...]  # episodes that start a fresh context after a summarization
    result: str | None
    outcome: str  # what the verifier saw: pass | fail | score
    score: float  # fraction of checks passed
    verifier_ran: bool
    completes: bool  # the agent marks the task complete (and confirms) at the end
    force: frozenset[str] = frozenset()  # features this trial must show (the showcase)
    kind: str = "normal"  # normal | marathon | hostile

    @property
    def rows(self) -> int:
        return self.episodes + 3 * len(self.restarts)


# The first trials of every dataset: together they show every feature a viewer must handle.
_SHOWCASE = (
    dict(task="regex-log", result="1.0", episodes=7, force={"think"}),
    dict(task="polyglot_rust_forth", result="0.0", episodes=6, force={"parse_error", "warnings"}),
    dict(task="fix-git", result="1.0", episodes=13, restarts=(4, 9)),
    dict(task="book-portfolio-analysis", result="0.61", episodes=5, force={"ansi"}),
    dict(task="e2egit-0042", result="1.0", episodes=6),
    dict(task="build-pmars", result="AgentTimeoutError", episodes=9, force={"timeout", "interrupt", "install"}),
    dict(task="extract-elf", result="ContextLengthExceededError", episodes=6, force={"token_limit"}),
    dict(task="polyglot_go_bowling", result="1.0", episodes=6),
    dict(task="hostile-content", result="0.0", episodes=5, kind="hostile"),
    dict(task="polyglot_javascript_zipper", result="0.0", episodes=5),
    dict(task="count-dataset-tokens", result=None, episodes=3),
    dict(task="polyglot_java_react", result="NonZeroAgentExitCodeError", episodes=2),
    dict(task="largest-eigenval", result="VerifierTimeoutError", episodes=5),
    dict(task="polyglot_cpp_bank-account", result="1.0", episodes=6),
    dict(task="pypi-server", result="SummarizationTimeoutError", episodes=6),
    dict(task="swesmith-00042", result="0.0", episodes=5, force={"ansi"}),
    dict(task="polyglot_python_grep", result="1.0", episodes=6),
)


def _uuid4(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


def _suffix(rng: random.Random, n: int = 7) -> str:
    return "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") for _ in range(n))


def _format_date(when: datetime, style: int) -> str:
    if style == 0:
        return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if style == 1:
        return when.isoformat()
    return when.replace(tzinfo=None).isoformat()


def plan(rows: int, seed: int) -> list[Trial]:
    """All trials of the dataset, in export order, with exactly `rows` rows between them."""
    rng = random.Random(seed)
    showcase = list(_SHOWCASE)
    marathon_at = rows // 4 if rows >= MARATHON_MIN_ROWS else None
    trials: list[Trial] = []
    total = 0
    run_index = 0
    while total < rows:
        run, slots = _new_run(rng, run_index)
        run_index += 1
        offset = timedelta(seconds=rng.randint(5, 90), microseconds=rng.randint(0, 999999))
        for task in slots:
            if total >= rows:
                break
            spec: dict = {}
            if showcase and run.model.agent == "terminus-2" and len(trials) % 2 == 0:
                spec = showcase.pop(0)
            elif marathon_at is not None and total >= marathon_at and run.model.agent == "terminus-2":
                spec = dict(episodes=149, kind="marathon", result="AgentTimeoutError")
                marathon_at = None
            trial = _new_trial(
                rng, run, TASK_BY_NAME[spec["task"]] if "task" in spec else task, run.start + offset, spec
            )
            offset += timedelta(seconds=rng.randint(20, 900), microseconds=rng.randint(0, 999999))
            if total + trial.rows > rows:  # the last trial is cut short, as if its later episodes were lost
                trial = replace(trial, episodes=rows - total, restarts=(), completes=False)
            trials.append(trial)
            total += trial.rows
    return trials


def _new_run(rng: random.Random, index: int) -> tuple[Run, list[Task]]:
    """A job: one model attempting several tasks several times (trials in completion order)."""
    if index < len(RUN_MODELS):
        model = RUN_MODELS[index]
        pool = CORE_TASKS
        count, attempts = (2, 2) if model.agent == "openhands" else (rng.randint(3, 4), rng.randint(2, 3))
    else:
        model = rng.choice(MODELS) if rng.random() > 0.05 else OPENHANDS
        pool = TASKS
        count, attempts = (
            (rng.randint(2, 5), 2) if model.agent == "openhands" else (rng.randint(6, 16), rng.randint(2, 4))
        )
    tasks = rng.sample(pool, count)
    slots = [task for task in tasks for _ in range(attempts)]
    rng.shuffle(slots)
    start = _BASE_DATE + timedelta(hours=index * 7 + rng.randint(0, 5), minutes=rng.randint(0, 59))
    return Run(_uuid4(rng), model, start, rng.choice((0, 0, 0, 1, 2))), slots


def _new_trial(rng: random.Random, run: Run, task: Task, start: datetime, spec: dict) -> Trial:
    model = run.model
    p_pass = max(0.03, min(0.97, model.skill * (1.15 - task.difficulty)))
    roll = rng.random()
    if "result" in spec:
        result = spec["result"]
    elif roll < 0.02:
        result = None
    elif roll < 0.16:
        result = rng.choices([e[0] for e in ERRORS], [e[1] for e in ERRORS])[0]
    elif task.verifier == "graded":
        result = score_text(min(1.0, max(0.0, rng.gauss(p_pass, 0.25))))
    else:
        result = "1.0" if rng.random() < p_pass else "0.0"

    errored = result is not None and result[0].isalpha()
    if result is None:
        outcome, score = rng.choice((("pass", 1.0), ("fail", 0.0)))
    elif errored:
        outcome, score = "fail", 0.0
    elif task.verifier == "graded":
        outcome, score = "score", float(result)
    else:
        outcome, score = ("pass", 1.0) if result == "1.0" else ("fail", 0.0)
    verifier_ran = (not errored or (VERIFIER_RAN[result] and rng.random() < 0.6)) and rng.random() > 0.03
    if "result" in spec and errored:
        verifier_ran = VERIFIER_RAN[result]

    episodes = spec.get("episodes") or min(60, 1 + int(rng.expovariate(1 / 13)) + (12 if errored else 0))
    restarts = tuple(spec.get("restarts", ()))
    if not spec and episodes >= 16 and model.agent == "terminus-2" and rng.random() < 0.3:
        first = rng.randint(episodes * 2 // 5, episodes * 3 // 5)
        restarts = (first,)
        if episodes >= 40 and rng.random() < 0.5:
            restarts += (rng.randint(first + 8, episodes - 3),)
    completes = not errored and episodes >= 3 and (outcome != "fail" or rng.random() < 0.7)
    return Trial(
        seed=rng.getrandbits(64),
        run=run,
        task=task,
        trial_name=f"{task.name[:32]}__{_suffix(rng)}",
        date=_format_date(start, run.date_style),
        episodes=episodes,
        restarts=restarts,
        result=result,
        outcome=outcome,
        score=score,
        verifier_ran=verifier_ran,
        completes=completes,
        force=frozenset(spec.get("force", ())),
        kind=spec.get("kind", "normal"),
    )


def score_text(score: float) -> str:
    """A reward as the result column holds it: "1.0", "0.0", or two decimals without trailing zeros."""
    if score >= 0.995:
        return "1.0"
    if score < 0.005:
        return "0.0"
    return f"{score:.2f}".rstrip("0")

"""Task health: what all the trials of a task say about the task itself, not about one model.

A task no model ever passes, or that ends in an infra error most of the time, is usually broken, not
hard; one that every attempt passes teaches nothing; one whose failures all fail the same test with the
same assertion may have a wrong test; one a model both passes and fails is flaky. Each task gets every
tag that fits (`HEALTH`), from all the session's trials of it; a trial has its task's tags, so they
filter (`--exclude task_health=never-passed`) and count like any multi-valued facet.

All but `same-failure` come from the trials' outcomes and result names at once; `same-failure` needs
the verifier index (the failed tests and their assertions), and the facet names it only once given one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..findings import ending_kind
from .facets import MultiFacet
from .trials import FAIL, NOT_GRADED, PARTIAL, PASS

if TYPE_CHECKING:
    from .session import Session
    from .verifier_index import VerifierIndex

FACET = "task_health"


@dataclass(frozen=True, slots=True)
class Tag:
    name: str
    word: str
    """One word, for a narrow column."""
    description: str


TAGS = (
    Tag("never-passed", "never", "no trial of any model passed"),
    Tag("always-passed", "always", "every graded trial passed"),
    Tag(
        "mostly-infra", "infra", "half or more of its trials ended in an infra error, a time-out or a context overflow"
    ),
    Tag("same-failure", "same", "every failing trial failed the same test with the same assertion"),
    Tag("flaky", "flaky", "one model both passed and failed it"),
)
HEALTH = tuple(tag.name for tag in TAGS)
"""The tags, in the order they are shown."""
WORDS = {tag.name: tag.word for tag in TAGS}
GRAVITY = ("mostly-infra", "never-passed", "same-failure", "flaky", "always-passed")
"""Which tag a narrow column shows first: the one that most says the task is broken."""


@dataclass(frozen=True, slots=True)
class TaskHealth:
    """Which tasks have each tag, and what they were computed from."""

    tagged: dict[str, np.ndarray]
    """Tag -> bool per task code (HEALTH order; `same-failure` only when `failures_known`)."""
    task_codes: np.ndarray
    """Per trial: its task's code (-1: no task)."""

    @property
    def failures_known(self) -> bool:
        """Whether `same-failure` was worked out (a verifier index was given)."""
        return "same-failure" in self.tagged

    @property
    def labels(self) -> list[str]:
        return list(self.tagged)

    @property
    def tags(self) -> dict[int, tuple[str, ...]]:
        """Task code -> its tags in HEALTH order (tasks without any are absent)."""
        found: dict[int, list[str]] = {}
        for tag, tasks in self.tagged.items():
            for task in np.nonzero(tasks)[0].tolist():
                found.setdefault(task, []).append(tag)
        return {task: tuple(found[task]) for task in sorted(found)}

    def of(self, trial: int) -> tuple[str, ...]:
        task = int(self.task_codes[trial])
        return tuple(tag for tag, tasks in self.tagged.items() if task >= 0 and tasks[task])

    def word(self, trial: int) -> str:
        """The gravest tag's word, `+` when there are more: for the trial list's column."""
        tags = self.of(trial)
        if not tags:
            return ""
        first = min(tags, key=GRAVITY.index)
        return WORDS[first] + ("+" if len(tags) > 1 else "")

    def facet(self) -> MultiFacet:
        """Every trial has its task's tags."""
        trials, codes = [], []
        for code, tasks in enumerate(self.tagged.values()):
            mine = np.nonzero(np.append(tasks, False)[self.task_codes])[0]  # code -1 (no task): the last False
            trials.append(mine)
            codes.append(np.full(len(mine), code, np.int64))
        return MultiFacet(FACET, "Task health", self.labels, np.concatenate(trials), np.concatenate(codes))


def task_health(session: Session, verifiers: VerifierIndex | None = None) -> TaskHealth:
    """Every task's tags from all of `session`'s trials (see the module docstring and TAGS)."""
    t = session.trials
    tasks = t.codes["task"].astype(np.int64)
    count = len(t.labels["task"])
    has_task = tasks >= 0
    outcome = t.outcome

    def per_task(where: np.ndarray) -> np.ndarray:
        return np.bincount(tasks[has_task & where], minlength=count)

    trials = per_task(np.ones(len(t), bool))
    graded = per_task(~np.isin(outcome, NOT_GRADED))
    passed = per_task(outcome == PASS)
    ended = np.array([ending_kind(label) is not None for label in t.labels["result"]] + [False])
    infra = per_task(ended[t.codes["result"].astype(np.int64)])  # code -1 (no result) lands on the last False
    failing = np.isin(outcome, (PARTIAL, FAIL)) & has_task

    # flaky: a (task, model) pair with both a pass and a graded failure
    models = len(t.labels["model"]) + 1
    pair = tasks * models + (t.codes["model"].astype(np.int64) + 1)
    flaky = np.zeros(count, bool)
    failed = pair[failing]  # isin, not intersect1d: that imports numpy.ma (~25 ms before the first screen)
    flaky[failed[np.isin(failed, pair[has_task & (outcome == PASS)])] // models] = True

    tagged = {
        "never-passed": (graded > 0) & (passed == 0),
        "always-passed": (graded > 0) & (passed == graded),
        "mostly-infra": (trials > 0) & (2 * infra >= trials),
        "same-failure": _same_failure(tasks, failing, verifiers, count) if verifiers is not None else None,
        "flaky": flaky,
    }
    return TaskHealth({tag: found for tag, found in tagged.items() if found is not None}, tasks)


def _same_failure(tasks: np.ndarray, failing: np.ndarray, verifiers: VerifierIndex, count: int) -> np.ndarray:
    """Tasks with two or more failing trials (partial or fail) that all fail one test with one assertion
    (a failed test whose log gives no assertion line says nothing of why, so it never matches)."""
    shared: dict[int, set[tuple[str, str]]] = {}
    seen = np.bincount(tasks[failing], minlength=count)
    for trial in np.nonzero(failing)[0].tolist():
        task = int(tasks[trial])
        failures = {(test, why) for test, why in zip(verifiers.failed[trial], verifiers.assertions[trial]) if why}
        shared[task] = shared[task] & failures if task in shared else failures
    found = np.zeros(count, bool)
    found[[task for task, common in shared.items() if common and seen[task] >= 2]] = True
    return found

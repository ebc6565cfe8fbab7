"""Which trials to put side by side: another attempt of the same task, the sides of a head-to-head,
and the best / worst attempt of one side. Plain numpy on the trials' codes; no Textual.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .facets import NULL_LABEL
from .trials import ERROR, FAIL, PARTIAL, PASS, UNKNOWN

if TYPE_CHECKING:
    from .session import Session


def pick_counterpart(session: Session, trial: int) -> int | None:
    """The attempt of the same task to compare `trial` with, or None when there is no other.

    Preference: the opposite outcome (a pass against a partial/fail/error, and the reverse), then the
    same model, then the most recent date; ties go to the first trial.
    """
    ranked = _other_attempts(session, trial)
    return ranked[0] if ranked else None


def compare_choices(session: Session, trial: int) -> tuple[list[int], list[int]]:
    """The other attempts of `trial`'s task, (same model, other models), each in the order of
    preference of `pick_counterpart`: what the compare picker offers."""
    ranked = _other_attempts(session, trial)
    models = session.trials.codes["model"]
    same = [t for t in ranked if models[t] == models[trial]]
    return same, [t for t in ranked if models[t] != models[trial]]


def _other_attempts(session: Session, trial: int) -> list[int]:
    """Every other attempt of `trial`'s task, the best counterpart first (see `pick_counterpart`)."""
    t = session.trials
    task = int(t.codes["task"][trial])
    if task < 0:
        return []
    others = np.nonzero(t.codes["task"] == task)[0]
    others = others[others != trial]
    if t.outcome[trial] == PASS:
        opposite = np.isin(t.outcome[others], (PARTIAL, FAIL, ERROR))
    else:
        opposite = t.outcome[others] == PASS
    same_model = t.codes["model"][others] == t.codes["model"][trial]
    ranked = sorted(
        range(len(others)), key=lambda i: (opposite[i], same_model[i], t.date[int(others[i])], -i), reverse=True
    )
    return [int(others[i]) for i in ranked]


def _score(session: Session, trials: np.ndarray) -> np.ndarray:
    """Reward of each trial as graded: an error counts 0, an ungraded trial is nan."""
    t = session.trials
    outcome = t.outcome[trials]
    reward = np.where(outcome == ERROR, 0.0, t.reward[trials])
    return np.where(outcome == UNKNOWN, math.nan, reward)


def best_attempt(session: Session, trials: np.ndarray) -> int:
    """A pass if any, else the highest reward (ungraded trials last); the first one on ties."""
    score = _score(session, trials)
    return int(trials[int(np.argmax(np.nan_to_num(score, nan=-math.inf)))])


def worst_attempt(session: Session, trials: np.ndarray) -> int:
    """A fail or error if any, else the lowest reward (ungraded trials last); the first one on ties."""
    score = _score(session, trials)
    return int(trials[int(np.argmin(np.nan_to_num(score, nan=math.inf)))])


def _matching(session: Session, column: str, label: str) -> np.ndarray:
    """Trials whose `column` facet has `label` (NULL_LABEL matches trials without a value)."""
    facet = session.facets.single(column)
    code = facet.code_of(label)
    if code is None:
        return facet.codes < 0 if label == NULL_LABEL else np.zeros(len(facet.codes), bool)
    return facet.codes == code


@dataclass(frozen=True, slots=True)
class Sides:
    """The two sides of a head-to-head: two datasets, or two models within one dataset."""

    column: str  # "dataset" or "model"
    a: str
    b: str
    dataset: str | None = None  # model sides compare within this dataset

    def scope(self, session: Session, mask: np.ndarray) -> np.ndarray:
        """`mask` restricted to the dataset the sides live in."""
        return mask if self.dataset is None else mask & _matching(session, "dataset", self.dataset)

    def attempts(self, session: Session, mask: np.ndarray, side: str, task: str) -> np.ndarray:
        """Trial ids of side "a" or "b" attempting `task`, within the scope of `mask`."""
        label = self.a if side == "a" else self.b
        chosen = self.scope(session, mask) & _matching(session, self.column, label) & _matching(session, "task", task)
        return np.nonzero(chosen)[0]


def sides_choices(session: Session, mask: np.ndarray) -> list[Sides]:
    """Every pair worth a head-to-head in `mask`: dataset pairs, then model pairs within each dataset,
    keeping only pairs that attempted at least one common task."""
    t = session.trials
    tasks = t.codes["task"]
    choices: list[Sides] = []

    def pairs(column: str, codes: np.ndarray, labels: list[str], scope: np.ndarray, dataset: str | None) -> None:
        attempted = _attempted(codes, scope, tasks)
        present = list(attempted)
        if column == "model":
            present.sort(key=lambda c: labels[c])  # datasets keep the order they were opened in
        for x, y in itertools.combinations(present, 2):
            if attempted[x] & attempted[y]:
                choices.append(Sides(column, labels[x], labels[y], dataset))

    names = list(session.dataset_names)
    datasets = t.dataset.astype(np.int64)
    pairs("dataset", datasets, names, mask, None)
    models = session.facets.single("model")
    for index in np.unique(datasets[mask]):
        scope = mask & (datasets == index) & (models.codes >= 0)
        pairs("model", models.codes, models.labels, scope, names[int(index)])
    return choices


def datasets_apart(session: Session, mask: np.ndarray) -> list[tuple[str, str]]:
    """The pairs of datasets in `mask` that attempted no task in common: `sides_choices` offers none
    of them (the head-to-head says why)."""
    names = list(session.dataset_names)
    attempted = _attempted(session.trials.dataset.astype(np.int64), mask, session.trials.codes["task"])
    return [(names[x], names[y]) for x, y in itertools.combinations(attempted, 2) if not attempted[x] & attempted[y]]


def _attempted(codes: np.ndarray, scope: np.ndarray, tasks: np.ndarray) -> dict[int, set[int]]:
    """Each code present in `scope` -> the task codes its trials there attempted."""
    return {int(c): set(np.unique(tasks[scope & (codes == c)]).tolist()) for c in np.unique(codes[scope])}

"""A question's answers on the trials of a session: the `ask:NAME` facet (yes / no / unclear /
unverified), a list column's cells and an export column.

Answers are kept by trial fingerprint (`fingerprint`): the trial's identity (run, trial name, task,
model, agent), its result and the size of its history, all read from the metadata, so the answers
given to a dataset reach the same trials when it is opened again, moved, re-exported or read from the
hub, and not a trial whose conversation grew since.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np
import orjson

from ..data.facets import ASK_PREFIX, MultiFacet
from ..data.trials import KEY_COLUMNS
from .answers import AnswerBook, all_books
from .verify import VALUES, Answer

if TYPE_CHECKING:
    from ..data.session import Session


def fingerprint(session: Session, trial: int) -> str:
    t = session.trials
    key: list[object] = [t.label(column, trial) for column in (*KEY_COLUMNS, "result")]
    key += [int(t.messages[trial]), int(t.episodes[trial])]
    return hashlib.sha1(orjson.dumps(key)).hexdigest()[:20]


def fingerprints(session: Session) -> list[str]:
    return [fingerprint(session, trial) for trial in range(len(session))]


class AskIndex:
    """One question's answers on `session`'s trials (those that have one)."""

    def __init__(self, book: AnswerBook, session: Session, prints: list[str] | None = None) -> None:
        self.book = book
        self.prints = prints if prints is not None else fingerprints(session)
        self.answers: dict[int, Answer] = {
            trial: book.by_trial[key].answer for trial, key in enumerate(self.prints) if key in book.by_trial
        }

    @property
    def name(self) -> str:
        return self.book.name

    @property
    def facet_name(self) -> str:
        return ASK_PREFIX + self.book.name

    def add(self, trial: int, answer: Answer) -> None:
        self.answers[trial] = answer

    def of(self, trial: int) -> Answer | None:
        return self.answers.get(trial)

    def has(self, count: int) -> np.ndarray:
        """Per trial of the session: whether it has an answer."""
        mask = np.zeros(count, dtype=bool)
        mask[list(self.answers)] = True
        return mask

    def facet(self) -> MultiFacet:
        trials = np.array(sorted(self.answers), dtype=np.int64)
        codes = np.array([VALUES.index(self.answers[t].value) for t in trials.tolist()], dtype=np.int64)
        return MultiFacet(self.facet_name, f"ask: {self.name}", list(VALUES), trials, codes)

    def values(self) -> dict[int, str]:
        """trial -> its answer's value, for an export column."""
        return {trial: answer.value for trial, answer in self.answers.items()}


def session_indexes(session: Session) -> list[AskIndex]:
    """Every question asked whose answers reach some of `session`'s trials, by name."""
    books = all_books()
    if not books:
        return []
    prints = fingerprints(session)
    indexes = [AskIndex(book, session, prints) for book in books]
    return [index for index in indexes if index.answers]


def export_column(name: str) -> str:
    """The column an export gives a question's answers."""
    return f"tracetui_ask_{name}"


def answer_columns(session: Session, indexes: list[AskIndex] | None = None) -> dict[str, dict[int, str]]:
    """An export's answer columns: each question's (of `indexes`, else of every question whose answers
    reach the session) values by trial."""
    return {export_column(i.name): i.values() for i in (session_indexes(session) if indexes is None else indexes)}

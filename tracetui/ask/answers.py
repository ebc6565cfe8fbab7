"""One question's answers on disk, which are both the data the facets and filters read and the cache.

A question asked of a model has a short name (`give-up-without-running`, the facet `ask:NAME`) and a
file, `ask/NAME.jsonl` under the data dir (`TRACETUI_DATA_DIR`): a header line with the question and
the model, then one line per answer, appended the moment it arrives, so a run that is cancelled,
killed or cut off by its server keeps every answer it got, and the next run asks only the rest. Each
line holds the trial's fingerprint (which trial it answers, in any session that opens the same data)
and the digest of the prompt (the trial's text as sent, the question and the template version): an
answer is reused for the same prompt to the same model, found at once by the trial's fingerprint when
the budget and template version are the ones it was asked with (so asking again reads no trial), else
by the prompt's digest. A line cut short by a crash is skipped.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..data.errors import SourceError
from ..paths import data_dir
from .prompt import TEMPLATE_VERSION
from .verify import Answer

FORMAT = 1
NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,47}")
"""A question's short name: what `--filter ask:NAME=…` and `--name` take."""
_STOP = (
    "a an the did does do is was were are has have had it its this that agent model trial any of to in on for "
    "by with and or at as so be been ever there what which who whom how why when whether really actually"
)
_STOP_WORDS = frozenset(_STOP.split())
"""Words a question's name leaves out."""


@dataclass(frozen=True, slots=True)
class Question:
    name: str
    text: str
    model: str


def folder() -> Path:
    return data_dir() / "ask"


def short_name(text: str) -> str:
    """A name for a question from its first words that say something: "Did the agent give up without
    running the tests?" -> `give-up-without-running`."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    kept = [w for w in words if w not in _STOP_WORDS] or words
    return "-".join(kept[:4])[:40].strip("-") or "question"


def same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


@dataclass(frozen=True, slots=True)
class Entry:
    """An answer as kept: what it was the answer to."""

    answer: Answer
    digest: str
    template: int
    budget: int


@dataclass
class AnswerBook:
    path: Path
    question: Question
    by_trial: dict[str, Entry] = field(default_factory=dict)
    """The latest answer per trial fingerprint."""
    by_digest: dict[str, Answer] = field(default_factory=dict)
    problem: str | None = None
    """Why answers could not be written (they are then kept for this session only)."""
    _ends_line: bool = True

    @property
    def name(self) -> str:
        return self.question.name

    def answer(self, fingerprint: str) -> Answer | None:
        """The latest answer to the trial of this fingerprint."""
        entry = self.by_trial.get(fingerprint)
        return entry.answer if entry is not None else None

    def known(self, fingerprint: str, budget: int) -> Answer | None:
        """The answer to this trial asked with this budget and the current template, if there is one."""
        entry = self.by_trial.get(fingerprint)
        ok = entry is not None and entry.template == TEMPLATE_VERSION and entry.budget == budget
        return entry.answer if ok and entry is not None else None

    def cached(self, digest: str) -> Answer | None:
        """The answer given before to this very prompt (by this book's model)."""
        return self.by_digest.get(digest)

    def add(self, fingerprint: str, digest: str, budget: int, answer: Answer, about: Mapping[str, Any]) -> None:
        """Keep an answer, on disk at once (`about`: what the line says of the trial, for people reading
        the file)."""
        self.by_trial[fingerprint] = Entry(answer, digest, TEMPLATE_VERSION, budget)
        self.by_digest[digest] = answer
        line = {
            "trial": fingerprint,
            "digest": digest,
            "template": TEMPLATE_VERSION,
            "budget": budget,
            **about,
            **answer.to_json(),
        }
        data = orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE)
        try:
            with open(self.path, "ab") as file:
                file.write(data if self._ends_line else b"\n" + data)
            self._ends_line = True
        except OSError as exc:
            self.problem = f"{self.path}: {exc.strerror or exc}; the answers are kept for this session only"

    @classmethod
    def read(cls, path: Path) -> AnswerBook | None:
        """The book in `path`; None when it is not one (unreadable, or no header)."""
        try:
            data = path.read_bytes()
        except OSError:
            return None
        lines = data.split(b"\n")
        try:
            header = orjson.loads(lines[0])
            question = Question(header["name"], header["question"], header["model"])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return None
        book = cls(path, question, _ends_line=data.endswith(b"\n"))
        for line in lines[1:]:
            try:
                record = orjson.loads(line)
                answer = Answer.from_json(record)
                entry = Entry(answer, str(record["digest"]), int(record["template"]), int(record["budget"]))
                book.by_trial[str(record["trial"])] = entry
                book.by_digest[entry.digest] = answer
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                continue  # an empty line, or one cut short by a crash
        return book


def all_books() -> list[AnswerBook]:
    """Every question asked, by name."""
    try:
        paths = sorted(folder().glob("*.jsonl"))
    except OSError:
        return []
    books = [AnswerBook.read(path) for path in paths]
    return sorted((b for b in books if b is not None and b.path.stem == b.name), key=lambda book: book.name)


def named(name: str) -> AnswerBook:
    """The question `name`; SourceError naming the questions asked when there is none."""
    books = {book.name: book for book in all_books()}
    if name in books:
        return books[name]
    asked = ", ".join(books) or "none yet (tracetui ask SOURCE… QUESTION asks one)"
    raise SourceError(f"no question named {name!r} was asked; questions: {asked}")


def book_for(text: str, model: str, name: str | None = None) -> AnswerBook:
    """The book of `text` asked of `model`: the one it has already, else a new one named `name` (else
    after the question's words, numbered if that name holds another question). SourceError for a
    malformed `name`, or one holding another question or model."""
    books = {book.name: book for book in all_books()}
    if name is not None:
        if not NAME.fullmatch(name):
            raise SourceError(f"--name {name!r}: lower-case letters, digits, '.', '_' and '-', at most 48")
        book = books.get(name)
        if book is not None and not (same_text(book.question.text, text) and book.question.model == model):
            raise SourceError(
                f"ask:{name} holds another question ({book.question.text!r} of {book.question.model}); "
                "choose another --name"
            )
        return book or _create(Question(name, text, model))
    for book in books.values():
        if same_text(book.question.text, text) and book.question.model == model:
            return book
    base = short_name(text)
    number = 1
    while (candidate := base if number == 1 else f"{base}-{number}") in books or (
        folder() / f"{candidate}.jsonl"
    ).exists():
        number += 1
    return _create(Question(candidate, text, model))


def _create(question: Question) -> AnswerBook:
    path = folder() / f"{question.name}.jsonl"
    header = {"tracetui_ask": FORMAT, "name": question.name, "question": question.text, "model": question.model}
    header["created"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "xb") as file:
            file.write(orjson.dumps(header, option=orjson.OPT_APPEND_NEWLINE))
    except FileExistsError:  # another process made it first: use it if it is this question
        book = AnswerBook.read(path)
        if book is not None and same_text(book.question.text, question.text) and book.question.model == question.model:
            return book
        raise SourceError(f"{path} holds another question; choose another --name") from None
    except OSError as exc:
        book = AnswerBook(path, question)
        book.problem = f"{path}: {exc.strerror or exc}; the answers are kept for this session only"
        return book
    return AnswerBook(path, question)

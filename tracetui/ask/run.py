"""Asking a question of many trials: a few requests in flight, every answer kept the moment it comes,
progress, cancellation, and a stop when the server goes away.

The caller's thread collects: it writes each answer to the book and reports it (`on_result`), so the
command line and the app's worker see answers in the order they come and nothing is lost when the run
ends early. Trials answered before (same prompt, same model) are reported at once without a request.
A trial whose request fails is one line (`Asked.failure`) and the run goes on; after `STOP_AFTER`
requests in a row that reach no server, the run stops with one line saying so. Cancelling (`cancelled()`
turns true) aborts the requests in flight and keeps whatever had arrived.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ..data.errors import SourceError
from .answers import AnswerBook, book_for
from .client import Cancelled, ChatClient, ContextTooLong, EndpointError, ServedModel, Unreachable, served_model
from .endpoint import Settings
from .index import fingerprint
from .prompt import REPLY_TOKENS, RESPONSE_SCHEMA, TrialPrompt, budget_for, build_prompt
from .verify import Answer, BadReply, check, one_line, parse_reply

if TYPE_CHECKING:
    from ..data.session import Session

STOP_AFTER = 3
"""Requests in a row (beyond those in flight) that reach no server before the run stops."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where a question goes: the client, the model (and its context), the budget and the book."""

    client: ChatClient
    model: ServedModel
    budget: int
    note: str
    """What the user should know about the budget (see `prompt.budget_for`), or ""."""
    book: AnswerBook


def findings_evidence(session: Session, trial: int) -> list[int]:
    """The messages a trial's findings point at, found on the spot (a long trial keeps them)."""
    from ..data.findings_index import trial_findings

    return [finding.message for finding in trial_findings(session, trial)]


def connect(settings: Settings, question: str, name: str | None = None) -> Target:
    """Ask the server which model it serves and how long its context is, and open the question's book;
    EndpointError when the server cannot be asked, SourceError for a name that cannot be used."""
    client = ChatClient(settings.endpoint, settings.timeout)
    model = served_model(client)
    budget, note = budget_for(model.context, settings.max_tokens_per_trial)
    return Target(client, model, budget, note, book_for(question, model.id, name))


@dataclass(frozen=True, slots=True)
class Asked:
    """What became of one trial."""

    trial: int
    answer: Answer | None = None
    cached: bool = False
    """Answered before: no request was made."""
    failure: str | None = None
    """One line, when no answer came."""
    unreachable: bool = False
    digest: str = ""


@dataclass(frozen=True, slots=True)
class Summary:
    total: int
    answered: int
    """Answers that came from the model in this run."""
    cached: int
    failed: int
    stopped: str | None = None
    """Why the run stopped before the end (the server went away)."""
    cancelled: bool = False

    @property
    def done(self) -> int:
        return self.answered + self.cached + self.failed


class AskRun:
    """Ask `book`'s question of `trials` through `client`, `parallel` requests at a time, each trial's
    text within `budget` tokens; `evidence(trial)` gives the messages a long trial keeps (its findings')."""

    def __init__(
        self,
        session: Session,
        trials: Sequence[int],
        book: AnswerBook,
        client: ChatClient,
        budget: int,
        parallel: int,
        evidence: Callable[[int], Iterable[int]] | None = None,
    ) -> None:
        self.session = session
        self.trials = [int(t) for t in trials]
        self.book = book
        self.client = client
        self.budget = budget
        self.parallel = max(1, parallel)
        self.evidence = evidence or partial(findings_evidence, session)

    def run(self, on_result: Callable[[Asked], None], cancelled: Callable[[], bool] = lambda: False) -> Summary:
        counts = {"answered": 0, "cached": 0, "failed": 0}
        streak = 0
        last = ""
        stopped: str | None = None
        was_cancelled = False

        def take(asked: Asked) -> None:
            nonlocal streak, last
            if asked.answer is not None:
                streak = 0
                if not asked.cached:
                    self._keep(asked)
                counts["cached" if asked.cached else "answered"] += 1
            else:
                streak = streak + 1 if asked.unreachable else 0
                last = asked.failure or ""
                counts["failed"] += 1
            on_result(asked)

        waiting = iter(self.trials)
        running: set[Future[Asked]] = set()
        pool = ThreadPoolExecutor(self.parallel, thread_name_prefix="tracetui-ask")
        try:
            while True:
                while len(running) < 2 * self.parallel and stopped is None:
                    trial = next(waiting, None)
                    if trial is None:
                        break
                    known = self.book.known(fingerprint(self.session, trial), self.budget)
                    if known is not None:
                        take(Asked(trial, known, cached=True))
                    else:
                        running.add(pool.submit(self._ask, trial))
                if not running:
                    break
                finished, running = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
                for future in finished:
                    take(future.result())
                if cancelled():
                    was_cancelled = True
                    break
                if streak >= STOP_AFTER + self.parallel:
                    kept = counts["answered"] + counts["cached"]
                    stopped = f"{self.client.endpoint.url} stopped answering ({last}); {kept:,} answers kept"
                    break
        finally:
            self.client.abort()  # what is still in flight fails at once
            for future in running:
                if future.cancel():  # not started
                    continue
                asked = future.result()
                if asked.answer is not None:  # it arrived as the run ended: kept all the same
                    take(asked)
            pool.shutdown(wait=True, cancel_futures=True)
        return Summary(len(self.trials), counts["answered"], counts["cached"], counts["failed"], stopped, was_cancelled)

    def unanswered(self) -> list[int]:
        """The trials not answered before (the others are not asked again)."""
        return [t for t in self.trials if self.book.known(fingerprint(self.session, t), self.budget) is None]

    def _keep(self, asked: Asked) -> None:
        assert asked.answer is not None
        info = self.session.info(asked.trial)
        about = {"dataset": info.dataset, "trial_name": info.trial_name, "task": info.task, "model": info.model}
        self.book.add(fingerprint(self.session, asked.trial), asked.digest, self.budget, asked.answer, about)

    def prompt(self, trial: int, budget: int | None = None) -> TrialPrompt:
        return build_prompt(
            self.session, trial, self.book.question.text, budget or self.budget, lambda: self.evidence(trial)
        )

    def _ask(self, trial: int) -> Asked:
        """One trial, in a worker thread: never raises."""
        try:
            prompt = self.prompt(trial)
            cached = self.book.cached(prompt.digest)
            if cached is not None:
                return Asked(trial, cached, cached=True, digest=prompt.digest)
            model = self.book.question.model
            try:
                completion = self.client.chat(model, prompt.messages, REPLY_TOKENS, RESPONSE_SCHEMA)
            except ContextTooLong:  # the estimate of its tokens was short: half the text
                prompt = self.prompt(trial, self.budget // 2)
                completion = self.client.chat(model, prompt.messages, REPLY_TOKENS, RESPONSE_SCHEMA)
            try:
                reply = parse_reply(completion.text)
            except BadReply as exc:
                cut = " (it stopped at the reply's token limit)" if completion.truncated else ""
                return Asked(trial, failure=f"{exc}{cut}")
            answer = check(reply, prompt.texts, prompt.contents, prompt.verifier)
            return Asked(trial, answer, digest=prompt.digest)
        except Cancelled:
            return Asked(trial, failure="cancelled")
        except Unreachable as exc:
            return Asked(trial, failure=str(exc), unreachable=True)
        except (EndpointError, SourceError) as exc:
            return Asked(trial, failure=str(exc))
        except Exception as exc:  # a trial that cannot be read is one failure, not the end of the run
            return Asked(trial, failure=one_line(f"{type(exc).__name__}: {exc}", 200))

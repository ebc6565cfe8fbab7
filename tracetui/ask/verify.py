"""The model's reply read defensively, and its evidence checked against the trial.

A server that enforces the JSON schema sends the object alone; others may wrap it in prose, a code
fence or reasoning, spell the verdict their way or send the message number as text: all of that is
read. The quote is then looked for in the trial the way a finding's evidence is found in the
conversation (`data.search.loose_literal`: literal text, any run of whitespace for a run of
whitespace, and case ignored; `...` in a quote stands for left-out text): first in the message the
model cited, then, where it miscounted, in the message that does hold it, which is cited instead.
A quote found nowhere makes the answer `unverified`, which never counts as a `yes`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..data.search import loose_literal
from ..trace.actions import split_think
from ..trace.sanitize import sanitize

VERDICTS = ("yes", "no", "unclear")
VALUES = ("yes", "no", "unclear", "unverified")
"""An answer's value, as the facet and filters know it: the verdict when its quote is in the trial."""
MIN_QUOTE = 8
"""Characters a quote needs (whitespace aside) to count as evidence: "the" is everywhere."""
MAX_QUOTE = 300
MAX_REASON = 400
_SYNONYMS = {"true": "yes", "y": "yes", "false": "no", "n": "no", "unknown": "unclear", "uncertain": "unclear"}
_ELLIPSIS = re.compile(r"\.{3,}|…|\[\s*…\s*\]|\[\s*\.\.\.\s*\]")
_QUOTES = "\"'“”‘’«»` "
_DECODER = json.JSONDecoder()
"""Its `raw_decode` finds an object among prose (orjson has no such call)."""


class BadReply(ValueError):
    """The reply holds no answer; the text is one line for the user."""


@dataclass(frozen=True, slots=True)
class Reply:
    verdict: str
    message: int | None
    quote: str
    reason: str


@dataclass(frozen=True, slots=True)
class Answer:
    verdict: str
    """What the model said: yes, no or unclear."""
    value: str
    """One of VALUES: the verdict, or `unverified` when its quote is not in the trial."""
    message: int | None
    """The message that holds the quote (None: not found, or in the verifier's result)."""
    cited: int | None
    """The message the model cited."""
    quote: str
    reason: str
    in_verifier: bool = False
    """The quote is in the verifier's result (the trial's text before its messages)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "value": self.value,
            "message": self.message,
            "cited": self.cited,
            "quote": self.quote,
            "reason": self.reason,
            "in_verifier": self.in_verifier,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Answer:
        value = data["value"]
        if value not in VALUES or data["verdict"] not in VERDICTS:
            raise ValueError(f"not an answer value: {value!r}")
        return cls(
            data["verdict"],
            value,
            _number(data.get("message")),
            _number(data.get("cited")),
            str(data.get("quote") or ""),
            str(data.get("reason") or ""),
            bool(data.get("in_verifier")),
        )


def parse_reply(text: str) -> Reply:
    """The answer in a reply's text; BadReply when it holds none."""
    _, body = split_think(text)
    data = _first_object(body) or _first_object(text)
    if data is None:
        raise BadReply(f"the reply is not the JSON answer asked for: {one_line(text, 80)!r}")
    verdict = _verdict(data.get("verdict", data.get("answer")))
    if verdict is None:
        raise BadReply(f"the reply has no yes / no / unclear verdict: {one_line(str(data), 80)!r}")
    return Reply(
        verdict,
        _number(data.get("message", data.get("message_number"))),
        one_line(str(data.get("quote") or data.get("evidence") or ""), MAX_QUOTE),
        one_line(str(data.get("reason") or data.get("why") or ""), MAX_REASON),
    )


def check(reply: Reply, texts: Mapping[int, str], contents: Sequence[str], verifier: str) -> Answer:
    """The answer `reply` gives once its quote is looked for: in the cited message, then in the others
    nearest first (`texts`: what the model was shown of each; `contents`: every message's full text),
    then in the verifier's result."""
    fragments = quote_fragments(reply.quote)
    if sum(len("".join(f.split())) for f in fragments) < MIN_QUOTE:
        value = "unclear" if reply.verdict == "unclear" else "unverified"
        return Answer(reply.verdict, value, None, reply.message, reply.quote, reply.reason)
    patterns = [re.compile(loose_literal(fragment), re.IGNORECASE) for fragment in fragments]
    cited = reply.message
    for index in _nearest(cited, len(contents)):
        forms = (texts.get(index), sanitize(contents[index] or ""))
        if any(form is not None and _holds(form, patterns) for form in forms):
            return Answer(reply.verdict, reply.verdict, index, cited, reply.quote, reply.reason)
    if _holds(verifier, patterns):
        return Answer(reply.verdict, reply.verdict, None, cited, reply.quote, reply.reason, in_verifier=True)
    return Answer(reply.verdict, "unverified", None, cited, reply.quote, reply.reason)


def quote_fragments(quote: str) -> list[str]:
    """The pieces of a quote to find in order: split where it says text was left out, stripped of the
    quotation marks a model puts around it."""
    pieces = (piece.strip().strip(_QUOTES).strip() for piece in _ELLIPSIS.split(quote))
    return [piece for piece in pieces if piece]


def quote_pattern(quote: str) -> re.Pattern[str] | None:
    """A pattern matching each piece of a quote, for highlighting it in the conversation."""
    fragments = quote_fragments(quote)
    if not fragments:
        return None
    return re.compile("|".join(f"(?:{loose_literal(fragment)})" for fragment in fragments), re.IGNORECASE)


def one_line(text: str, limit: int) -> str:
    """Untrusted text as one inert line of at most `limit` characters."""
    line = " ".join(sanitize(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _holds(text: str, patterns: Iterable[re.Pattern[str]]) -> bool:
    """Whether every pattern matches in `text`, each after the one before."""
    position = 0
    for pattern in patterns:
        found = pattern.search(text, position)
        if found is None:
            return False
        position = found.end()
    return True


def _nearest(cited: int | None, count: int) -> list[int]:
    """Message indices, the cited one first, then by distance from it (earlier first on a tie)."""
    if cited is None or not 0 <= cited < count:
        return list(range(count))
    return sorted(range(count), key=lambda index: (abs(index - cited), index))


def _first_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text` (alone, fenced or among prose)."""
    start = text.find("{")
    while start >= 0:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def _verdict(value: object) -> str | None:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, str):
        return None
    word = value.strip().strip(_QUOTES + ".!").lower()
    word = _SYNONYMS.get(word, word)
    return word if word in VERDICTS else None


def _number(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str):
        found = re.search(r"\d{1,9}", value)
        return int(found.group()) if found else None
    return None

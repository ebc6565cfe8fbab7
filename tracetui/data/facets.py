"""Faceted filtering over trials: masks and counts with numpy on integer codes.

Within a facet the selected values are OR-ed, across facets AND-ed; each facet's counts are computed
with every *other* facet applied, so the sidebar shows what each click would give.
"""

from __future__ import annotations

import difflib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .errors import SourceError
from .facet_names import ASK_PREFIX, FACET_NAMES
from .trials import OUTCOMES, Trials

NULL_LABEL = "(none)"
_NAME_ALIASES = {
    "model_provider": "model_provider",
    "trace_source": "trace_source",
    "failed-test": "failed_test",
    "findings": "finding",
    "task-health": "task_health",
    "health": "task_health",
    "labels": "label",
    "outcomes": "outcome",
    "models": "model",
    "tasks": "task",
}


@dataclass(slots=True)
class Facet(ABC):
    """A filterable property of the trials: its values (`labels`, a value's code is its index) and which
    trials have each. `SingleFacet` gives every trial one value at most, `MultiFacet` any number."""

    name: str
    title: str
    labels: list[str]

    def code_of(self, label: str) -> int | None:
        try:
            return self.labels.index(label)
        except ValueError:
            return None

    @abstractmethod
    def mask(self, selected: list[int], count: int) -> np.ndarray:
        """Which of the `count` trials have any of the `selected` codes."""

    @abstractmethod
    def counts(self, visible: np.ndarray) -> np.ndarray:
        """Per code, how many of the `visible` trials (a bool mask) have it."""


@dataclass(slots=True)
class SingleFacet(Facet):
    """One value per trial, or none: model, task, result, outcome, dataset…"""

    codes: np.ndarray
    """One code per trial (-1: no value)."""

    def mask(self, selected: list[int], count: int) -> np.ndarray:
        return np.isin(self.codes, np.asarray(selected, dtype=np.int64))

    def counts(self, visible: np.ndarray) -> np.ndarray:
        codes = self.codes[visible]
        return np.bincount(codes[codes >= 0], minlength=len(self.labels))


@dataclass(slots=True)
class MultiFacet(Facet):
    """Any number of values per trial: labels, failed tests, findings, trace sources."""

    trials: np.ndarray
    codes: np.ndarray
    """With `trials`, one (trial, code) pair per value a trial has."""

    def mask(self, selected: list[int], count: int) -> np.ndarray:
        out = np.zeros(count, dtype=bool)
        out[self.trials[np.isin(self.codes, np.asarray(selected, dtype=np.int64))]] = True
        return out

    def counts(self, visible: np.ndarray) -> np.ndarray:
        return np.bincount(self.codes[visible[self.trials]], minlength=len(self.labels))


@dataclass(slots=True)
class FilterState:
    """What the user chose: facet values by label (stable across sessions) and a name filter."""

    selected: dict[str, frozenset[str]] = field(default_factory=dict)
    text: str = ""
    excluded: dict[str, frozenset[str]] = field(default_factory=dict)
    """Facet values whose trials are left out (`--exclude`), whatever else is selected."""

    def toggled(self, facet: str, label: str) -> FilterState:
        current = self.selected.get(facet, frozenset())
        chosen = current - {label} if label in current else current | {label}
        selected = {**self.selected, facet: chosen}
        return replace(self, selected={k: v for k, v in selected.items() if v})

    def describe(self) -> str:
        parts = [f"{name}={'|'.join(sorted(values))}" for name, values in self.selected.items()]
        parts += [f"{name}!={'|'.join(sorted(values))}" for name, values in self.excluded.items()]
        if self.text:
            parts.append(f"name~{self.text}")
        return " ".join(parts)

    def to_json(self) -> dict[str, object]:
        """Every field as JSON values: the filters of the view saved per dataset."""
        return {
            "filters": {name: sorted(values) for name, values in self.selected.items()},
            "text": self.text,
            "excluded": {name: sorted(values) for name, values in self.excluded.items()},
        }

    @classmethod
    def from_json(cls, data: object, facets: Mapping[str, Facet]) -> FilterState:
        """The state `to_json` gave, keeping only the values `facets` still have (none for bad JSON)."""
        data = data if isinstance(data, dict) else {}
        text = data.get("text")
        return cls(
            selected=_known_values(data.get("filters"), facets),
            text=text if isinstance(text, str) else "",
            excluded=_known_values(data.get("excluded"), facets),
        )


def _known_values(saved: object, facets: Mapping[str, Facet]) -> dict[str, frozenset[str]]:
    """Facet name → the saved values the facet still has."""
    kept: dict[str, frozenset[str]] = {}
    for name, values in saved.items() if isinstance(saved, dict) else ():
        facet = facets.get(name)
        if facet is not None and isinstance(values, list):
            known = frozenset(v for v in values if isinstance(v, str) and facet.code_of(v) is not None)
            if known:
                kept[name] = known
    return kept


@dataclass(slots=True)
class FacetResult:
    visible: np.ndarray  # bool mask over trials
    counts: dict[str, np.ndarray]


class FacetIndex:
    """All facets of a session's trials."""

    def __init__(self, trials: Trials, dataset_names: list[str]) -> None:
        self.trials = trials
        count = len(trials)
        self.count = count

        def labelled(column: str, title: str) -> SingleFacet:
            labels = [NULL_LABEL if v is None else v for v in trials.labels[column]]
            return SingleFacet(column, title, labels, trials.codes[column])

        self.facets: dict[str, Facet] = {
            "outcome": SingleFacet("outcome", "Outcome", list(OUTCOMES), trials.outcome.astype(np.int32)),
            "result": labelled("result", "Result"),
            "model": labelled("model", "Model"),
            "task": labelled("task", "Task"),
            "agent": labelled("agent", "Agent"),
            "model_provider": labelled("model_provider", "Provider"),
            "trace_source": self._trace_source_facet(),
            "dataset": SingleFacet("dataset", "Dataset", list(dataset_names), trials.dataset.astype(np.int32)),
        }
        self._name_labels = (trials.labels["task"], trials.labels["trial_name"])

    def add(self, facet: Facet) -> None:
        """Register a facet computed elsewhere (failed tests, labels, search matches)."""
        self.facets[facet.name] = facet

    def single(self, name: str) -> SingleFacet:
        """A facet with one value per trial (the trials' own columns: model, task, dataset…)."""
        facet = self.facets[name]
        if not isinstance(facet, SingleFacet):
            raise TypeError(f"facet {name!r} has several values per trial")
        return facet

    def _trace_source_facet(self) -> MultiFacet:
        """Multi-valued: every trial has `main`; trials with sub-agents also have their kinds."""
        trials = self.trials
        labels = [NULL_LABEL if v is None else v for v in trials.labels["trace_source"]]
        if "main" not in labels:
            labels.append("main")
        main = labels.index("main")
        owners = np.repeat(np.arange(self.count), np.diff(trials.sub_offsets))
        has_main = np.diff(trials.main_offsets) > 0
        trial_index = np.concatenate([np.nonzero(has_main)[0], owners])
        codes = np.concatenate([np.full(int(has_main.sum()), main), trials.sub_sources])
        # distinct (trial, kind) pairs by a sort of one key: np.unique imports numpy.ma (~25 ms at start)
        key = np.sort(trial_index.astype(np.int64) * len(labels) + codes)
        key = key[np.concatenate([[True], key[1:] != key[:-1]])] if len(key) else key
        return MultiFacet("trace_source", "Trace source", labels, key // len(labels), key % len(labels))

    def text_mask(self, text: str) -> np.ndarray | None:
        """Trials whose task or trial name contains `text` (case-insensitive); None when no text."""
        needle = text.strip().lower()
        if not needle:
            return None
        mask = np.zeros(self.count, dtype=bool)
        for column, labels in zip(("task", "trial_name"), self._name_labels):
            hits = [i for i, label in enumerate(labels) if label and needle in label.lower()]
            mask |= np.isin(self.trials.codes[column], hits)
        return mask

    def _mask(self, name: str, values: frozenset[str]) -> np.ndarray | None:
        """Trials with any of `values` in facet `name`; None for a facet not (yet) registered."""
        facet = self.facets.get(name)
        if facet is None or not values:
            return None
        codes = [c for c in (facet.code_of(v) for v in values) if c is not None]
        return facet.mask(codes, self.count)

    def values(self) -> dict[str, list[str]]:
        """Every registered facet's values, for `resolve_filters`."""
        return {name: list(facet.labels) for name, facet in self.facets.items()}

    def apply(self, state: FilterState, extra: np.ndarray | None = None) -> FacetResult:
        base = np.ones(self.count, dtype=bool)
        text = self.text_mask(state.text)
        if text is not None:
            base &= text
        if extra is not None:
            base &= extra
        for name, values in state.excluded.items():
            mask = self._mask(name, values)
            if mask is not None:
                base &= ~mask
        masks: dict[str, np.ndarray] = {}
        for name, values in state.selected.items():
            mask = self._mask(name, values)
            if mask is not None:
                masks[name] = mask
        visible = base.copy()
        for mask in masks.values():
            visible &= mask
        counts = {}
        for name, facet in self.facets.items():
            others = base.copy()
            for other, mask in masks.items():
                if other != name:
                    others &= mask
            counts[name] = facet.counts(others)
        return FacetResult(visible, counts)


@dataclass(frozen=True, slots=True)
class FilterArg:
    """One `FACET=VALUE` of the command line, checked for shape but not yet against the data."""

    option: str
    facet: str
    """The facet's own name (`model_provider` for `provider`)."""
    value: str
    typed: str = ""
    """The facet name as the user wrote it, for messages."""

    def __str__(self) -> str:
        return f"{self.option} {self.typed or self.facet}={self.value}"


def parse_filter_args(values: Sequence[str], option: str = "--filter") -> list[FilterArg]:
    """`FACET=VALUE` strings -> FilterArgs with facet names made canonical; SourceError (one line) for
    a malformed one or an unknown facet, naming the close ones."""
    parsed = []
    for text in values:
        name, sep, value = text.partition("=")
        name = name.strip()
        if not sep or not name:
            raise SourceError(f"{option} {text!r}: expected FACET=VALUE, e.g. model=gpt-4o")
        key = name.lower().replace(" ", "_")
        canonical = FACET_NAMES.get(key) or _NAME_ALIASES.get(key)
        if key.startswith(ASK_PREFIX) and key[len(ASK_PREFIX) :].strip("_"):
            canonical = ASK_PREFIX + key[len(ASK_PREFIX) :].strip("_")
        if canonical is None:
            raise SourceError(
                f"{option} {text}: no facet {name!r}{_suggest(name, list(FACET_NAMES))}; "
                f"facets: {', '.join(FACET_NAMES)}, {ASK_PREFIX}NAME"
            )
        parsed.append(FilterArg(option, canonical, value, name))
    return parsed


def resolve_filters(args: Sequence[FilterArg], known: Mapping[str, Sequence[str]], text: str = "") -> FilterState:
    """The FilterState the arguments mean, each value resolved against the facet's `known` values:
    exact match first, then case-insensitive, then a unique case-insensitive suffix (at a `/`, `-`,
    `_` or `.` boundary), then a unique case-insensitive substring, so `model=gpt-5-mini` finds
    `openai/gpt-5-mini-2025-08-07`. Raises SourceError naming the candidates when a value matches
    several values or none."""
    selected: dict[str, set[str]] = {}
    excluded: dict[str, set[str]] = {}
    for arg in args:
        values = [v for v in known.get(arg.facet, ()) if v is not None]
        chosen = resolve_value(arg, values)
        (excluded if arg.option == "--exclude" else selected).setdefault(arg.facet, set()).add(chosen)
    return FilterState(
        selected={k: frozenset(v) for k, v in selected.items()},
        text=text,
        excluded={k: frozenset(v) for k, v in excluded.items()},
    )


def resolve_value(arg: FilterArg, values: Sequence[str]) -> str:
    """One value of a facet, as `resolve_filters` resolves it."""
    wanted = arg.value.strip()
    if arg.value in values:
        return arg.value
    lower = wanted.lower()
    for matches in (
        [v for v in values if v.lower() == lower],
        [v for v in values if v.lower().endswith(lower) and (len(v) == len(lower) or v[-len(lower) - 1] in "/-_.:")],
        [v for v in values if lower and lower in v.lower()],
    ):
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            shown = ", ".join(sorted(matches)[:6]) + (", …" if len(matches) > 6 else "")
            raise SourceError(f"{arg}: matches {len(matches)} values ({shown}); be more specific")
    if len(values) <= 8:
        listed = ", ".join(values) or "(none in this data)"
        raise SourceError(f"{arg}: no such value{_suggest(wanted, values)}; one of: {listed}")
    raise SourceError(f"{arg}: no such value{_suggest(wanted, values)}")


def _suggest(word: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=4, cutoff=0.5)
    if not close:
        lowered = {c.lower(): c for c in candidates}
        close = [lowered[c] for c in difflib.get_close_matches(word.lower(), list(lowered), n=4, cutoff=0.4)]
    return f" (did you mean {', '.join(close)}?)" if close else ""

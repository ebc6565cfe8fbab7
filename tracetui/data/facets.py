"""Faceted filtering over trials: masks and counts with numpy on integer codes.

Within a facet the selected values are OR-ed, across facets AND-ed; each facet's counts are computed
with every *other* facet applied, so the sidebar shows what each click would give.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .trials import OUTCOMES, Trials

NULL_LABEL = "(none)"


@dataclass(slots=True)
class Facet:
    name: str
    title: str
    labels: list[str]
    codes: np.ndarray | None = None  # one code per trial (-1: no value)
    pairs: tuple[np.ndarray, np.ndarray] | None = None  # (trial, code) for multi-valued facets

    def code_of(self, label: str) -> int | None:
        try:
            return self.labels.index(label)
        except ValueError:
            return None

    def mask(self, selected: list[int], count: int) -> np.ndarray:
        chosen = np.asarray(selected, dtype=np.int64)
        if self.codes is not None:
            return np.isin(self.codes, chosen)
        assert self.pairs is not None  # a facet has codes or pairs
        trials, codes = self.pairs
        out = np.zeros(count, dtype=bool)
        out[trials[np.isin(codes, chosen)]] = True
        return out

    def counts(self, visible: np.ndarray) -> np.ndarray:
        if self.codes is not None:
            codes = self.codes[visible]
            return np.bincount(codes[codes >= 0], minlength=len(self.labels))
        assert self.pairs is not None  # a facet has codes or pairs
        trials, codes = self.pairs
        return np.bincount(codes[visible[trials]], minlength=len(self.labels))


@dataclass(slots=True)
class FilterState:
    """What the user chose: facet values by label (stable across sessions) and a name filter."""

    selected: dict[str, frozenset[str]] = field(default_factory=dict)
    text: str = ""

    def toggled(self, facet: str, label: str) -> FilterState:
        current = self.selected.get(facet, frozenset())
        chosen = current - {label} if label in current else current | {label}
        selected = {**self.selected, facet: chosen}
        return FilterState({k: v for k, v in selected.items() if v}, self.text)

    def describe(self) -> str:
        parts = [f"{name}={'|'.join(sorted(values))}" for name, values in self.selected.items()]
        if self.text:
            parts.append(f"name~{self.text}")
        return " ".join(parts)


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

        def labelled(column: str, title: str) -> Facet:
            labels = [NULL_LABEL if v is None else v for v in trials.labels[column]]
            return Facet(column, title, labels, codes=trials.codes[column])

        self.facets: dict[str, Facet] = {
            "outcome": Facet("outcome", "Outcome", list(OUTCOMES), codes=trials.outcome.astype(np.int32)),
            "result": labelled("result", "Result"),
            "model": labelled("model", "Model"),
            "task": labelled("task", "Task"),
            "agent": labelled("agent", "Agent"),
            "model_provider": labelled("model_provider", "Provider"),
            "trace_source": self._trace_source_facet(),
            "dataset": Facet("dataset", "Dataset", list(dataset_names), codes=trials.dataset.astype(np.int32)),
        }
        self._name_labels = (trials.labels["task"], trials.labels["trial_name"])

    def add(self, facet: Facet) -> None:
        """Register a facet computed elsewhere (failed tests, labels, search matches)."""
        self.facets[facet.name] = facet

    def _trace_source_facet(self) -> Facet:
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
        pairs = np.unique(np.stack([trial_index, codes]), axis=1) if len(codes) else np.zeros((2, 0), np.int64)
        return Facet("trace_source", "Trace source", labels, pairs=(pairs[0], pairs[1]))

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

    def apply(self, state: FilterState, extra: np.ndarray | None = None) -> FacetResult:
        base = np.ones(self.count, dtype=bool)
        text = self.text_mask(state.text)
        if text is not None:
            base &= text
        if extra is not None:
            base &= extra
        masks: dict[str, np.ndarray] = {}
        for name, values in state.selected.items():
            facet = self.facets.get(name)
            if facet is None or not values:
                continue
            codes = [c for c in (facet.code_of(v) for v in values) if c is not None]
            masks[name] = facet.mask(codes, self.count)
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

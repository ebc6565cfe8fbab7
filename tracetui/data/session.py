"""A session: one or more opened datasets seen as one list of trials, with facets and histories.

This is the only object the UI talks to; it hides pyarrow and the conversion cache.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..trace.model import TrialHistory
from .cache import cached_dir, ensure_converted
from .dataset import Dataset
from .facets import FacetIndex
from .history import rebuild_history
from .ordering import Ordering
from .sources import ResolvedSource, SourceSpec, resolve
from .trials import OUTCOMES, Trials, build_trials

Progress = Callable[[float, str], None]


@dataclass(frozen=True, slots=True)
class TrialInfo:
    """What the list and the header show of one trial."""

    id: int
    dataset: str
    task: str
    trial_name: str
    run_id: str
    model: str
    agent: str
    provider: str
    result: str | None
    outcome: str
    reward: float
    episodes: int
    messages: int
    size: int
    date: str


class Session:
    def __init__(self, datasets: list[Dataset]) -> None:
        self.datasets = datasets
        self.trials: Trials = build_trials(datasets)
        names = _unique_names([ds.source.short_name for ds in datasets])
        self.dataset_names = names
        self.facets = FacetIndex(self.trials, names)
        self.ordering = Ordering(self.trials)
        self._histories: OrderedDict[int, TrialHistory] = OrderedDict()

    @property
    def num_rows(self) -> int:
        return sum(ds.num_rows for ds in self.datasets)

    def __len__(self) -> int:
        return len(self.trials)

    def info(self, trial: int) -> TrialInfo:
        t = self.trials
        label = t.label
        return TrialInfo(
            id=trial,
            dataset=self.dataset_names[int(t.dataset[trial])],
            task=label("task", trial) or "",
            trial_name=label("trial_name", trial) or "",
            run_id=label("run_id", trial) or "",
            model=label("model", trial) or "",
            agent=label("agent", trial) or "",
            provider=label("model_provider", trial) or "",
            result=label("result", trial),
            outcome=OUTCOMES[int(t.outcome[trial])],
            reward=float(t.reward[trial]),
            episodes=int(t.episodes[trial]),
            messages=int(t.messages[trial]),
            size=int(t.size[trial]),
            date=t.date[trial],
        )

    def history(self, trial: int) -> TrialHistory:
        """The trial's rebuilt history (a small LRU keeps recent trials for quick back-and-forth)."""
        cached = self._histories.get(trial)
        if cached is not None:
            self._histories.move_to_end(trial)
            return cached
        t = self.trials
        ds = self.datasets[int(t.dataset[trial])]
        rows = [int(r) for r in t.rows(trial)]
        episodes = ds.meta.column("episode_num").take(rows).to_pylist() if rows else []
        history = rebuild_history(ds, rows, episodes, t.sub_agent_rows(trial))
        self._histories[trial] = history
        if len(self._histories) > 16:
            self._histories.popitem(last=False)
        return history

    def verifier_output(self, trial: int) -> str | None:
        t = self.trials
        ds = self.datasets[int(t.dataset[trial])]
        for row in reversed(t.rows(trial)):
            text = ds.verifier_output(int(row))
            if text is not None:
                return text
        return None

    def find_trial(self, name: str) -> int | None:
        """A trial by its trial_name (or task), first match in list order."""
        for column in ("trial_name", "task"):
            labels = self.trials.labels[column]
            if name in labels:
                hits = np.nonzero(self.trials.codes[column] == labels.index(name))[0]
                if len(hits):
                    return int(hits[0])
        return None


def _unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def prepare(specs: list[SourceSpec]) -> list[ResolvedSource]:
    """Resolve and validate every source up front (downloads happen here), raising SourceError."""
    resolved = []
    for spec in specs:
        source = resolve(spec)
        if cached_dir(source.files) is None:  # a finished conversion needs no second look at the files
            from .convert import check_files

            check_files(source.files)
        resolved.append(source)
    return resolved


def all_cached(sources: list[ResolvedSource]) -> bool:
    """Whether every source is converted already, so that opening takes a fraction of a second."""
    return all(cached_dir(source.files) is not None for source in sources)


def open_session(sources: list[ResolvedSource], progress: Progress | None = None) -> Session:
    """Convert what is not cached yet (with progress), then map every dataset."""
    datasets = []
    for index, source in enumerate(sources):

        def step(fraction: float, message: str, index: int = index) -> None:
            if progress is not None:
                progress((index + fraction) / len(sources), message)

        folder = ensure_converted(source.files, step)
        datasets.append(Dataset(source, folder))
    return Session(datasets)

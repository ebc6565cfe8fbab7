"""A session: one or more opened datasets seen as one list of trials, with facets and histories.

This is the only object the UI talks to; it hides pyarrow, the conversion cache and the hub. `prepare`
and `open_session` are how the app and every command get one: each source goes to its kind
(`source_kinds`), which finds it, checks it and opens it. A dataset
may be read from the hub while it downloads (`remote`): the trial list, facets and stats work at once
from its metadata; a trial's text is `load`ed off the UI thread before it is shown; and when the local
copy is ready the app swaps it in (`use_local`), the same rows and so the same trials. `local_ready`
is set once every dataset is local: work that reads every row (search, indexes) waits for it while a
download runs (`wait_for_download`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..trace.model import StepMetrics, TrialHistory
from . import source_kinds
from .cache_folders import sweep
from .dataset import Storage
from .errors import naming
from .facets import FacetIndex, MultiFacet
from .history import rebuild_history
from .lru import LRU
from .ordering import Ordering
from .sources import Progress, ResolvedSource, SourceSpec
from .trial_ids import Regrown, StableIds, reordered
from .trials import OUTCOMES, Trials, build_trials
from .usage import TrialUsage, UsageTable

if TYPE_CHECKING:
    from .download import Download

HISTORIES = 16
"""Rebuilt histories kept for quick back-and-forth between recent trials."""


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


@dataclass(frozen=True, slots=True)
class Applied:
    """What `Session.apply` changed: trial ids whose trial changed or is new (the new ones are the last
    `added` ids); every other trial is as it was, under the same id."""

    changed: np.ndarray
    added: int


class Session:
    def __init__(self, datasets: list[Storage], order: np.ndarray | None = None) -> None:
        """`order`: the session id order of another session on the same data (see `apply`), for the
        worker processes that reopen it."""
        self.datasets = datasets
        self._build(order)
        self._histories: LRU[int, TrialHistory] = LRU(HISTORIES)
        self.local_ready = threading.Event()
        """Set once every dataset's text is on local disk (at once for local sources)."""
        self.download: Download | None = None
        """The background download of the remote datasets, while the app runs one."""
        self._mark_ready_if_local()

    def _build(self, order: np.ndarray | None = None) -> None:
        """The trials, facets and orderings of the datasets as they are, trials in id order."""
        trials = build_trials(self.datasets, lambda ds: ds.group())
        self._counts = [int(n) for n in np.bincount(trials.dataset, minlength=len(self.datasets))]
        if not hasattr(self, "ids"):
            self.ids = StableIds(self._counts)
        self.order = order if order is not None else self.ids.grow(self._counts)
        self.trials: Trials = trials if self.order is None else reordered(trials, self.order)
        self.dataset_names = _unique_names([ds.source.short_name for ds in self.datasets])
        self.facets = FacetIndex(self.trials, self.dataset_names)
        self.usage = UsageTable.of(self.datasets, self._counts, self.order)
        self.ordering = Ordering(self.trials, self.usage)

    def apply(
        self, updates: Mapping[int, Callable[[Storage], list[int] | Regrown]], new: Sequence[Storage] = ()
    ) -> Applied:
        """Take changes of the sources (a harbor job run goes on, a hub dataset's metadata comes in):
        `updates[d](dataset d)` updates a dataset in place (trials change or are added, none goes: the
        positions that changed, or where every trial went, `Regrown`), `new` datasets join at the end. Trials
        keep their ids; facets registered from outside the session (labels, indexes) stay, for the
        trials they knew (re-register them to cover the changed and new trials). Call it on the thread
        that reads the session, with no search or index build running over it."""
        before = self.trials
        extra = {n: f for n, f in self.facets.facets.items() if n not in FacetIndex(before, []).facets}
        changed: set[int] = set()
        old_total = self.ids.total
        for index, update in updates.items():
            done = update(self.datasets[index])
            if isinstance(done, Regrown):
                self.ids.remap(index, done)
                positions: Sequence[int] = done.changed.tolist()
            else:
                positions = done
            ids = self.ids.ids[index]
            changed |= {int(ids[p]) for p in positions if p < len(ids)}
        self.datasets.extend(new)
        self._build()
        changed |= set(range(old_total, self.ids.total))
        for facet in extra.values():
            if isinstance(facet, MultiFacet):
                self.facets.add(facet)
        for trial in changed:
            self._histories.discard(trial)
        return Applied(np.array(sorted(changed), dtype=np.int64), self.ids.total - old_total)

    def usage_of(self, trial: int) -> TrialUsage:
        """The trial's tokens, cost and timings (NaN where its source does not record them)."""
        return self.usage.trial(trial)

    def _message_metrics(self, trial: int, history: TrialHistory) -> tuple[StepMetrics | None, ...]:
        """Per message of `history`: what the model reported for the agent step that wrote it, for
        sources that record it (empty for the others); None for the other messages. An episode's own
        agent step writes its last message."""
        dataset = self.datasets[int(self.trials.dataset[trial])]
        metrics = dataset.episode_metrics(self.local_position(trial))
        if metrics is None:
            return ()
        found: list[StepMetrics | None] = [None] * len(history.messages)
        last = {m.episode: m.index for m in history.messages}
        for episode, index in last.items():
            if 0 <= episode < len(metrics) and history.messages[index].role == "assistant":
                found[index] = metrics[episode]
        return tuple(found)

    def problem(self, trial: int) -> str | None:
        """Why the trial could not be read (which file, and why), for sources that can say so."""
        dataset = int(self.trials.dataset[trial])
        problems = self.datasets[dataset].problems()
        if problems is None:
            return None
        return problems[self.local_position(trial)]

    def local_position(self, trial: int) -> int:
        """The trial's position among its dataset's trials (as the dataset's `group` lists them)."""
        ids = self.ids.ids[int(self.trials.dataset[trial])]
        position = int(np.searchsorted(ids, trial))  # a job folder's ids only grow
        return position if position < len(ids) and ids[position] == trial else int(np.flatnonzero(ids == trial)[0])

    @property
    def num_rows(self) -> int:
        return sum(ds.num_rows for ds in self.datasets)

    @property
    def notes(self) -> list[str]:
        """What opening skipped (bad JSON Lines lines), one line per file, to be said once."""
        return [note for ds in self.datasets for note in ds.notes]

    @property
    def growing(self) -> tuple[int, int] | None:
        """(files read, files in all) of the metadata still coming in, for the hub datasets opened on the
        first files of theirs (the list grows: `ripe`, `apply`); None once it is all in."""
        found = [progress for ds in self.datasets if (progress := ds.growing()) is not None]
        return (sum(p[0] for p in found), sum(p[1] for p in found)) if found else None

    def ripe(self) -> dict[int, Callable[[Storage], list[int] | Regrown]]:
        """Off the UI thread: the updates (for `apply`) of the datasets whose list can take the metadata
        that came in since (see `RemoteDataset.ripe`)."""
        return {index: _grow for index, ds in enumerate(self.datasets) if ds.ripe()}

    @property
    def remote(self) -> list[int]:
        """Indices of the datasets read from the hub."""
        return [index for index, ds in enumerate(self.datasets) if not ds.local]

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

    def _rows(self, trial: int) -> tuple[Storage, np.ndarray]:
        """The trial's dataset and all its rows (main and sub-agent)."""
        t = self.trials
        sub = t.sub_rows[t.sub_offsets[trial] : t.sub_offsets[trial + 1]]
        return self.datasets[int(t.dataset[trial])], np.concatenate([t.rows(trial), sub])

    def ready(self, trial: int) -> bool:
        """Whether the trial's text can be shown without waiting for the network."""
        if trial in self._histories:
            return True
        ds, rows = self._rows(trial)
        return ds.ready(rows)

    def fetch(self, trial: int) -> TrialHistory:
        """Fetch the trial's text if it is remote, and rebuild its history: the one call that waits for
        the network (call it off the UI thread; raises hub.Unreachable when the hub does not answer)."""
        ds, rows = self._rows(trial)
        ds.fetch(rows)
        return self.history(trial)

    def history(self, trial: int) -> TrialHistory:
        """The trial's rebuilt history (a small LRU keeps recent trials for quick back-and-forth). Never
        waits for the network: raises NotFetched for a remote trial not fetched yet (see `ready`, `fetch`)."""
        cached = self._histories.get(trial)
        if cached is not None:
            return cached
        t = self.trials
        ds = self.datasets[int(t.dataset[trial])]
        rows = [int(r) for r in t.rows(trial)]
        history = rebuild_history(ds, rows, t.episode_numbers(trial), t.sub_agent_rows(trial))
        metrics = self._message_metrics(trial, history)
        if metrics:
            history = replace(history, metrics=metrics)
        self._histories.put(trial, history)
        return history

    def verifier_output(self, trial: int) -> str | None:
        t = self.trials
        ds = self.datasets[int(t.dataset[trial])]
        for row in reversed(t.rows(trial)):
            text = ds.verifier_output(int(row))
            if text is not None:
                return text
        return None

    def recording(self, trial: int) -> Path | None:
        """The trial's terminal recording (an asciinema cast, played by `data.recordings`), or None.

        Only a harbor job folder keeps one (`<trial folder>/agent/recording.cast`, written by terminus-2);
        exported datasets drop it."""
        folder = self.trial_folder(trial)
        cast = None if folder is None else folder / "agent" / "recording.cast"
        return cast if cast is not None and cast.is_file() else None

    def trial_folder(self, trial: int) -> Path | None:
        """The trial's own folder, for a trial of a harbor job folder; None for datasets."""
        return self.datasets[int(self.trials.dataset[trial])].trial_folder(self.local_position(trial))

    def gather_verifier_logs(
        self, progress: Callable[[float], None] | None = None, cancelled: Callable[[], bool] | None = None
    ) -> None:
        """Before reading every trial's verifier log: a dataset read from the hub streams its verifier
        column once, keeping the log of each trial's last main row (the one `verifier_output` reads first)."""
        t = self.trials
        remote = self.remote
        for number, index in enumerate(remote):
            mine = np.nonzero((t.dataset == index) & (np.diff(t.main_offsets) > 0))[0]
            rows = t.main_rows[t.main_offsets[mine + 1] - 1]
            step = None if progress is None else (lambda f, n=number: progress((n + f) / len(remote)))
            self.datasets[index].keep_verifier_logs(rows, step, cancelled)

    def use_local(self, index: int, dataset: Storage, sizes: np.ndarray) -> None:
        """Swap the remote dataset `index` for its local copy: the same rows, so the same trials, now with
        exact text sizes (`sizes`, per trial of the dataset, from the local metadata)."""
        mine = self.ids.ids[index]  # the dataset's trials in its own order, as `sizes`
        if len(sizes) == len(mine):
            self.trials.size[mine] = sizes
        remote, self.datasets[index] = self.datasets[index], dataset
        remote.discard()
        self._mark_ready_if_local()

    def _mark_ready_if_local(self) -> None:
        if not self.remote:
            self.local_ready.set()

    def wait_for_download(self, waiting: Callable[[float], None] | None, cancelled: Callable[[], bool]) -> bool:
        """Wait while a download runs, calling `waiting(fraction)`; True once the text is local or will
        stay remote (no download, or it stopped), False when `cancelled()` first."""
        while not self.local_ready.is_set():
            download = self.download
            if download is None or not download.running:
                return True
            if cancelled():
                return False
            if waiting is not None:
                waiting(download.fraction)
            self.local_ready.wait(0.25)
        return True

    def find_trial(self, name: str) -> int | None:
        """A trial by its trial_name (or task), first match in list order."""
        for column in ("trial_name", "task"):
            labels = self.trials.labels[column]
            if name in labels:
                hits = np.nonzero(self.trials.codes[column] == labels.index(name))[0]
                if len(hits):
                    return int(hits[0])
        return None


def _grow(storage: Storage) -> list[int] | Regrown:
    return storage.grow()


def _unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def prepare(specs: list[SourceSpec], progressive: bool = False) -> list[ResolvedSource]:
    """Resolve and check every source up front, raising SourceError (see `source_kinds`).

    A hub dataset not yet converted is downloaded here (with huggingface_hub's progress bars), unless
    `progressive`: then it is left for `open_session` to read remotely while the app downloads it.
    """
    sweep()  # what processes that died left in the cache
    return [source for spec in specs for source in source_kinds.prepare(spec, download=not progressive)]


def all_cached(sources: list[ResolvedSource]) -> bool:
    """Whether every source opens at once: converted already, or read remotely with its metadata kept."""
    return all(source_kinds.kind_of(source).ready(source) for source in sources)


def open_session(
    sources: list[ResolvedSource],
    progress: Progress | None = None,
    cache_size: int | None = None,
    partial: bool = False,
) -> Session:
    """Every source opened by its kind (converting what is not cached yet, with progress) as one
    session; a hub source that is not downloaded is read remotely (`cache_size`: see `cache_folders`).
    `partial`: a hub dataset whose metadata takes a while opens on the files read so far (the app's list
    then grows: `Session.growing`); else it is read whole first."""
    datasets: list[Storage] = []
    for index, source in enumerate(sources):

        def step(fraction: float, message: str, index: int = index) -> None:
            if progress is not None:
                progress((index + fraction) / len(sources), message)

        with naming(source.display or source.dataset_id):
            datasets.append(source_kinds.kind_of(source).open(source, step, cache_size))
            if not partial:
                datasets[-1].complete()
    return Session(datasets)

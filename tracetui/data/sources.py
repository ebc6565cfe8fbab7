"""What a source is: what the user typed (`SourceSpec`) and where its data is (`ResolvedSource`, and for
a hub dataset `HubFiles`). Which kind of source a text is, and how each kind is opened, is
`source_kinds`' business; this module knows none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DATA_SUFFIXES = (".parquet", ".arrow", ".jsonl", ".json", ".ndjson")
Progress = Callable[[float, str], None]
"""What opening a source reports: (fraction done, what is being done)."""


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """A source as given on the command line."""

    source: str
    split: str = "train"
    revision: str | None = None
    config: str | None = None


@dataclass(frozen=True, slots=True)
class HubFiles:
    """A hub dataset's data files at one commit: what a remote read, a download or a cache key needs."""

    repo_id: str
    commit: str
    paths: tuple[str, ...]  # in the repo, in reading order
    sizes: tuple[int, ...]
    folder: Path  # the HF cache snapshot folder the files download into
    ref: str = "main"  # the branch or tag the commit was resolved from

    @property
    def local(self) -> tuple[Path, ...]:
        return tuple(self.folder / path for path in self.paths)

    @property
    def total(self) -> int:
        return sum(self.sizes)


@dataclass(frozen=True, slots=True)
class ResolvedSource:
    """Data files, the identity they are labelled and cached under, and the kind that opens them."""

    dataset_id: str  # the hub id, or the absolute local path
    revision: str | None  # the hub commit; None for local files
    files: tuple[Path, ...]  # on local disk (for a hub source: once downloaded)
    kind: str  # the name of the kind of source that opens it (`source_kinds.KINDS`)
    display: str = ""  # what the user typed, for the header
    hub_files: HubFiles | None = None  # a hub source's files (None for local files)
    origin: tuple[str, ...] = ()
    """What stays the same across new versions of the data (the repo or path, and the split asked for):
    a conversion of the same origin supersedes the older ones."""

    @property
    def downloaded(self) -> bool:
        """Whether every file is on local disk (a hub source may not be yet)."""
        return all(file.exists() for file in self.files)

    @property
    def short_name(self) -> str:
        """A short label for lists and facets: the dataset name without its org or folders."""
        name = self.dataset_id.rstrip("/").rsplit("/", 1)[-1]
        for suffix in DATA_SUFFIXES:
            name = name.removesuffix(suffix)
        return name or self.dataset_id

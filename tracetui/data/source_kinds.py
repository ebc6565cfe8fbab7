"""The kinds of source tracetui opens, one small strategy each, and the order they are asked in.

What the user typed goes to the first kind in `KINDS` that claims it. That kind finds the data
(`resolve`), makes sure it will open before anything is shown (`prepare`: the files checked, a hub
dataset downloaded first when asked) and opens it as the `Storage` a session reads (`open`: its
conversion from the cache, a new conversion, or the hub's files read remotely). `session.prepare` and
`session.open_session` are the only callers: the app and every command open sources through them, and
nothing else dispatches on the kind of a source.

To add a kind of source: a class with the members of `SourceKind`, listed in `KINDS` at its place.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .errors import SourceError, naming
from .hub_sources import HfPath, HubDataset
from .job_sources import JobFolders
from .layout import NoDataFiles
from .local_sources import DataFile, DatasetFolder, SavedDataset
from .sources import Progress, ResolvedSource, SourceSpec

if TYPE_CHECKING:
    from .dataset import Storage


class SourceKind(Protocol):
    """One kind of source, from what the user typed to the storage a session reads. Stateless: a
    `ResolvedSource` names its kind (`name`), into worker processes too."""

    name: str
    looks_for: str
    """For a kind that claims folders: what it looks for, named in the line for a folder no kind reads."""

    def claims(self, text: str, path: Path) -> bool:
        """Whether `text` (as typed, stripped; `path`: it as a path, `~` expanded, readable if it
        exists) is this kind of source. Cheap: no network, no heavy imports."""
        ...

    def resolve(self, spec: SourceSpec, path: Path) -> ResolvedSource:
        """Where the source's data is (SourceError when it is not there); downloads nothing."""
        ...

    def prepare(self, spec: SourceSpec, path: Path, download: bool) -> list[ResolvedSource]:
        """`resolve`, then make sure the source will open: its files checked, a hub dataset downloaded
        first when `download` (else left to be read remotely). A kept conversion needs neither. One
        source, or one per dataset it holds (a harbor jobs root: one per job)."""
        ...

    def ready(self, source: ResolvedSource) -> bool:
        """Whether `open` is quick: nothing to convert, download or read over the network."""
        ...

    def open(self, source: ResolvedSource, progress: Progress, cache_size: int | None) -> Storage:
        """The storage of a prepared source, converted first if needed (reporting `progress`);
        `cache_size` bounds the cache (`cache_folders`)."""
        ...


KINDS: tuple[SourceKind, ...] = (
    HfPath(),  # hf://datasets/org/name[@revision]/path: files of a hub dataset
    DataFile(),  # a parquet, arrow, json or jsonl file (and any text that names a missing path)
    SavedDataset(),  # a `datasets` save_to_disk folder
    JobFolders(),  # harbor job folders (a jobs root, a job, a trial): before DatasetFolder, which would
    # hand a jobs root's JSON files (config.json, result.json) to the split resolver as data files
    DatasetFolder(),  # any other folder: its data files in a dataset layout, as `datasets` finds them
    HubDataset(),  # org/name: a Hugging Face dataset id
)
BY_NAME = {kind.name: kind for kind in KINDS}


def kind_of(source: ResolvedSource) -> SourceKind:
    return BY_NAME[source.kind]


def resolve(spec: SourceSpec) -> ResolvedSource:
    """Where the data of `spec` is, as the kind that claims it finds it (nothing downloaded or checked)."""
    kind, path = _claimant(spec)
    with naming(spec.source.strip()):
        try:
            return kind.resolve(spec, path)
        except NoDataFiles:
            raise _nothing_here(path) from None


def prepare(spec: SourceSpec, download: bool) -> list[ResolvedSource]:
    """The sources `spec` names, resolved and prepared by its kind (`SourceKind.prepare`); an error names it."""
    kind, path = _claimant(spec)
    with naming(spec.source.strip()):
        try:
            return kind.prepare(spec, path, download)
        except NoDataFiles:
            raise _nothing_here(path) from None


def _claimant(spec: SourceSpec) -> tuple[SourceKind, Path]:
    text = spec.source.strip()
    if not text:
        raise SourceError("an empty source: give a hub id, an hf:// path, a file or a folder")
    path = Path(text).expanduser()
    if path.exists() and not os.access(path, os.R_OK):
        raise SourceError(f"{path}: permission denied")
    kind = next((kind for kind in KINDS if kind.claims(text, path)), None)
    if kind is None:
        raise SourceError(f"{text}: no such file, folder or Hugging Face dataset id")
    return kind, path


def _nothing_here(folder: Path) -> SourceError:
    """A folder none of the folder kinds reads: what tracetui looked for."""
    looked = [kind.looks_for for kind in KINDS if kind.looks_for]
    return SourceError(f"{folder.resolve()}: no dataset found (looked for {'; '.join(looked)})")

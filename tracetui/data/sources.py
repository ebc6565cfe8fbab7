"""Turn what the user typed (a hub id, an hf:// path, a file or a folder) into the data files of one split.

Which files make a split is decided by `datasets` (see `layout`). Hub datasets go through
`huggingface_hub` (see `hub`), so users get the normal HF cache, `HF_HOME`, `HF_TOKEN` and offline mode;
resolving a hub source downloads nothing: `prepare` downloads, or the app reads the files remotely
while it downloads them. We read the files with pyarrow ourselves (measured faster than
`datasets.load_dataset`, and it keeps one loading path for every source).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from .errors import SourceError, first_line
from .layout import folder_identity, recall, split_files

DATA_SUFFIXES = (".parquet", ".arrow", ".jsonl", ".json", ".ndjson")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


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
    """Data files, and the identity they are labelled and cached under."""

    dataset_id: str  # the hub id, or the absolute local path
    revision: str | None  # the hub commit; None for local files
    files: tuple[Path, ...]  # on local disk (for a hub source: once downloaded)
    display: str = ""  # what the user typed, for the header
    hub: HubFiles | None = None  # a hub source's files in the repo

    @property
    def repo(self) -> HubFiles:
        """The hub files of a source known to come from the hub."""
        assert self.hub is not None, f"{self.dataset_id} is not a hub dataset"
        return self.hub

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


def resolve(spec: SourceSpec) -> ResolvedSource:
    """Find the data files of `spec`, downloading hub files into the HF cache when needed."""
    text = spec.source.strip()
    if not text:
        raise SourceError("empty source")
    path = Path(text).expanduser()
    if text.startswith("hf://"):
        resolved = _resolve_hf_path(text, spec)
    elif path.exists() or text.startswith((".", "/", "~")) or path.suffix in DATA_SUFFIXES:
        resolved = _resolve_jobs(path) or _resolve_local(path, spec)
    elif _HUB_ID.match(text):
        resolved = _resolve_hub(text, spec, patterns=None)
    else:
        raise SourceError(f"{text}: no such file, folder or Hugging Face dataset id")
    return replace(resolved, display=text)


def _resolve_jobs(path: Path) -> ResolvedSource | None:
    """Harbor job folders (a jobs root, a job, a trial): the `jobs` source kind, see `data/jobs`."""
    from .jobs import jobs_source

    return jobs_source(path) if path.is_dir() else None


def _resolve_local(path: Path, spec: SourceSpec) -> ResolvedSource:
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    if not os.access(path, os.R_OK):
        raise SourceError(f"{path}: permission denied")
    path = path.resolve()
    if path.is_file():
        if path.suffix not in DATA_SUFFIXES:
            raise SourceError(f"{path}: not a parquet, arrow, json or jsonl file")
        return ResolvedSource(str(path), None, (path,))
    files = _saved_dataset_files(path, spec.split)
    if files is None:
        try:
            files = [path / name for name in _split_files(str(path), folder_identity(path), spec, path / "README.md")]
        except SourceError as exc:
            from .jobs import LOOKED_FOR

            raise SourceError(f"{exc}; nor is it a harbor job folder ({LOOKED_FOR})") from None
    resolved = tuple(files)
    for file in resolved:
        if not os.access(file, os.R_OK):
            raise SourceError(f"{file}: permission denied")
    return ResolvedSource(str(path), None, resolved)


def _saved_dataset_files(folder: Path, split: str) -> list[Path] | None:
    """The Arrow files of a `datasets` `save_to_disk` folder (a Dataset or a DatasetDict)."""
    if (folder / "dataset_dict.json").is_file():
        try:
            splits = json.loads((folder / "dataset_dict.json").read_text())["splits"]
        except (OSError, ValueError, KeyError) as exc:
            raise SourceError(f"{folder}: unreadable dataset_dict.json ({exc})") from None
        if split not in splits:
            raise SourceError(f"{folder}: no split {split!r} (splits: {', '.join(splits)})")
        folder = folder / split
    state = folder / "state.json"
    if not state.is_file():
        return None
    try:
        names = [entry["filename"] for entry in json.loads(state.read_text())["_data_files"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SourceError(f"{folder}: unreadable state.json ({exc})") from None
    return [folder / name for name in names]


def _split_files(base: str, identity: list, spec: SourceSpec, card, patterns: list[str] | None = None) -> list[str]:
    """The split's files as `datasets` resolves them (see `layout`), with the source named in errors."""
    try:
        return split_files(base, identity, spec.split, spec.config, card, patterns)
    except SourceError as exc:
        raise SourceError(f"{spec.source}: {exc}") from None


def _resolve_hf_path(text: str, spec: SourceSpec) -> ResolvedSource:
    """`hf://datasets/org/name[@rev]/some/path*.parquet`: the path is a data-files pattern, as in `datasets`."""
    rest = text.removeprefix("hf://")
    if not rest.startswith("datasets/"):
        raise SourceError(f"{text}: only hf://datasets/... paths are supported")
    parts = rest.removeprefix("datasets/").split("/")
    if len(parts) < 2:
        raise SourceError(f"{text}: expected hf://datasets/<org>/<name>[/<path>]")
    name, _, revision = parts[1].partition("@")
    pattern = "/".join(parts[2:]).strip("/")
    revised = SourceSpec(f"{parts[0]}/{name}", spec.split, revision or spec.revision, spec.config)
    patterns = None
    if pattern:
        patterns = [pattern if pattern.endswith(DATA_SUFFIXES) or any(c in pattern for c in "*?[") else f"{pattern}/**"]
    return _resolve_hub(revised.source, revised, patterns=patterns)


def _resolve_hub(repo_id: str, spec: SourceSpec, patterns: list[str] | None) -> ResolvedSource:
    """The split's files at the revision's commit: from the hub (one quick request, failing over to
    the cache when it does not answer), or from the HF cache alone when offline."""
    from . import hub

    hub.quiet()
    if not hub.offline():
        try:
            commit, sizes = hub.listing(repo_id, spec.revision)
        except hub.Unreachable as exc:
            folder = hub.cached_snapshot(repo_id, spec.revision)
            if folder is None:
                raise SourceError(
                    f"{repo_id}: cannot reach the Hugging Face hub ({exc}) and it is not in the local cache"
                ) from None
        else:
            base = f"hf://datasets/{repo_id}@{commit}"
            card = (lambda: hub.card(repo_id, commit)) if "README.md" in sizes else None
            try:
                paths = _split_files(base, ["hub", repo_id, commit], spec, card, patterns)
            except SourceError:
                raise
            except Exception as exc:  # the hub stopped answering while `datasets` listed the files
                raise SourceError(f"{repo_id}: cannot list its files on the hub ({first_line(exc)})") from None
            files = HubFiles(
                repo_id,
                commit,
                tuple(paths),
                tuple(sizes.get(p, 0) for p in paths),
                hub.snapshot_folder(repo_id, commit),
                spec.revision or "main",
            )
            return ResolvedSource(repo_id, commit, files.local, hub=files)
    else:
        folder = hub.cached_snapshot(repo_id, spec.revision)
        if folder is None:
            raise SourceError(f"{repo_id}: not in the local Hugging Face cache and the hub is offline")
    broken = [p for p in folder.rglob("*") if p.is_symlink() and not p.exists()]
    if broken:
        name = broken[0].relative_to(folder).as_posix()
        raise SourceError(f"{repo_id}: interrupted download ({name} is missing); run again online to finish it")
    # what an online open resolved for this commit, when the cache holds those files; else the
    # snapshot's own layout (it may hold only some of the repo's files)
    recalled = recall(["hub", repo_id, folder.name], spec.split, spec.config, patterns)
    if recalled is not None and all((folder / p).is_file() for p in recalled):
        paths = recalled
    else:
        listing = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        paths = _split_files(
            str(folder), ["hub-cache", repo_id, folder.name, listing], spec, folder / "README.md", patterns
        )
    files = HubFiles(repo_id, folder.name, tuple(paths), tuple((folder / p).stat().st_size for p in paths), folder)
    return ResolvedSource(repo_id, folder.name, files.local, hub=files)

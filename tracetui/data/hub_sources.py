"""Hugging Face datasets as sources: a dataset id (`org/name`), or an hf:// path to some of its files.

Resolving asks the hub which commit the revision names and what files it has (one quick request,
failing over to the HF cache; the cache alone when offline) and downloads nothing; the split's files are
found in that listing, as `datasets` would find them on the hub (`layout`), without asking the hub again. A dataset whose
conversion is kept opens from it; one not downloaded yet is read remotely from its metadata (`remote`)
while the app downloads it, or downloaded first (`prepare` with `download`, the commands); one whose
files cannot be read remotely is downloaded, then converted. The hub code itself (`hub`, `remote`,
huggingface_hub) is imported only here, and only when a source is a hub dataset.
"""

from __future__ import annotations

from pathlib import Path

from .cache import find_conversion, kept, remote_kept
from .dataset import Storage, converted
from .errors import SourceError, first_line
from .hub_ahead import hf_path, is_hub_id
from .layout import file_names, recall, split_files
from .sources import HubFiles, Progress, ResolvedSource, SourceSpec


class HubDataset:
    """A dataset id: `org/name` (with --revision, --config, --split)."""

    name = "hub"
    looks_for = ""

    def claims(self, text: str, path: Path) -> bool:
        return is_hub_id(text)

    def resolve(self, spec: SourceSpec, path: Path) -> ResolvedSource:
        return self._resolve(spec.source.strip(), spec, None)

    def _resolve(self, repo_id: str, spec: SourceSpec, patterns: list[str] | None) -> ResolvedSource:
        """The split's files at the revision's commit (see `hub.locate`); the layout as the hub lists
        it, or offline, what an online open resolved for this commit when the cache holds those files,
        else the cached snapshot's own layout (it may hold only some of the repo's files)."""
        from . import hub

        snapshot = hub.locate(repo_id, spec.revision)
        folder, commit = snapshot.folder, snapshot.commit
        if snapshot.sizes is not None:
            try:
                identity = ["hub", repo_id, commit]
                names = list(snapshot.sizes)
                paths = split_files(None, identity, spec.split, spec.config, snapshot.card, patterns, repo_id, names)
            except SourceError:
                raise
            except Exception as exc:  # the hub stopped answering while the card was fetched
                raise SourceError(f"{repo_id}: cannot list its files on the hub ({first_line(exc)})") from None
            sizes = tuple(snapshot.sizes.get(p, 0) for p in paths)
        else:
            recalled = recall(["hub", repo_id, commit], spec.split, spec.config, patterns)
            if recalled is not None and all((folder / p).is_file() for p in recalled):
                paths = recalled
            else:
                listing = file_names(folder)
                paths = split_files(
                    str(folder),
                    ["hub-cache", repo_id, commit, listing],
                    spec.split,
                    spec.config,
                    snapshot.card,
                    patterns,
                    name=repo_id,
                    names=listing,
                )
            sizes = tuple((folder / p).stat().st_size for p in paths)
        files = HubFiles(repo_id, commit, tuple(paths), sizes, folder, spec.revision or "main")
        origin = (self.name, repo_id, spec.revision or "main", spec.split, spec.config or "", *(patterns or ()))
        return ResolvedSource(repo_id, commit, files.local, self.name, spec.source.strip(), files, origin)

    def prepare(self, spec: SourceSpec, path: Path, download: bool) -> list[ResolvedSource]:
        source = self.resolve(spec, path)
        if find_conversion(source) is None:  # a kept conversion needs the files neither checked nor downloaded
            if not source.downloaded:
                if not download:
                    return [source]  # read remotely while the app downloads it
                from . import hub

                hub.download(_files(source))
            from .convert import check_files

            check_files(source.files)
        return [source]

    def ready(self, source: ResolvedSource) -> bool:
        return find_conversion(source) is not None or (not source.downloaded and remote_kept(source))

    def open(self, source: ResolvedSource, progress: Progress, cache_size: int | None) -> Storage:
        """The kept conversion; else, not downloaded, the dataset read remotely (its metadata now, its
        text on demand) or, when its files cannot be read remotely, downloaded; then converted."""
        conversion, remote_folder = kept(source)
        if not source.downloaded and conversion is None:
            remote = _open_remote(source, remote_folder, progress, cache_size)
            if remote is not None:
                return remote
        return converted(source, progress, cache_size)


class HfPath(HubDataset):
    """`hf://datasets/org/name[@revision]/some/path*.parquet`: the path is a data-files pattern, as in
    `datasets` (a folder means everything under it)."""

    name = "hf-path"

    def claims(self, text: str, path: Path) -> bool:
        return text.startswith("hf://")

    def resolve(self, spec: SourceSpec, path: Path) -> ResolvedSource:
        text = spec.source.strip()
        repo_id, revision, patterns = hf_path(text, spec.revision)
        return self._resolve(repo_id, SourceSpec(text, spec.split, revision, spec.config), patterns)


def _files(source: ResolvedSource) -> HubFiles:
    assert source.hub_files is not None, f"{source.dataset_id} is not a hub dataset"
    return source.hub_files


def _open_remote(source: ResolvedSource, folder: Path, progress: Progress, cache_size: int | None) -> Storage | None:
    """The remote dataset (its metadata kept in `folder`), or None after downloading the files when they
    cannot be read remotely."""
    from .hub import download
    from .hub_metadata import NotRemote
    from .remote import RemoteDataset

    files = _files(source)
    try:
        return RemoteDataset.open(source, files, folder, cache_size, progress)
    except NotRemote:
        total = max(1, files.total)
        done = 0

        def fetched(count: int) -> None:
            nonlocal done
            done += count
            progress(min(1.0, done / total), f"downloading {source.dataset_id}")

        download(files, fetched)
        return None

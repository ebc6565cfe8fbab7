"""Talking to the Hugging Face hub: one quick look at a repo, its cached snapshots, downloads.

Everything goes through `huggingface_hub` (its endpoint, token, cache layout and offline switch). Two
things are ours: the first request of an open has a short timeout and no retries, so an unreachable hub
fails over to the cache in ~3 s instead of ~24 s of retry back-off; and the dataset card is asked for
beside it, in one GET, so that a far hub costs one round trip before the split is known, not three.
Reading files by byte range is `hub_reads`.

Imported only when a source is a hub dataset: a local open never loads huggingface_hub.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..paths import write_atomically
from .connections import connect_to_hub, offline
from .errors import SourceError, Unreachable, first_line
from .hub_ahead import FAILOVER_SECONDS, card_known, card_url, kept_card, last_commit, listing_url
from .hub_reads import get_file, hub_get
from .sources import HubFiles
from .threads import detached, parallel

CHUNK_BYTES = 256 << 10
"""Downloads are written in chunks of this size (huggingface_hub's default, 10 MB, takes seconds on a slow link)."""


def quiet() -> None:
    """huggingface_hub's retry warnings would bury our one-line messages; its progress bars stay."""
    from huggingface_hub.utils import logging as hf_logging

    hf_logging.set_verbosity_error()


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A hub dataset at one commit, as the hub (or, offline or when it does not answer, the HF cache) has it."""

    repo_id: str
    commit: str
    folder: Path  # the HF cache snapshot folder: where its files are, or download into
    sizes: dict[str, int] | None  # every file's size, from the hub; None when only the cache was read
    fetched_card: tuple[str, bytes] | None = None  # (its commit, its text), asked for beside the listing

    def card(self) -> Path | None:
        """The dataset card (README.md) when the hub has one (kept in the cache), None without one."""
        if self.sizes is None:
            card = self.folder / "README.md"
            return card if card.is_file() else None
        if "README.md" not in self.sizes:
            return None
        kept = kept_card(self.repo_id, self.commit)
        if kept.is_file():
            return kept
        if self.fetched_card is not None and self.fetched_card[0] == self.commit:
            with contextlib.suppress(OSError):
                kept.parent.mkdir(parents=True, exist_ok=True)
                write_atomically(kept, self.fetched_card[1])
                return kept
        from huggingface_hub import hf_hub_download  # the branch moved, or the card could not be kept

        try:
            return Path(hf_hub_download(self.repo_id, "README.md", repo_type="dataset", revision=self.commit))
        except Exception:  # it cannot be read: the default layout applies, as in `datasets`
            return None


def locate(repo_id: str, revision: str | None) -> Snapshot:
    """The commit `revision` names and where its files are: asked of the hub in one quick request that
    fails over to the HF cache when the hub does not answer, or of the cache alone when offline.

    Raises SourceError when the hub says no (unknown, gated or private repo, unknown revision), or when
    neither the hub nor the cache has it.
    """
    quiet()
    if not offline():
        known = card_known(repo_id, revision)
        if not known:  # a first open reads every file next: connections opened while the listing is on its way
            connect_to_hub()
        try:
            card = detached(lambda: None if known else _card(repo_id, revision), "tracetui-card")
            commit, sizes = _listing(repo_id, revision)  # meanwhile
        except Unreachable as exc:
            folder = _cached_snapshot(repo_id, revision)
            if folder is None:
                raise SourceError(
                    f"{repo_id}: cannot reach the Hugging Face hub ({exc}) and it is not in the local cache"
                ) from None
        else:
            with contextlib.suppress(OSError):
                last = last_commit(repo_id, revision)
                last.parent.mkdir(parents=True, exist_ok=True)
                write_atomically(last, commit.encode())
            return Snapshot(repo_id, commit, snapshot_folder(repo_id, commit), sizes, card.result())
    else:
        folder = _cached_snapshot(repo_id, revision)
        if folder is None:
            raise SourceError(f"{repo_id}: not in the local Hugging Face cache and the hub is offline")
    broken = [p for p in folder.rglob("*") if p.is_symlink() and not p.exists()]
    if broken:
        name = broken[0].relative_to(folder).as_posix()
        raise SourceError(f"{repo_id}: interrupted download ({name} is missing); run again online to finish it")
    return Snapshot(repo_id, folder.name, folder, None)


def _listing(repo_id: str, revision: str | None) -> tuple[str, dict[str, int]]:
    """(commit, size of every file) of a dataset repo, in one request that fails over quickly.

    Raises SourceError when the hub answers no (unknown, gated or private repo, unknown revision) and
    Unreachable when it does not answer.
    """
    import orjson

    try:
        answer = hub_get(listing_url(repo_id, revision), FAILOVER_SECONDS)
        assert answer is not None  # a missing repo is an error
        info = orjson.loads(answer[1])
        commit, siblings = info.get("sha"), info.get("siblings") or ()
        sizes = {s["rfilename"]: int(s.get("size") or 0) for s in siblings}
    except Exception as exc:
        raise _explain(repo_id, revision, exc) from None
    if commit is None:
        raise Unreachable("the hub did not say which commit it serves")
    return commit, sizes


def _card(repo_id: str, revision: str | None) -> tuple[str, bytes] | None:
    """(commit, text) of the dataset card at `revision`, in one GET; None when there is none or the hub
    does not give it (the listing's request says why)."""
    try:
        return get_file(card_url(repo_id, revision), FAILOVER_SECONDS)
    except Exception:
        return None


def _explain(repo_id: str, revision: str | None, exc: Exception) -> Exception:
    """A hub failure as SourceError (the hub said no) or Unreachable (it did not answer)."""
    from huggingface_hub import errors

    if isinstance(exc, errors.GatedRepoError):
        return SourceError(f"{repo_id}: gated dataset; accept its terms on the hub and set HF_TOKEN")
    if isinstance(exc, errors.RepositoryNotFoundError):
        return SourceError(f"{repo_id}: no such dataset on the hub (or it is private: set HF_TOKEN)")
    if isinstance(exc, errors.RevisionNotFoundError):
        return SourceError(f"{repo_id}: no revision {revision!r}")
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(exc, errors.HfHubHTTPError) and status is not None and status < 500:
        return SourceError(f"{repo_id}: the hub refused ({first_line(exc)})")
    return Unreachable(first_line(exc))


def snapshot_folder(repo_id: str, commit: str) -> Path:
    """Where huggingface_hub keeps the files of `repo_id` at `commit` (they may not be there yet)."""
    from huggingface_hub import constants

    folder = constants.REPO_ID_SEPARATOR.join(["datasets", *repo_id.split("/")])  # file_download.repo_folder_name
    return Path(constants.HF_HUB_CACHE) / folder / "snapshots" / commit


def _cached_snapshot(repo_id: str, revision: str | None) -> Path | None:
    """The cached snapshot folder of `revision` (None when the cache has none)."""
    from huggingface_hub import errors, snapshot_download

    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision, local_files_only=True))
    except errors.LocalEntryNotFoundError:
        return None
    except (OSError, errors.HfHubHTTPError) as exc:
        raise SourceError(f"{repo_id}: cannot read the Hugging Face cache ({first_line(exc)})") from None


class Cancelled(Exception):
    """Raised from a progress callback to stop a download; the partial file is discarded."""


def download(files: HubFiles, progress: Callable[[int], None] | None = None, workers: int = 4) -> None:
    """Download the files not yet in the HF cache (huggingface_hub's console bars without `progress`;
    else `progress(bytes)` for every chunk, which may raise Cancelled to stop).

    A dropped connection resumes where it stopped (huggingface_hub retries with a range); a shard whose
    download is stopped (the app quits) starts over next time, shards already downloaded stay.
    """
    from huggingface_hub import constants, hf_hub_download

    quiet()
    # huggingface_hub writes (and resumes a dropped connection, and lets `progress` cancel) a chunk at a time
    constants.DOWNLOAD_CHUNK_SIZE = min(constants.DOWNLOAD_CHUNK_SIZE, CHUNK_BYTES)
    tqdm_class = None if progress is None else _byte_counter(progress)
    missing = [path for path, local in zip(files.paths, files.local) if not local.exists()]

    def fetch(path: str) -> None:
        try:
            hf_hub_download(files.repo_id, path, repo_type="dataset", revision=files.commit, tqdm_class=tqdm_class)
        except (Cancelled, SourceError):
            raise
        except Exception as exc:
            raise _explain(files.repo_id, files.commit, exc) from None

    parallel(fetch, missing, workers)
    _remember_ref(files)


def _remember_ref(files: HubFiles) -> None:
    """Record which commit the branch or tag names (as huggingface_hub does), so that an offline open of
    the branch finds this complete snapshot."""
    if files.ref == files.commit:
        return
    ref = files.folder.parent.parent / "refs" / files.ref
    with contextlib.suppress(OSError):  # a read-only cache: offline opens name the commit instead
        ref.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(ref, files.commit.encode())


def _byte_counter(report: Callable[[int], None]) -> type:
    """A tqdm stand-in for huggingface_hub's downloads that passes each chunk's size to `report`."""

    class ByteCounter:
        def __init__(self, *args: object, initial: int = 0, **kwargs: object) -> None:
            if initial:
                report(initial)

        def update(self, n: int | float = 1) -> None:
            report(int(n))

        def __enter__(self) -> ByteCounter:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def close(self) -> None:
            pass

    return ByteCounter

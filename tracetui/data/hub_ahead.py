"""A hub dataset's first requests, asked from the command line before the app's modules import: its file
listing (every open needs it, a reopen nothing else before its first screen) and, on a first open, its
card. A far hub's round trips then go on while pyarrow, numpy and the app import (~0.3-0.5 s), instead of
after them; `hub_reads.hub_get` takes the answers (`connections.Connections.taken`).

Also what that needs to know without importing the hub code: which sources name a hub dataset, the URLs
of its listing and files, and where the card and commit of the last open are kept. Knows nothing of
parquet or of `datasets`, and imports no network code until it asks (`hub_sources` imports it for every
source).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

from ..paths import cache_dir
from .errors import SourceError
from .sources import DATA_SUFFIXES, SourceSpec

FAILOVER_SECONDS = 3.0
"""The first request of an open: after this long without an answer, the hub counts as unreachable."""

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def is_hub_id(text: str) -> bool:
    """`org/name` (or `name`): a dataset id, when no local path claims it first."""
    return _HUB_ID.match(text) is not None


def hf_path(text: str, revision: str | None) -> tuple[str, str | None, list[str] | None]:
    """(repo id, revision, data-files patterns or None) of `hf://datasets/org/name[@revision]/some/path`:
    the path is a pattern, as in `datasets` (a folder means everything under it); `revision` when the
    path names none. Raises SourceError for any other hf:// path."""
    rest = text.removeprefix("hf://")
    if not rest.startswith("datasets/"):
        raise SourceError(f"{text}: only hf://datasets/... paths are supported")
    parts = rest.removeprefix("datasets/").split("/")
    if len(parts) < 2:
        raise SourceError(f"{text}: expected hf://datasets/<org>/<name>[/<path>]")
    name, _, named = parts[1].partition("@")
    pattern = "/".join(parts[2:]).strip("/")
    patterns = None
    if pattern:
        wildcard = pattern.endswith(DATA_SUFFIXES) or any(c in pattern for c in "*?[")
        patterns = [pattern if wildcard else f"{pattern}/**"]
    return f"{parts[0]}/{name}", named or revision, patterns


def listing_url(repo_id: str, revision: str | None) -> str:
    """HfApi().dataset_info(files_metadata=True)'s request, without importing hf_api (~45 ms on a first
    open): the commit `revision` names and every file's size."""
    from huggingface_hub import constants

    url = f"{constants.ENDPOINT}/api/datasets/{repo_id}"
    if revision is not None:
        url += f"/revision/{quote(revision, safe='')}"
    return f"{url}?blobs=true"


def file_url(repo_id: str, path: str, revision: str) -> str:
    """Where the hub serves file `path` of dataset `repo_id` at `revision`: huggingface_hub's `hf_hub_url`,
    whose module (its downloads) takes ~0.1 s to import."""
    from huggingface_hub import constants

    return constants.HUGGINGFACE_CO_URL_TEMPLATE.format(
        repo_id=constants.REPO_TYPES_URL_PREFIXES["dataset"] + repo_id,
        revision=quote(revision, safe=""),
        filename=quote(path),
    )


def card_url(repo_id: str, revision: str | None) -> str:
    return file_url(repo_id, "README.md", revision or "main")


def kept_card(repo_id: str, commit: str) -> Path:
    """Where the card of `repo_id` at `commit` is kept once read."""
    return cache_dir() / "hub-cards" / f"{_key(repo_id, commit)}.md"


def last_commit(repo_id: str, revision: str | None) -> Path:
    """Where the commit `revision` named at the last open is kept: when its card is kept too, the next
    open does not ask for the card again (the commit is still the same, most of the time)."""
    return cache_dir() / "hub-cards" / f"{_key(repo_id, revision or 'main')}.commit"


def card_known(repo_id: str, revision: str | None) -> bool:
    """The card of the commit `revision` named last time is kept: a reopen asks only for the listing."""
    last = last_commit(repo_id, revision)
    try:
        return kept_card(repo_id, last.read_text()).is_file()
    except OSError:
        return False


def _key(*parts: str) -> str:
    return hashlib.sha256("@".join(parts).encode()).hexdigest()[:24]


def ask_ahead(specs: Iterable[SourceSpec]) -> None:
    """Ask, without credentials (they are not built yet), for the listing of each source that names a
    hub dataset, and on a first open for its card, with connections to the hub and its CDN opened for
    the files' reads (`connect_to_hub`); unless offline. A reopen asks for the listing alone before its
    first screen, on a connection of its own: nothing is opened ahead for it (a TLS handshake each). A
    private repo's answer is a refusal, asked again with the token by the request that takes it.

    A first open reads every file's footer and short columns before its list, as the user (their token)
    and decoded with pyarrow's kernels: huggingface_hub's headers are built and the kernels imported
    meanwhile, on threads of their own (~0.2 s of work that the footers' reads would otherwise wait for
    once the listing is in)."""
    from .compute import load_soon
    from .connections import ANONYMOUS, CONNECTIONS, connect_to_hub, headers_built, offline

    datasets = [named for named in map(_hub_dataset, specs) if named is not None]
    if not datasets or offline():
        return
    first = [not card_known(repo_id, revision) for repo_id, revision in datasets]
    if any(first):
        connect_to_hub()
        headers_built()
        load_soon()
    for (repo_id, revision), unknown in zip(datasets, first):
        CONNECTIONS.ahead(listing_url(repo_id, revision), ANONYMOUS, FAILOVER_SECONDS)
        if unknown:
            CONNECTIONS.ahead(card_url(repo_id, revision), ANONYMOUS, FAILOVER_SECONDS)


def _hub_dataset(spec: SourceSpec) -> tuple[str, str | None] | None:
    """(repo id, revision) of a source that names a hub dataset, else None (a malformed hf:// path is
    said when the source is resolved)."""
    text = spec.source.strip()
    if text.startswith("hf://"):
        try:
            repo_id, revision, _ = hf_path(text, spec.revision)
        except SourceError:
            return None
        return repo_id, revision
    return (text, spec.revision) if is_hub_id(text) else None

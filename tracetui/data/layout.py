"""Which data files make one split of a dataset: exactly the files `load_dataset` would take.

`datasets` is the authority on the layouts the hub accepts: the card's `configs:` (named configs, split
paths, `data_dir`), then its default patterns (`data/train-0000K-of-0000N.*`, `train/*.jsonl`,
`*-train-*.parquet`, a folder without split names). Importing it costs ~0.5 s and brings pandas, so a
hub dataset's listing is first resolved by `listing_layout` (the card's configs and the sharded default
layout, with `datasets`' rules), and `datasets` only for the layouts that module leaves to it; local
folders go to `datasets` (their listing is the disk's, symlinked folders and all). Each resolution is
remembered in the cache under what it depends on (the hub commit, or the folder's file names and card);
a warm open reads the answer back and resolves nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..paths import cache_dir, write_atomically
from .errors import SourceError, first_line, listed

FORMATS = {".parquet": "parquet", ".arrow": "arrow", ".json": "json", ".jsonl": "json", ".ndjson": "json"}
"""The file suffixes tracetui reads, by `datasets` builder (a split keeps its most common builder's files)."""


Card = Path | Callable[[], "Path | None"] | None
"""The dataset card (README.md), or what fetches it when a resolution needs it."""


class NoDataFiles(SourceError):
    """The layout has no data files for any split (a folder of something else)."""


def split_files(
    base: str | None,
    identity: list[Any],
    split: str,
    config: str | None,
    card: Card,
    patterns: list[str] | None = None,
    name: str = "",
    names: Sequence[str] | None = None,
) -> list[str]:
    """Paths relative to `base` of the split's data files, remembered under `identity`.

    `base` is a local folder, or None for a listing alone: `names`, every file's path (a hub listing),
    resolved without `datasets` when `listing_layout` can. `patterns` are the user's own data-files
    patterns (an hf:// path), which replace the card's. Raises SourceError (its message starting with
    `name`) for an unknown split or config, NoDataFiles for a layout with no data files.
    """
    files = recall(identity, split, config, patterns)
    if files is not None:
        return files
    try:
        files = _resolve(base, names, split, config, card, patterns)
    except SourceError as exc:
        raise type(exc)(f"{name}: {exc}" if name else str(exc)) from None
    memo = _memo(identity, split, config, patterns)
    with contextlib.suppress(OSError):  # a read-only cache only means resolving again next time
        memo.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(memo, json.dumps({"files": files}).encode())
    return files


def recall(identity: list[Any], split: str, config: str | None, patterns: list[str] | None = None) -> list[str] | None:
    """A resolution remembered under `identity`, if there is one."""
    try:
        return json.loads(_memo(identity, split, config, patterns).read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _memo(identity: list[Any], split: str, config: str | None, patterns: list[str] | None) -> Path:
    key = hashlib.sha256(json.dumps([identity, split, config, patterns]).encode()).hexdigest()[:24]
    return cache_dir() / "layouts" / f"{key}.json"


def folder_identity(folder: Path) -> list[Any]:
    """What a local folder's resolution depends on: its file names, and its card's content."""
    names = file_names(folder)
    card = folder / "README.md"
    stat = card.stat() if card.is_file() else None
    return ["local", str(folder), names, [stat.st_size, stat.st_mtime_ns] if stat else None]


def file_names(folder: Path) -> list[str]:
    """The files under `folder` as sorted relative POSIX paths, as `rglob("*")` finds them (links to
    files kept, linked folders not entered, unreadable folders skipped), from the entries' own types:
    `rglob` and a stat per file took ~4 ms of every open of a 450-shard folder, this 0.3 ms."""
    names: list[str] = []
    folders = [("", str(folder))]
    while folders:
        prefix, path = folders.pop()
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append((f"{prefix}{entry.name}/", entry.path))
                    elif entry.is_file():
                        names.append(prefix + entry.name)
        except (PermissionError, FileNotFoundError, NotADirectoryError):  # as rglob: nothing from it
            continue
    return sorted(names)


def _resolve(
    base: str | None,
    names: Sequence[str] | None,
    split: str,
    config: str | None,
    card: Card,
    patterns: list[str] | None,
) -> list[str]:
    if patterns is not None and split != "train":  # as load_dataset(id, data_files=patterns): one "train" split
        raise SourceError(f"no split {split!r} for a path pattern (use --split train)")
    card_path = None if patterns is not None else card() if callable(card) else card
    resolved = None
    if names is not None:
        from .listing_layout import resolve

        resolved = resolve(names, config, card_path, patterns, list(FORMATS))
    if resolved is None:
        if base is not None:
            resolved = _resolved_by_datasets(base.rstrip("/"), config, card_path, patterns)
        else:
            with _listed(names or ()) as listing:
                resolved = _resolved_by_datasets(listing, config, card_path, patterns)
    return _split_of(resolved, split)


def _resolved_by_datasets(
    base: str, config: str | None, card: Path | None, patterns: list[str] | None
) -> dict[str, list[str]]:
    """Every split's files (paths relative to `base`) as `datasets` resolves them."""
    from datasets.data_files import DataFilesDict, EmptyDatasetError, sanitize_patterns  # type: ignore[import-untyped]

    try:
        if patterns is not None:
            wanted, root = sanitize_patterns(patterns), base
        else:
            wanted, root = _config_patterns(base, config, card)
        resolved = DataFilesDict.from_patterns(wanted, base_path=root, allowed_extensions=list(FORMATS))
    except EmptyDatasetError:
        raise NoDataFiles("no parquet, arrow or jsonl files in this dataset") from None
    except FileNotFoundError as exc:
        raise SourceError(f"no data files match the card's patterns ({first_line(exc)})") from None
    except ValueError as exc:  # a malformed `configs:` section, as load_dataset reports it
        raise SourceError(f"the dataset card's configs are invalid ({first_line(exc)})") from None
    # `datasets` names the splits with NamedSplit
    return {str(name): [_relative(str(f), base) for f in found] for name, found in resolved.items()}


def _split_of(resolved: dict[str, list[str]], split: str) -> list[str]:
    """The split's files of one builder (as load_dataset infers it from the files)."""
    splits = [name for name, found in resolved.items() if found]
    if not splits:
        raise NoDataFiles("no parquet, arrow or jsonl files in this dataset")
    if split not in splits:
        raise SourceError(f"no split {split!r} (splits: {listed(splits)}); choose one with --split")
    files = resolved[split]
    counts = Counter(FORMATS[Path(f).suffix] for f in files if Path(f).suffix in FORMATS)
    if not counts:
        raise SourceError(f"no parquet, arrow or jsonl files for split {split!r}")
    builder = counts.most_common(1)[0][0]
    return [f for f in files if FORMATS.get(Path(f).suffix) == builder]


def _config_patterns(base: str, config: str | None, card: Path | None) -> tuple[dict[str, Any], str]:
    """The data-files patterns of the chosen config (the card's `configs:`, else the default layout)."""
    from datasets.data_files import get_data_patterns, sanitize_patterns
    from datasets.utils.metadata import MetadataConfigs  # type: ignore[import-untyped]
    from huggingface_hub import DatasetCard, DatasetCardData
    from huggingface_hub.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # "Repo card metadata block was not found" is no news to our users
    data = DatasetCard.load(card).data if card is not None and card.is_file() else DatasetCardData()
    configs = MetadataConfigs.from_dataset_card_data(data)
    if not configs:
        if config not in (None, "default"):
            raise SourceError(f"no config {config!r} (the dataset card names no configs)")
        return get_data_patterns(base), base
    name = config or configs.get_default_config_name()
    if name is None:
        raise SourceError(f"choose a config with --config ({listed(configs)})")
    if name not in configs:
        raise SourceError(f"no config {name!r} (configs: {listed(configs)}); choose one with --config")
    params = configs[name]
    root = f"{base}/{params['data_dir'].strip('/')}" if params.get("data_dir") else base
    data_files = params.get("data_files")
    return (sanitize_patterns(data_files) if data_files is not None else get_data_patterns(root)), root


def _relative(file: str, base: str) -> str:
    prefix = base + "/"
    return file[len(prefix) :] if file.startswith(prefix) else file


@contextlib.contextmanager
def _listed(names: Sequence[str]) -> Iterator[str]:
    """An in-memory folder (an fsspec URL) of empty files named as listed, for `datasets` to resolve the
    split in: the same patterns and rules as on the hub, and no request for each folder."""
    from fsspec.implementations.memory import MemoryFileSystem  # type: ignore[import-untyped]

    memory = MemoryFileSystem()
    root = f"/tracetui-listing-{uuid.uuid4().hex}"
    for name in names:
        memory.pipe_file(f"{root}/{name}", b"")
    try:
        yield f"memory://{root}"
    finally:
        memory.rm(root, recursive=True)

"""Sources on local disk: a data file, a `datasets` save_to_disk folder, a folder of data files in a
dataset layout. Each converts once into the cache and opens from its conversion."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .cache import find_conversion
from .dataset import Storage, converted
from .errors import SourceError, listed
from .layout import folder_identity, split_files
from .sources import DATA_SUFFIXES, Progress, ResolvedSource, SourceSpec


class LocalFiles:
    """What the local kinds share: their files are checked before the first open, converted once, and
    opened from the conversion."""

    name = ""
    looks_for = ""

    def resolve(self, spec: SourceSpec, path: Path) -> ResolvedSource:
        raise NotImplementedError

    def prepare(self, spec: SourceSpec, path: Path, download: bool) -> list[ResolvedSource]:
        source = self.resolve(spec, path)
        if find_conversion(source) is None:  # a kept conversion needs no second look at the files
            from .convert import check_files

            check_files(source.files)
        return [source]

    def ready(self, source: ResolvedSource) -> bool:
        return find_conversion(source) is not None

    def open(self, source: ResolvedSource, progress: Progress, cache_size: int | None) -> Storage:
        return converted(source, progress, cache_size)

    def _source(self, spec: SourceSpec, path: Path, files: tuple[Path, ...]) -> ResolvedSource:
        for file in files:
            if not os.access(file, os.R_OK):
                raise SourceError(f"{file}: permission denied")
        origin = (self.name, str(path), spec.split, spec.config or "")
        return ResolvedSource(str(path), None, files, self.name, spec.source.strip(), origin=origin)


class DataFile(LocalFiles):
    """A parquet, Arrow, JSON or JSON Lines file; also claims any text that names a path that is not there."""

    name = "file"

    def claims(self, text: str, path: Path) -> bool:
        missing = not path.exists() and (text.startswith((".", "/", "~")) or path.suffix in DATA_SUFFIXES)
        return missing or path.is_file()

    def resolve(self, spec: SourceSpec, path: Path) -> ResolvedSource:
        if not path.exists():
            raise SourceError(f"{path}: no such file or folder")
        path = path.resolve()
        if path.suffix not in DATA_SUFFIXES:
            raise SourceError(f"{path}: not a parquet, arrow, json or jsonl file")
        return self._source(SourceSpec(spec.source), path, (path,))  # a file has no splits


class SavedDataset(LocalFiles):
    """A folder `datasets` wrote with `save_to_disk`: a Dataset (state.json) or a DatasetDict
    (dataset_dict.json and a folder per split), read through the Arrow files its state names."""

    name = "saved-dataset"
    looks_for = "a `datasets` save_to_disk folder (dataset_dict.json or state.json)"

    def claims(self, text: str, path: Path) -> bool:
        return path.is_dir() and ((path / "dataset_dict.json").is_file() or (path / "state.json").is_file())

    def resolve(self, spec: SourceSpec, path: Path) -> ResolvedSource:
        path = path.resolve()
        folder = path
        if (path / "dataset_dict.json").is_file():
            try:
                splits = json.loads((path / "dataset_dict.json").read_text())["splits"]
                known = spec.split in splits
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise SourceError(f"{path / 'dataset_dict.json'}: unreadable ({exc})") from None
            if not known:
                raise SourceError(
                    f"{path}: no split {spec.split!r} (splits: {listed(splits)}); choose one with --split"
                )
            folder = path / spec.split
        try:
            names = [entry["filename"] for entry in json.loads((folder / "state.json").read_text())["_data_files"]]
            files = tuple(folder / name for name in names)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SourceError(f"{folder / 'state.json'}: unreadable ({exc})") from None
        return self._source(spec, path, files)


class DatasetFolder(LocalFiles):
    """Any other folder: the split's data files as `datasets` finds them (the card's `configs:`, then
    its default layouts), see `layout`."""

    name = "dataset-folder"
    looks_for = "parquet, arrow or jsonl files in a dataset layout (data/train-*.parquet, train/*.jsonl, …)"

    def claims(self, text: str, path: Path) -> bool:
        return path.is_dir()

    def resolve(self, spec: SourceSpec, path: Path) -> ResolvedSource:
        path = path.resolve()
        names = split_files(
            str(path), folder_identity(path), spec.split, spec.config, path / "README.md", name=spec.source.strip()
        )
        return self._source(spec, path, tuple(path / name for name in names))

"""Turn what the user typed (a hub id, an hf:// path, a file or a folder) into a list of data files.

Hub datasets go through `huggingface_hub`, so users get the normal HF cache, `HF_HOME`, `HF_TOKEN`,
offline mode and download progress bars; we then read the parquet shards with pyarrow ourselves
(measured faster than `datasets.load_dataset`, and it keeps one loading path for every source).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from .errors import SourceError

DATA_SUFFIXES = (".parquet", ".arrow", ".jsonl", ".json", ".ndjson")
_NOT_DATA = {"dataset_info.json", "state.json", "dataset_dict.json", "config.json"}
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """A source as given on the command line."""

    source: str
    split: str = "train"
    revision: str | None = None
    config: str | None = None


@dataclass(frozen=True, slots=True)
class ResolvedSource:
    """Data files on local disk, and the identity they are labelled and cached under."""

    dataset_id: str  # the hub id, or the absolute local path
    revision: str | None  # the hub commit; None for local files
    files: tuple[Path, ...]
    display: str = ""  # what the user typed, for the header

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
        resolved = _resolve_local(path, spec)
    elif _HUB_ID.match(text):
        resolved = _resolve_hub(text, spec, patterns=None)
    else:
        raise SourceError(f"{text}: no such file, folder or Hugging Face dataset id")
    return replace(resolved, display=text)


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
    files = _saved_dataset_files(path, spec.split) or select_split(
        [p.relative_to(path).as_posix() for p in sorted(path.rglob("*")) if _is_data(p)],
        spec.split,
        spec.config,
        path / "README.md",
    )
    if not files:
        raise SourceError(f"{path}: no parquet, arrow or jsonl files in this folder")
    resolved = tuple(f if isinstance(f, Path) else path / f for f in files)
    for file in resolved:
        if not os.access(file, os.R_OK):
            raise SourceError(f"{file}: permission denied")
    return ResolvedSource(str(path), None, resolved)


def _is_data(path: Path) -> bool:
    return (
        path.is_file()
        and path.suffix in DATA_SUFFIXES
        and path.name not in _NOT_DATA
        and not any(part.startswith(".") for part in path.parts[-3:])
    )


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


def select_split(files: list[str], split: str, config: str | None, card: Path | None) -> list[str]:
    """Pick the files of one split (and config) the way the hub lays them out.

    When there is a choice to make (several splits, or a config), the dataset card's `configs:` section
    wins; else the conventional names (`data/train-*.parquet`, `train/*.parquet`, `*train*`); a folder
    with no split names is one split.
    """
    data = [f for f in files if f.endswith(DATA_SUFFIXES) and f.rsplit("/", 1)[-1] not in _NOT_DATA]
    ambiguous = config is not None or len({_split_of(f) for f in data}) > 1
    patterns = _card_patterns(card, split, config) if card is not None and ambiguous else None
    if patterns:
        return [f for f in data if any(fnmatch.fnmatch(f, p) for p in patterns)]
    if config:
        data = [f for f in data if f.startswith(f"{config}/") or f"/{config}/" in f]
    named = [f for f in data if _split_of(f) is not None]
    if not named:
        return data
    chosen = [f for f in named if _split_of(f) == split]
    if not chosen:
        splits = sorted({s for f in named if (s := _split_of(f)) is not None})
        raise SourceError(f"no split {split!r} (splits: {', '.join(splits)})")
    return chosen


def _split_of(file: str) -> str | None:
    parts = file.split("/")
    for part in reversed(parts):
        match = re.match(r"^(train|test|validation|valid|dev|eval)(?=$|[-_.])", part)
        if match:
            return match.group(1)
    return None


def _card_patterns(card: Path, split: str, config: str | None) -> list[str] | None:
    configs = _card_configs(card)
    if not configs:
        return None
    for entry in configs:
        if not isinstance(entry, dict):
            continue
        if config and entry.get("config_name") != config:
            continue
        if not config and entry.get("config_name") not in ("default", None) and len(configs) > 1:
            continue
        data_files = entry.get("data_files")
        if isinstance(data_files, str):
            return [data_files]
        for item in data_files or []:
            if isinstance(item, dict) and item.get("split") == split:
                path = item.get("path")
                return [path] if isinstance(path, str) else list(path or [])
    if config:
        raise SourceError(f"no config {config!r} in the dataset card")
    return None


def _card_configs(card: Path) -> list:
    """The `configs:` list of a dataset card's YAML front matter (what the hub reads data files from).

    Read with PyYAML directly: importing huggingface_hub's card module costs ~0.2 s of start-up.
    """
    try:
        text = card.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    match = re.match(r"^---\s*\n(.*?)\n---\s*(\n|$)", text, re.DOTALL)
    if not match or "configs" not in match.group(1):
        return []
    try:
        import yaml

        meta = yaml.safe_load(match.group(1))
    except Exception:  # a broken card is not a broken dataset: fall back to file names
        return []
    configs = meta.get("configs") if isinstance(meta, dict) else None
    return configs if isinstance(configs, list) else []


def _resolve_hf_path(text: str, spec: SourceSpec) -> ResolvedSource:
    """`hf://datasets/org/name[@rev]/some/path*.parquet`."""
    rest = text.removeprefix("hf://")
    if not rest.startswith("datasets/"):
        raise SourceError(f"{text}: only hf://datasets/... paths are supported")
    parts = rest.removeprefix("datasets/").split("/")
    if len(parts) < 2:
        raise SourceError(f"{text}: expected hf://datasets/<org>/<name>[/<path>]")
    name, _, revision = parts[1].partition("@")
    pattern = "/".join(parts[2:])
    revised = SourceSpec(f"{parts[0]}/{name}", spec.split, revision or spec.revision, spec.config)
    patterns = None
    if pattern:
        patterns = [pattern, f"{pattern.rstrip('/')}/**"] if not pattern.endswith(DATA_SUFFIXES) else [pattern]
    return _resolve_hub(revised.source, revised, patterns=patterns)


def _resolve_hub(repo_id: str, spec: SourceSpec, patterns: list[str] | None) -> ResolvedSource:
    from huggingface_hub import HfApi, constants, snapshot_download
    from huggingface_hub import errors as hf_errors
    from huggingface_hub.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # its retry warnings would bury our one-line error; progress bars stay

    def pick(files: list[str], card: Path | None) -> list[str]:
        if patterns is not None:
            return [f for f in files if any(fnmatch.fnmatch(f, p) for p in patterns) and f.endswith(DATA_SUFFIXES)]
        return select_split(files, spec.split, spec.config, card)

    def online() -> Path:
        listed = HfApi().list_repo_files(repo_id, repo_type="dataset", revision=spec.revision)
        card = _download_card(repo_id, spec.revision) if "README.md" in listed else None
        wanted = pick(listed, card)
        if not wanted:
            raise SourceError(f"{repo_id}: no parquet, arrow or jsonl files for split {spec.split!r}")
        return Path(
            snapshot_download(
                repo_id, repo_type="dataset", revision=spec.revision, allow_patterns=wanted + ["README.md"]
            )
        )

    def cached() -> Path:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=spec.revision, local_files_only=True))

    offline = constants.HF_HUB_OFFLINE or os.environ.get("HF_DATASETS_OFFLINE", "").upper() in (
        "1",
        "ON",
        "YES",
        "TRUE",
    )
    try:
        if offline:
            folder = cached()
        else:
            try:
                folder = online()
            except (SourceError, hf_errors.RepositoryNotFoundError, hf_errors.RevisionNotFoundError):
                raise
            except Exception as exc:  # the hub is unreachable: what the cache has still opens, as with `datasets`
                try:
                    folder = cached()
                except hf_errors.LocalEntryNotFoundError:
                    raise SourceError(
                        f"{repo_id}: cannot reach the Hugging Face hub ({_first_line(exc)}) and it is not in the local cache"
                    ) from None
    except SourceError:
        raise
    except hf_errors.GatedRepoError:
        raise SourceError(f"{repo_id}: gated dataset; accept its terms on the hub and set HF_TOKEN") from None
    except hf_errors.RepositoryNotFoundError:
        raise SourceError(f"{repo_id}: no such dataset on the hub (or it is private: set HF_TOKEN)") from None
    except hf_errors.RevisionNotFoundError:
        raise SourceError(f"{repo_id}: no revision {spec.revision!r}") from None
    except hf_errors.LocalEntryNotFoundError:
        raise SourceError(f"{repo_id}: not in the local Hugging Face cache and the hub is offline") from None
    except (OSError, hf_errors.HfHubHTTPError) as exc:
        raise SourceError(f"{repo_id}: cannot read the Hugging Face cache ({_first_line(exc)})") from None
    broken = [p for p in folder.rglob("*") if p.is_symlink() and not p.exists()]
    if broken:
        name = broken[0].relative_to(folder).as_posix()
        raise SourceError(f"{repo_id}: interrupted download ({name} is missing); run again online to finish it")
    local = [p.relative_to(folder).as_posix() for p in sorted(folder.rglob("*")) if _is_data(p)]
    files = pick(local, folder / "README.md")
    if not files:
        raise SourceError(f"{repo_id}: no data files for split {spec.split!r} in the cached snapshot")
    return ResolvedSource(repo_id, folder.name, tuple(folder / f for f in files))


def _download_card(repo_id: str, revision: str | None) -> Path | None:
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(repo_id, "README.md", repo_type="dataset", revision=revision))
    except Exception:  # the card only refines split selection; file names still work without it
        return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__

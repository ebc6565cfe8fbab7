"""The common layouts resolved from a file listing alone, without importing `datasets` (~0.5 s and pandas).

Handled here, with `datasets`' own rules (fsspec glob semantics; hidden files and `__dunder__` folders left
out unless a pattern names them; README.md and the other card files ignored; a split keeps files with a
data suffix; files in sorted order, pattern by pattern):
- the dataset card's `configs:` (named configs, the default one, `data_dir`, `data_files` as a pattern, a
  list of patterns, or a list of `{split, path}`), and a user's own hf:// path patterns;
- with no `configs:` (or a config without `data_files`), the sharded default layout that Hugging Face and
  harbor's exports write: `data/{split}-00000-of-00003.*` (the `default` config).

Everything else returns None and `datasets` resolves it (`layout`): the other default layouts (`train/`
folders, `*-train-*` names, a folder without split names), a config with `features`, several defaults or a
malformed entry, patterns with `**` inside a name, brackets around `/`, `.`/`..`, absolute paths or URLs, a
plain path that names no data file, and a layout whose splits come out empty (its errors are `datasets`').
tests/test_listing_layout.py checks the answers against `datasets`' resolver for each layout handled.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from .errors import SourceError, listed

_IGNORED = {
    "README.md",
    "config.json",
    "dataset_info.json",
    "dataset_infos.json",
    "dummy_data.zip",
    "dataset_dict.json",
}
"""Files `datasets` never takes as data unless a pattern names them."""
_CARD_YAML = re.compile(r"^(\s*---(?:\r\n|\r|\n))([\S\s]*?)((?:\r\n|\r|\n)---[ \t]*(\r\n|\n|$))")
"""The card's metadata block, as huggingface_hub finds it."""
_SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")
_SHARD_DIGITS = "[0-9][0-9][0-9][0-9][0-9]"
_SHARDED = f"data/{{split}}-{_SHARD_DIGITS}-of-{_SHARD_DIGITS}*.*"
_SHARD_NAME = re.compile(rf"(?P<split>.+)-{_SHARD_DIGITS}-of-{_SHARD_DIGITS}*.*")
_FIRST_SPLITS = ("train", "validation", "test")
_MAGIC = re.compile(r"[*?[]")


class Unsure(Exception):
    """The layout is not one this module resolves: `datasets` decides."""


def resolve(
    names: Sequence[str],
    config: str | None,
    card: Path | None,
    patterns: list[str] | None,
    extensions: Sequence[str],
) -> dict[str, list[str]] | None:
    """Every split's files (relative to the listing's root) among `names`, or None when unsure.

    Raises SourceError, with `datasets`' rules and our wording, for an unknown config or none chosen.
    """
    try:
        if patterns is not None:
            return _files(names, {"train": patterns}, "", extensions)
        return _from_card(names, config, card, extensions)
    except Unsure:
        return None


def _from_card(
    names: Sequence[str], config: str | None, card: Path | None, extensions: Sequence[str]
) -> dict[str, list[str]]:
    configs = _configs(card)
    if not configs:
        if config not in (None, "default"):
            raise SourceError(f"no config {config!r} (the dataset card names no configs)")
        return _files(names, _default_patterns(names, ""), "", extensions)
    defaults = [n for n, params in configs.items() if len(configs) == 1 or n == "default" or params.get("default")]
    if len(defaults) > 1:
        raise Unsure
    name = config or (defaults[0] if defaults else None)
    if name is None:
        raise SourceError(f"choose a config with --config ({listed(configs)})")
    if name not in configs:
        raise SourceError(f"no config {name!r} (configs: {listed(configs)}); choose one with --config")
    params = configs[name]
    root = _clean(params["data_dir"].strip("/")) if params.get("data_dir") else ""
    data_files = params.get("data_files")
    wanted = _sanitized(data_files) if data_files is not None else _default_patterns(names, root)
    return _files(names, wanted, root, extensions)


def _configs(card: Path | None) -> dict[str, dict[str, Any]]:
    """The card's `configs:` by name ({} without a card, a metadata block or configs)."""
    if card is None or not card.is_file():
        return {}
    import yaml  # type: ignore[import-untyped]

    try:
        with card.open(newline="", encoding="utf-8-sig") as f:
            match = _CARD_YAML.search(f.read())
        data = yaml.safe_load(match.group(2)) if match else {}
    except (OSError, ValueError, yaml.YAMLError):
        raise Unsure from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise Unsure
    entries = data.get("configs")
    if not entries:
        return {}
    if not isinstance(entries, list):
        raise Unsure
    configs: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("config_name"), str) or "features" in entry:
            raise Unsure
        params = {k: v for k, v in entry.items() if k != "config_name"}
        if params.get("data_dir") is not None and not isinstance(params["data_dir"], str):
            raise Unsure
        configs[entry["config_name"]] = params
    return configs


def _sanitized(data_files: Any) -> dict[str, list[str]]:
    """A config's `data_files` as {split: patterns}, for the forms `datasets` accepts; else Unsure."""
    if isinstance(data_files, str):
        return {"train": [data_files]}
    if not isinstance(data_files, list):
        raise Unsure
    if all(isinstance(p, str) for p in data_files):
        return {"train": list(data_files)}
    splits: dict[str, list[str]] = {}
    for item in data_files:
        if not isinstance(item, dict) or set(item) != {"split", "path"} or not isinstance(item["split"], str):
            raise Unsure
        path = item["path"]
        paths = path if isinstance(path, list) else [path]
        if (
            not _SPLIT_NAME.match(item["split"])
            or item["split"] in splits
            or not all(isinstance(p, str) for p in paths)
        ):
            raise Unsure
        splits[item["split"]] = paths
    return splits


def _default_patterns(names: Sequence[str], root: str) -> dict[str, list[str]]:
    """The sharded default layout's split patterns under `root`; Unsure for any other layout."""
    found = _matches(names, _join(root, _SHARDED.replace("{split}", "*")), None)
    if not found:
        raise Unsure
    splits = set()
    for path in found:
        match = _SHARD_NAME.search(path.rsplit("/", 1)[-1])
        if match is None or not _SPLIT_NAME.match(match["split"]):
            raise Unsure
        splits.add(match["split"])
    ordered = [s for s in _FIRST_SPLITS if s in splits] + sorted(splits - set(_FIRST_SPLITS))
    return {split: [_SHARDED.format(split=split)] for split in ordered}


def _files(
    names: Sequence[str], wanted: dict[str, list[str]], root: str, extensions: Sequence[str]
) -> dict[str, list[str]]:
    """{split: files} for `wanted` patterns relative to `root`; Unsure when every split comes out empty."""
    resolved: dict[str, list[str]] = {}
    for split, split_patterns in wanted.items():
        files: list[str] = []
        for pattern in split_patterns:
            full = _join(root, _clean(pattern))
            found = _matches(names, full, extensions)
            if not found and not _MAGIC.search(pattern):
                raise Unsure  # `datasets` reports a plain path that names no data file
            files += found
        resolved[split] = files
    if not any(resolved.values()):
        raise Unsure
    return resolved


def _matches(names: Sequence[str], pattern: str, extensions: Sequence[str] | None) -> list[str]:
    """The names `pattern` matches as fsspec globs them, filtered as `datasets.data_files.resolve_pattern` does."""
    parts = pattern.split("/")
    ignored = _IGNORED - {parts[-1]}
    hidden = _hidden(parts)
    special = _special(parts[:-1])
    out = []
    for name in sorted(names):
        path = name.split("/")
        if path[-1] in ignored or not _glob(path, parts) or _hidden(path) != hidden or _special(path[:-1]) != special:
            continue
        if extensions is not None and not any("." + s in extensions for s in path[-1].split(".")[1:]):
            continue
        out.append(name)
    return out


def _glob(path: list[str], parts: list[str]) -> bool:
    """Whether path segments match pattern segments: `**` alone is any number of segments (at least one
    at the end, where it must match a file), anything else one segment, as fnmatch matches it."""
    if not parts:
        return not path
    head = parts[0]
    if head == "**":
        if len(parts) == 1:
            return bool(path)
        return any(_glob(path[i:], parts[1:]) for i in range(len(path) + 1))
    return bool(path) and fnmatchcase(path[0], head) and _glob(path[1:], parts[1:])


def _hidden(parts: list[str]) -> int:
    return sum(1 for p in parts if p.startswith(".") and set(p) != {"."})


def _special(parts: list[str]) -> int:
    return sum(1 for p in parts if p.startswith("__"))


def _clean(pattern: str) -> str:
    """A relative pattern this module can glob, else Unsure."""
    parts = pattern.split("/")
    if (
        not pattern
        or "://" in pattern
        or "::" in pattern
        or pattern.startswith(("/", "~"))
        or "\\" in pattern
        or any(p in ("", ".", "..") for p in parts)
        or any("**" in p and p != "**" for p in parts)
        or any(p.count("[") != p.count("]") for p in parts)
    ):
        raise Unsure
    return pattern


def _join(root: str, pattern: str) -> str:
    return f"{root}/{pattern}" if root else pattern

"""A hub listing resolved without `datasets` (`listing_layout`): the same files, splits and errors as
`datasets`' own resolver for every layout it handles, `datasets` for the rest, and a first open from the
hub that imports neither `datasets` nor pandas."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracetui.data import layout, listing_layout
from tracetui.data.errors import SourceError
from tracetui.demo import write_demo

from .hub_data import write_traces
from .hub_server import FakeHub

HARBOR = ["data/train-00000-of-00003.parquet", "data/train-00001-of-00003.parquet", "data/train-00002-of-00003.parquet"]
HARBOR_CARD = (
    "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/train-*\n---\n# x\n"
)
MESSY = [
    ".gitattributes",
    "README.md",
    "data/README.md",
    "data/.hidden-00000-of-00001.parquet",
    "data/__pycache__/train-00000-of-00001.parquet",
    "data/test-00000-of-00001.parquet",
    "data/train-00000-of-00002.parquet",
    "data/train-00001-of-00002.parquet",
    "data/train-00001-of-00002.parquet.bak",
    "data/validation-00000-of-00001.jsonl",
    "data/validation-00000-of-00001.csv",
    "data/zeta-00000-of-00001.arrow",
    "data/extra-00000-of-00001.parquet",
    "data/nested/train-00000-of-00001.parquet",
    "other/a.parquet",
    "other/b.jsonl",
    "other/sub/c.parquet",
    "other/.cache/d.parquet",
    "v2/data/train-00000-of-00001.parquet",
    "v2/data/test-00000-of-00001.parquet",
]
CONFIGS = """---
license: mit
configs:
- config_name: first
  data_files: other/*.parquet
- config_name: lists
  data_files:
  - other/*.parquet
  - other/**
- config_name: splits
  default: true
  data_files:
  - split: train
    path: [data/train-*, other/sub/*]
  - split: holdout
    path: data/test-00000-of-00001.parquet
- config_name: dir
  data_dir: v2
- config_name: dir_files
  data_dir: /other/
  data_files: "**/*.parquet"
- config_name: hidden
  data_files: other/.*/*
---
# several configs
"""

# (names, card, config, patterns): each resolved by listing_layout and by datasets
HANDLED = {
    "harbor export": (HARBOR + ["README.md", ".gitattributes"], HARBOR_CARD, None, None),
    "harbor export, no card": (HARBOR, None, None, None),
    "sharded, many splits, no card": (MESSY, None, None, None),
    "sharded, card without configs": (MESSY, "---\nlicense: mit\n---\n# x\n", "default", None),
    "sharded, card without metadata": (MESSY, "# just text\n", None, None),
    "configs: the default one": (MESSY, CONFIGS, None, None),
    "configs: a pattern": (MESSY, CONFIGS, "first", None),
    "configs: a list of patterns": (MESSY, CONFIGS, "lists", None),
    "configs: data_dir": (MESSY, CONFIGS, "dir", None),
    "configs: data_dir and data_files": (MESSY, CONFIGS, "dir_files", None),
    "configs: a hidden folder named": (MESSY, CONFIGS, "hidden", None),
    "configs: the only one is the default": (MESSY, HARBOR_CARD.replace("default", "only"), None, None),
    "path pattern: a folder": (MESSY, None, None, ["data/**"]),
    "path pattern: a wildcard": (MESSY, None, None, ["*/*.parquet"]),
    "path pattern: a file": (MESSY, None, None, ["data/extra-00000-of-00001.parquet"]),
}
# layouts left to datasets
UNHANDLED = {
    "split folders": (["train/a.parquet", "test/b.parquet"], None, None, None),
    "split in the name": (["x-train-1.parquet", "x-test-1.parquet"], None, None, None),
    "a flat folder": (["a.parquet", "b.parquet"], None, None, None),
    "a plain path that is a folder": (MESSY, "---\nconfigs:\n- config_name: c\n  data_files: other\n---\n", None, None),
    "features": (HARBOR, HARBOR_CARD.replace("  data_files", "  features: []\n  data_files"), None, None),
    "two defaults": (
        MESSY,
        CONFIGS.replace("- config_name: first", "- config_name: first\n  default: true"),
        None,
        None,
    ),
    "a malformed entry": (MESSY, "---\nconfigs:\n- config_name: c\n  data_files: {train: x}\n---\n", None, None),
    "no data files": (["data/train-00000-of-00001.csv"], None, None, None),
}


def card_file(tmp_path: Path, text: str | None) -> Path | None:
    if text is None:
        return None
    card = tmp_path / "README.md"
    card.write_text(text)
    return card


def by_datasets(names, card, config, patterns) -> dict[str, list[str]]:
    with layout._listed(names) as base:
        return layout._resolved_by_datasets(base, config, card, patterns)


@pytest.mark.parametrize("case", HANDLED)
def test_a_handled_layout_gives_what_datasets_gives(case, tmp_path):
    names, text, config, patterns = HANDLED[case]
    card = card_file(tmp_path, text)
    ours = listing_layout.resolve(names, config, card, patterns, list(layout.FORMATS))
    assert ours is not None, "resolved without datasets"
    assert ours == by_datasets(names, card, config, patterns)
    assert any(ours.values())


@pytest.mark.parametrize("case", UNHANDLED)
def test_other_layouts_are_left_to_datasets(case, tmp_path):
    names, text, config, patterns = UNHANDLED[case]
    card = card_file(tmp_path, text)
    assert listing_layout.resolve(names, config, card, patterns, list(layout.FORMATS)) is None


def outcome(call):
    try:
        return call()
    except SourceError as exc:
        return type(exc), str(exc)


@pytest.mark.parametrize(
    ("text", "config", "split"),
    [
        (CONFIGS, "nope", "train"),  # no such config
        (CONFIGS.replace("  default: true\n", ""), None, "train"),  # no default: choose one
        (None, "other", "train"),  # no configs at all
        (CONFIGS, None, "nope"),  # no such split
        (None, None, "zeta"),
        (CONFIGS, "dir", "test"),
        (None, None, "validation"),  # a split of one builder only
    ],
)
def test_the_same_split_or_error_as_datasets(text, config, split, tmp_path):
    card = card_file(tmp_path, text)

    def ours():
        return layout._resolve(None, MESSY, split, config, card, None)

    def theirs():
        return layout._split_of(by_datasets(MESSY, card, config, None), split)

    assert outcome(ours) == outcome(theirs)


def test_a_layout_left_to_datasets_still_opens(tmp_path):
    names = ["train/a.parquet", "train/b.parquet", "test/c.parquet"]
    files = layout.split_files(None, ["listing", tmp_path.name], "test", None, None, names=names, name="org/x")
    assert files == ["test/c.parquet"]


OPEN = """
import sys
from tracetui.cli import keep_pandas_out
keep_pandas_out()  # as the app's process does: pyarrow asks for pandas, a resolver would need it
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
session = open_session(prepare([SourceSpec("org/traces")], progressive=True))
assert session.remote == [0] and len(session) > 0, session
http = sys.modules.get("huggingface_hub.utils._http")
client = ["an HTTP client"] if http is not None and http._GLOBAL_CLIENT is not None else []
print(" ".join(sorted(set(sys.argv[1:]) & set(sys.modules)) + client) or "none")
"""
NOT_IMPORTED = ("datasets", "pandas", "huggingface_hub.file_download")
"""What a first open from a hub does without: the split resolver and pandas, and the hub client's
downloads; nor does it build the hub client's HTTP session (the listing, the card and the range reads go
on connections of our own)."""


@pytest.mark.parametrize("kind", ["harbor export", "demo, no card"])
def test_a_first_open_from_the_hub_imports_no_resolver_pandas_or_http_client(kind, tmp_path):
    folder = tmp_path / "repo"
    if kind == "demo, no card":
        write_demo(folder, rows=200, seed=0)
        (folder / "README.md").unlink(missing_ok=True)
    else:
        write_traces(folder, 300, shards=2, text=50, episodes=4)
    hub = FakeHub({"org/traces": folder}).start()
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
        env.update(HF_ENDPOINT=hub.url, HF_HUB_DISABLE_TELEMETRY="1")  # as the command line sets it
        command = [sys.executable, "-c", OPEN, *NOT_IMPORTED]
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "none"
        assert any(path.endswith(".parquet") and ranged for _, path, ranged in hub.requests), "read remotely"
    finally:
        hub.__exit__(None, None, None)

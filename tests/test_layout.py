"""Which files make a split: resolved by `datasets` exactly as `load_dataset` does (the layouts the hub
accepts, named configs), remembered so that a warm open never imports `datasets`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracetui.data.errors import SourceError
from tracetui.data.source_kinds import resolve
from tracetui.data.sources import SourceSpec

from .conftest import trial_rows, write_parquet
from .hub_server import FakeHub, use_hub

ROWS = trial_rows("a", "a__1", 2, "1.0")
CONFIGS = """---
configs:
- config_name: small
  data_files: small/*.parquet
  default: true
- config_name: full
  data_files:
  - split: train
    path: full/train-*
  - split: test
    path: full/test-*
- config_name: nested
  data_dir: nested
---
"""
LAYOUTS = {
    "sharded": [
        "data/train-00000-of-00002.parquet",
        "data/train-00001-of-00002.parquet",
        "data/test-00000-of-00001.parquet",
    ],
    "split-folders": ["train/part-0.jsonl", "train/part-1.jsonl", "test/part-0.jsonl"],
    "split-in-name": ["traces-train-00.parquet", "traces-train-01.parquet", "traces-test-00.parquet"],
    "no-splits": ["one.parquet", "two.parquet"],
    "configs": [
        "small/x.parquet",
        "full/train-0.parquet",
        "full/test-0.parquet",
        "nested/train-0.parquet",
        "nested/test-0.parquet",
    ],
}


def make(folder: Path, files: list[str], card: str | None = None) -> Path:
    for name in files:
        path = folder / name
        if name.endswith(".jsonl"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(__import__("json").dumps(r) for r in ROWS))
        else:
            write_parquet(path, ROWS)
    if card:
        (folder / "README.md").write_text(card)
    return folder


def ours(folder: Path, split: str = "train", config: str | None = None) -> list[str]:
    source = resolve(SourceSpec(str(folder), split=split, config=config))
    return sorted(f.relative_to(folder).as_posix() for f in source.files)


def load_datasets_files(folder: Path, split: str, config: str | None) -> list[str]:
    """What `datasets` itself picks (its builder's data files), for comparison."""
    import datasets

    builder = datasets.load_dataset_builder(str(folder), name=config)
    return sorted(Path(f).relative_to(folder).as_posix() for f in builder.config.data_files[split])


@pytest.mark.parametrize(
    ("layout", "split", "config"),
    [
        ("sharded", "train", None),
        ("sharded", "test", None),
        ("split-folders", "train", None),
        ("split-folders", "test", None),
        ("split-in-name", "train", None),
        ("split-in-name", "test", None),
        ("no-splits", "train", None),
        ("configs", "train", None),
        ("configs", "train", "full"),
        ("configs", "test", "full"),
        ("configs", "test", "nested"),
    ],
)
def test_splits_and_configs_as_load_dataset_picks_them(tmp_path, layout, split, config):
    folder = make(tmp_path / layout, LAYOUTS[layout], CONFIGS if layout == "configs" else None)
    picked = ours(folder, split, config)
    assert picked and picked == load_datasets_files(folder, split, config)


def test_unknown_splits_and_configs_are_one_line(tmp_path):
    sharded = make(tmp_path / "sharded", LAYOUTS["sharded"])
    with pytest.raises(SourceError, match=r"no split 'validation' \(splits: train, test\)"):
        resolve(SourceSpec(str(sharded), split="validation"))
    configs = make(tmp_path / "configs", LAYOUTS["configs"], CONFIGS)
    with pytest.raises(SourceError, match=r"no config 'huge' \(configs: small, full, nested\)"):
        resolve(SourceSpec(str(configs), config="huge"))
    undecided = make(
        tmp_path / "undecided",
        ["a/x.parquet", "b/x.parquet"],
        "---\nconfigs:\n- config_name: a\n  data_files: a/*\n- config_name: b\n  data_files: b/*\n---\n",
    )
    with pytest.raises(SourceError, match="choose a config with --config"):
        resolve(SourceSpec(str(undecided)))


def test_a_hub_repo_resolves_like_its_folder_and_only_once(tmp_path, monkeypatch):
    folder = make(tmp_path / "repo", LAYOUTS["configs"], CONFIGS)
    with FakeHub({"org/configs": folder}) as hub:
        use_hub(monkeypatch, hub.url)
        for split, config in (("train", None), ("test", "full"), ("test", "nested")):
            source = resolve(SourceSpec("org/configs", split=split, config=config))
            assert sorted(source.hub_files.paths) == ours(folder, split, config)
        hub.reset_counts()
        again = resolve(SourceSpec("org/configs", split="test", config="full"))
        assert sorted(again.hub_files.paths) == ["full/test-0.parquet"]
        assert [path for _, path, _ in hub.requests] == [
            "/api/datasets/org/configs"
        ]  # the commit; the rest is remembered


WARM = """
import sys
from tracetui.cli import keep_pandas_out
if len(sys.argv) > 2:
    keep_pandas_out()  # as in the app's process (datasets could not even import)
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
session = open_session(prepare([SourceSpec(sys.argv[1])]))
assert len(session) > 0
heavy = ("datasets", "pandas", "huggingface_hub", "fsspec", "tracetui.data.remote", "tracetui.data.hub_metadata", "tracetui.data.hub", "tracetui.data.convert")
print(" ".join(sorted(name for name in heavy if name in sys.modules)))
"""


def test_a_warm_open_imports_neither_datasets_nor_the_remote_code(tmp_path):
    folder = make(tmp_path / "sharded", LAYOUTS["sharded"])
    env = {**os.environ}
    first = subprocess.run(
        [sys.executable, "-c", WARM, str(folder)], capture_output=True, text=True, env=env, timeout=120
    )
    assert first.returncode == 0, first.stderr
    assert "datasets" in first.stdout.split()  # the first open resolved the layout (and converted)
    warm = subprocess.run(
        [sys.executable, "-c", WARM, str(folder), "app"], capture_output=True, text=True, env=env, timeout=120
    )
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout.split() == []


def test_a_folders_file_names_are_what_rglob_finds(tmp_path):
    """What a local folder's resolution is remembered under: its files, as `rglob` lists them (read from
    the directory entries, not a stat per file): links to files in, linked folders not entered, hidden
    files and nested folders in, an unreadable folder skipped."""
    from tracetui.data.layout import file_names

    (tmp_path / "data" / "deep").mkdir(parents=True)
    for name in ("README.md", ".hidden", "data/train-00000-of-00001.parquet", "data/deep/x.jsonl"):
        (tmp_path / name).write_text("x")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "y.parquet").write_text("y")
    (tmp_path / "link.parquet").symlink_to(tmp_path / "data" / "train-00000-of-00001.parquet")
    (tmp_path / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "broken.parquet").symlink_to(tmp_path / "gone")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "z.parquet").write_text("z")
    locked.chmod(0)
    try:
        expected = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
        assert file_names(tmp_path) == expected
        assert "link.parquet" in expected and "linked/y.parquet" not in expected and ".hidden" in expected
        assert file_names(tmp_path / "nothing-here") == []
    finally:
        locked.chmod(0o700)

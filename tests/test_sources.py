"""Opening sources: the hub path offline against a real-layout HF cache, local layouts, CLI errors."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec

from .conftest import GOLDEN, trial_rows, write_parquet

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def build_hub_cache(hf_home: Path, repo: str, files: dict[str, bytes], broken: tuple[str, ...] = ()) -> Path:
    """The real layout: blobs named by hash, snapshot files as relative symlinks, refs/main."""
    root = hf_home / "hub" / ("datasets--" + repo.replace("/", "--"))
    (root / "refs").mkdir(parents=True)
    (root / "refs" / "main").write_text(COMMIT)
    (root / "blobs").mkdir()
    for name, data in files.items():
        digest = hashlib.sha256(data).hexdigest()
        if name not in broken:
            (root / "blobs" / digest).write_bytes(data)
        else:
            (root / "blobs" / f"{digest}.incomplete").write_bytes(data[:10])
        link = root / "snapshots" / COMMIT / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(root / "blobs" / digest, link.parent))
    return root


def parquet_bytes(tmp: Path, rows: list[dict]) -> bytes:
    return write_parquet(tmp / "x.parquet", rows).read_bytes()


def run(code: str, env_home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HOME": str(env_home), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


OPEN = """
from tracetui.data.session import prepare, open_session
from tracetui.data.sources import SourceSpec
import sys
sources = prepare([SourceSpec(sys.argv[1] if len(sys.argv) > 1 else {source!r}, revision={revision!r})])
session = open_session(sources)
print(sources[0].dataset_id, sources[0].revision, len(session), session.num_rows)
"""


def test_hub_id_opens_offline_from_the_hf_cache(tmp_path):
    hf_home = tmp_path / "hf"
    rows_train = trial_rows("regex-log", "regex-log__a", 3, "1.0") + trial_rows("fix-git", "fix-git__b", 2, "0.0")
    rows_test = trial_rows("other", "other__c", 1, "1.0")
    card = b"---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/train-*\n  - split: test\n    path: data/test-*\n---\n# demo\n"
    build_hub_cache(
        hf_home,
        "laion/a1-demo",
        {
            "README.md": card,
            "data/train-00000-of-00001.parquet": parquet_bytes(tmp_path, rows_train),
            "data/test-00000-of-00001.parquet": parquet_bytes(tmp_path, rows_test),
        },
    )
    result = run(OPEN.format(source="laion/a1-demo", revision=None), hf_home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["laion/a1-demo", COMMIT, "2", "5"]
    # hf:// paths reach the same cache
    result = run(OPEN.format(source="hf://datasets/laion/a1-demo/data/test-*.parquet", revision=None), hf_home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[2:] == ["1", "1"]


def test_hub_errors_offline_are_one_line(tmp_path):
    hf_home = tmp_path / "hf"
    build_hub_cache(
        hf_home,
        "org/partial",
        {"data/train-00000-of-00001.parquet": b"PAR1" * 100},
        broken=("data/train-00000-of-00001.parquet",),
    )
    env = {**os.environ, "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1"}
    for source, message in (
        ("org/never-downloaded", "not in the local Hugging Face cache"),
        ("org/partial", "interrupted download"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "tracetui", source], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and message in done.stderr and "Traceback" not in done.stderr


def test_cli_bad_sources_exit_2_with_one_line(tmp_path):
    (tmp_path / "corrupt.parquet").write_bytes(b"PAR1 garbage")
    (tmp_path / "empty").mkdir()
    for source in (str(tmp_path / "nope.parquet"), str(tmp_path / "corrupt.parquet"), str(tmp_path / "empty")):
        done = subprocess.run([sys.executable, "-m", "tracetui", source], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("tracetui: ") and done.stderr.count("\n") == 1
        assert "Traceback" not in done.stderr
    debug = subprocess.run(
        [sys.executable, "-m", "tracetui", "--debug", str(tmp_path / "nope.parquet")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" in debug.stderr


def test_cli_help_and_version():
    done = subprocess.run([sys.executable, "-m", "tracetui", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "SOURCE" in done.stdout and "demo" in done.stdout
    done = subprocess.run([sys.executable, "-m", "tracetui", "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("tracetui ")


def test_local_layouts(tmp_path):
    rows = trial_rows("a", "a__1", 2, "1.0") + trial_rows("b", "b__1", 1, "0.0")
    # hub layout folder with two splits: only train is read
    write_parquet(tmp_path / "hub" / "data" / "train-00000-of-00001.parquet", rows)
    write_parquet(tmp_path / "hub" / "data" / "test-00000-of-00001.parquet", trial_rows("c", "c__1", 1, "1.0"))
    assert len(open_session(prepare([SourceSpec(str(tmp_path / "hub"))]))) == 2
    assert len(open_session(prepare([SourceSpec(str(tmp_path / "hub"), split="test")]))) == 1
    # Arrow stream shards, as the datasets cache writes them
    table = pa.Table.from_pylist(rows)
    (tmp_path / "arrow").mkdir()
    with (
        pa.OSFile(str(tmp_path / "arrow" / "data-00000-of-00001.arrow"), "wb") as sink,
        pa.ipc.new_stream(sink, table.schema) as writer,
    ):
        writer.write_table(table)
    (tmp_path / "arrow" / "state.json").write_text(
        json.dumps({"_data_files": [{"filename": "data-00000-of-00001.arrow"}]})
    )
    (tmp_path / "arrow" / "dataset_info.json").write_text("{}")
    assert len(open_session(prepare([SourceSpec(str(tmp_path / "arrow"))]))) == 2
    # JSON list of rows (the golden files) and JSON lines
    assert len(open_session(prepare([SourceSpec(str(GOLDEN / "openhands_hello-world.traces.json"))]))) == 1
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    assert len(open_session(prepare([SourceSpec(str(tmp_path / "rows.jsonl"))]))) == 2


def test_datasets_save_to_disk_folder(tmp_path):
    import datasets

    rows = trial_rows("a", "a__1", 2, "1.0")
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "saved"))
    session = open_session(prepare([SourceSpec(str(tmp_path / "saved"))]))
    assert len(session) == 1 and len(session.history(0).messages) == 4


def test_more_bad_sources(tmp_path):
    # a parquet file cut short in the middle (an interrupted copy)
    whole = write_parquet(tmp_path / "whole.parquet", trial_rows("a", "a__1", 3, "1.0")).read_bytes()
    (tmp_path / "truncated.parquet").write_bytes(whole[: len(whole) // 2])
    done = subprocess.run(
        [sys.executable, "-m", "tracetui", str(tmp_path / "truncated.parquet")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "not a readable parquet" in done.stderr and done.stderr.count("\n") == 1
    # invalid JSON is one line too; invalid UTF-8 inside JSON is not fatal
    (tmp_path / "broken.jsonl").write_text('{"conversations": [')
    done = subprocess.run(
        [sys.executable, "-m", "tracetui", str(tmp_path / "broken.jsonl")], capture_output=True, text=True, timeout=120
    )
    # (conversion happens in the app's worker: the last line, after the terminal is restored)
    last = re.split(r"\x1b\[[0-9;?<>$]*[a-zA-Z]", done.stderr)[-1]
    assert done.returncode == 2 and last.startswith("tracetui: broken.jsonl: invalid JSON") and last.count("\n") == 1
    (tmp_path / "latin1.jsonl").write_bytes(
        b'{"conversations": [{"role": "user", "content": "caf\xe9"}], "task": "t"}\n'
    )
    session = open_session(prepare([SourceSpec(str(tmp_path / "latin1.jsonl"))]))
    assert session.history(0).messages[0].content == "caf\ufffd"


def test_permission_denied_is_one_line(tmp_path, monkeypatch):
    """Root (as tests and CI run) reads every file, so the denial is simulated where the kernel would answer."""
    from tracetui.data.errors import SourceError

    secret = write_parquet(tmp_path / "secret" / "t.parquet", trial_rows("a", "a__1", 1, "1.0"))
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != secret)
    with pytest.raises(SourceError, match="permission denied"):
        prepare([SourceSpec(str(secret))])
    with pytest.raises(SourceError, match="permission denied"):
        prepare([SourceSpec(str(secret.parent))])


def test_unreachable_hub_falls_back_to_the_cache(tmp_path):
    """Online mode, but the hub refuses connections (a closed loopback port): the cached snapshot opens."""
    hf_home = tmp_path / "hf"
    build_hub_cache(
        hf_home,
        "org/cached",
        {"data/train-00000-of-00001.parquet": parquet_bytes(tmp_path, trial_rows("a", "a__1", 2, "1.0"))},
    )
    env = {**os.environ, "HF_HOME": str(hf_home), "HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_ETAG_TIMEOUT": "2"}
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("HF_DATASETS_OFFLINE", None)
    code = OPEN.format(source="org/cached", revision=None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["org/cached", COMMIT, "1", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "tracetui", "org/not-cached"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 2 and "cannot reach the Hugging Face hub" in done.stderr and done.stderr.count("\n") == 1


def test_a_folder_that_holds_no_dataset_says_what_was_looked_for(tmp_path):
    """A folder in no dataset layout and no harbor job layout: one line naming every layout looked for
    (the split resolver's own message used to break on such folders: `TypeError: sequence item 0:
    expected str instance, NamedSplit found`)."""
    folder = tmp_path / "notes"
    (folder / "misc").mkdir(parents=True)
    (folder / "misc" / "readme.md").write_text("nothing to read")
    (folder / "todo.txt").write_text("nothing either")
    done = subprocess.run(
        [sys.executable, "-m", "tracetui", "stats", str(folder)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"tracetui: {folder}: no dataset found (looked for ")
    assert "save_to_disk" in done.stderr and "data/train-*.parquet" in done.stderr
    assert "harbor job folders" in done.stderr


def test_split_names_of_any_kind_reach_the_message(tmp_path):
    """`datasets` names the splits of a default layout with NamedSplit, a dataset_dict.json with anything."""
    from tracetui.data.errors import SourceError

    write_parquet(tmp_path / "only-test" / "data" / "test-00000-of-00001.parquet", trial_rows("a", "a__1", 1, "1.0"))
    with pytest.raises(SourceError, match=r"no split 'train' \(splits: test\)"):
        prepare([SourceSpec(str(tmp_path / "only-test"))])
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "dataset_dict.json").write_text('{"splits": [2024, 2025]}')
    with pytest.raises(SourceError, match=r"no split 'train' \(splits: 2024, 2025\)"):
        prepare([SourceSpec(str(saved))])
    (saved / "dataset_dict.json").write_text('{"splits": 7}')
    with pytest.raises(SourceError, match=r"dataset_dict\.json: unreadable"):
        prepare([SourceSpec(str(saved))])

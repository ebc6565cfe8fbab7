"""The cache heals and stays bounded: a damaged or partial file is rebuilt with one line (in every command
and in the app), a conversion killed at any point leaves nothing behind that the next open trips on,
superseded conversions go, the size bound evicts the least recently used and never an open one, and
`tracetui cache` lists and clears it."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracetui.data import cache_folders, findings_index, trial_groups, verifier_index
from tracetui.data.findings_index import build_findings_index
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.data.verifier_index import build_verifier_index
from tracetui.paths import cache_dir

from .conftest import trial_rows, write_parquet
from .hub_data import write_traces

CONVERSION_FILES = ("meta.arrow", "data.arrow", "manifest.json")
GROUPS = f"trials-v{trial_groups.VERSION}.npz"
KEPT_BESIDE = (GROUPS, f"trials-v{trial_groups.VERSION}.json", verifier_index.INDEX_FILE, findings_index.INDEX_FILE)
DAMAGES = {
    "truncated": lambda path: os.truncate(path, path.stat().st_size // 3),
    "garbage": lambda path: path.write_bytes(b"\x00garbage" * max(1, path.stat().st_size // 8)),
}


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """One parquet file (a file resolves without `datasets`, so the subprocesses start quickly)."""
    folder = write_traces(tmp_path_factory.mktemp("small"), 300, shards=1, text=80, episodes=6)
    return next((folder / "data").glob("*.parquet"))


def opened(folder: Path):
    """A session of `folder` with both indexes built: every file the cache keeps beside a conversion."""
    session = open_session(prepare([SourceSpec(str(folder))]))
    build_verifier_index(session)
    build_findings_index(session)
    return session


def conversion_of(session) -> Path:
    return session.datasets[0].folder


def released() -> None:
    """Forget the folders this process holds, as if it had exited (other processes' view of the cache)."""
    for folder in list(cache_folders._held):
        cache_folders.release(folder)


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("name", CONVERSION_FILES + KEPT_BESIDE)
def test_a_damaged_file_of_any_kind_is_rebuilt_with_one_line(name, damage, small, caplog):
    first = opened(small)
    folder = conversion_of(first)
    trials, history = len(first), first.history(len(first) - 1).messages
    released()
    DAMAGES[damage](folder / name)
    with caplog.at_level(logging.WARNING, logger="tracetui"):
        again = opened(small)
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1 and lines[0].startswith(f"cache for {small} was damaged") and "rebuilding" in lines[0]
    assert len(again) == trials and again.history(trials - 1).messages == history
    assert cache_folders.sound(conversion_of(again)) is not None
    caplog.clear()
    released()
    opened(small)
    assert caplog.records == []  # rebuilt: the next open says nothing


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tracetui", *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize(
    ("name", "damage"), [("data.arrow", "truncated"), ("meta.arrow", "garbage"), (GROUPS, "truncated")]
)
def test_the_commands_rebuild_a_damaged_cache_with_one_line(name, damage, small):
    assert run_cli("findings", str(small)).returncode == 0
    (folder,) = [entry.folder for entry in cache_folders.entries()]
    DAMAGES[damage](folder / name)
    rebuilt = run_cli("stats", str(small))  # the first open rebuilds, and says so in one line
    assert rebuilt.returncode == 0 and rebuilt.stdout.startswith("model"), rebuilt.stderr
    assert rebuilt.stderr.count("\n") == 1 and rebuilt.stderr.startswith(f"tracetui: cache for {small} was damaged")
    again = run_cli("findings", str(small))
    assert again.returncode == 0 and "damaged" not in again.stderr and "Traceback" not in again.stderr


@pytest.mark.parametrize("name", ["data.arrow", "meta.arrow", GROUPS])
async def test_the_app_opens_a_damaged_cache_and_says_it_rebuilds(name, small):
    from .ui_helpers import make_app, wait_loaded

    trials = len(opened(small))
    (folder,) = [entry.folder for entry in cache_folders.entries()]
    released()
    DAMAGES["truncated"](folder / name)
    app = make_app(prepare([SourceSpec(str(small))]))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.pause()
        assert len(screen.session) == trials
        messages = [notification.message for notification in app._notifications]
        assert any(m.startswith(f"cache for {small} was damaged") for m in messages), messages
    assert app.return_code in (None, 0)


# --- killed while converting ---------------------------------------------------------------------
CONVERT = """
import sys
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
sources = prepare([SourceSpec(sys.argv[1])])
started = []

def progress(fraction, message):
    if not started:
        started.append(print("converting", flush=True))

open_session(sources, progress)
"""


@pytest.fixture(scope="module")
def larger(tmp_path_factory) -> Path:
    folder = write_traces(tmp_path_factory.mktemp("larger"), 12_000, shards=1, text=400, episodes=4)
    return next((folder / "data").glob("*.parquet"))


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(delay=st.floats(min_value=0.0, max_value=0.4))  # converting it takes ~0.3 s
def test_a_conversion_killed_at_any_point_leaves_nothing_in_the_way(delay, larger, monkeypatch, tmp_path_factory):
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(tmp_path_factory.mktemp("killed")))
    child = subprocess.Popen(
        [sys.executable, "-c", CONVERT, str(larger)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert child.stdout is not None and child.stdout.readline() == "converting\n"
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    session = open_session(prepare([SourceSpec(str(larger))]))
    assert len(session) > 0 and session.num_rows == 12_000
    assert not list(cache_dir().glob(".converting-*"))  # swept
    assert [entry.kind for entry in cache_folders.entries()] == ["conversion"]
    released()


# --- bounded -------------------------------------------------------------------------------------
def write_source(path: Path, trials: int, seed: str) -> Path:
    rows = [row for n in range(trials) for row in trial_rows(f"task-{n}", f"task-{n}__{seed}", 3, "1.0")]
    return write_parquet(path, rows)


def test_a_newer_conversion_of_the_same_source_supersedes_the_older(tmp_path):
    source = write_source(tmp_path / "runs.parquet", 3, "a")
    other = write_source(tmp_path / "other.parquet", 2, "b")
    open_session(prepare([SourceSpec(str(source))]))
    open_session(prepare([SourceSpec(str(other))]))
    old = {entry.folder for entry in cache_folders.entries()}
    released()
    time.sleep(0.01)
    write_source(source, 5, "c")  # re-exported: new size and mtime, so a new conversion
    session = open_session(prepare([SourceSpec(str(source))]))
    assert len(session) == 5
    kept = {entry.source: entry.folder for entry in cache_folders.entries()}
    assert set(kept) == {str(source), str(other)} and kept[str(source)] not in old and kept[str(other)] in old


HOLD = """
import sys
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
session = open_session(prepare([SourceSpec(sys.argv[1])]))
print("open", flush=True)
sys.stdin.read()
"""


def test_the_size_bound_evicts_the_least_recently_used_and_never_an_open_one(tmp_path):
    a, b, c = (write_source(tmp_path / f"{name}.parquet", 40, name) for name in "abc")
    folders = [conversion_of(open_session(prepare([SourceSpec(str(source))]))) for source in (a, b, c)]
    for number, folder in enumerate(folders):
        os.utime(folder / cache_folders.NAME, (1000 + number, 1000 + number))  # a used first, c last
    released()
    sizes = {entry.source: entry.size for entry in cache_folders.entries()}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(a)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        os.utime(folders[0] / cache_folders.NAME, (1000, 1000))  # opened long ago, and open still
        cache_folders.trim(sizes[str(a)] + sizes[str(c)] + sizes[str(b)] // 2)  # one of the three must go
        assert {entry.source for entry in cache_folders.entries()} == {str(a), str(c)}  # not a, the open one: b
    finally:
        holder.communicate("", timeout=30)
    cache_folders.trim(sizes[str(c)] + sizes[str(b)] // 2)
    assert {entry.source for entry in cache_folders.entries()} == {str(c)}  # a closed: the least recently used
    done = run_cli("stats", str(a), "--cache-size", "1")  # a new conversion is kept, whatever the bound
    assert done.returncode == 0, done.stderr
    assert {entry.source for entry in cache_folders.entries()} == {str(a)}


def test_tracetui_cache_lists_and_clears(tmp_path):
    a, b = (write_source(tmp_path / f"{name}.parquet", 4, name) for name in "ab")
    for source in (a, b):
        open_session(prepare([SourceSpec(str(source))]))
    released()
    listed = run_cli("cache")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["source", "kind", "size", "last_used"]
    assert {line.split()[0] for line in lines[2:4]} == {str(a), str(b)} and "converted" in lines[2]
    assert lines[-1].startswith("") and f"in {cache_dir()}" in lines[-1]
    cleared = run_cli("cache", "clear", str(a))
    assert cleared.returncode == 0 and cleared.stderr.startswith("removed 1 from the cache")
    assert [entry.source for entry in cache_folders.entries()] == [str(b)]
    nothing = run_cli("cache", "clear", str(a))
    assert nothing.returncode == 0 and f"nothing in the cache for {a}" in nothing.stderr
    assert run_cli("cache", "clear").returncode == 0
    assert cache_folders.entries() == [] and run_cli("cache").stdout.startswith("(the cache is empty)")


@pytest.fixture(scope="module")
def hub_traces(tmp_path_factory) -> Path:
    """3,000 rows in 3 shards of 1,000-row row groups, served by a stand-in hub."""
    return write_traces(tmp_path_factory.mktemp("hub"), 3_000, shards=3, text=200, episodes=8)


@pytest.mark.parametrize("name", ["meta.arrow", "footer-1.bin", "groups/0.arrow", "verifier-logs.arrow"])
def test_a_damaged_remote_folder_is_rebuilt_with_one_line(name, hub_traces, monkeypatch, caplog):
    """A hub dataset read remotely keeps its metadata, footers, fetched row groups and verifier logs."""
    from .hub_server import FakeHub, use_hub

    with FakeHub({"org/traces": hub_traces}) as hub:
        use_hub(monkeypatch, hub.url)
        first = open_session(prepare([SourceSpec("org/traces")], progressive=True))
        first.fetch(0)
        first.gather_verifier_logs()
        first.datasets[0].kept()
        folder, history = first.datasets[0].folder, first.history(0).messages
        released()
        DAMAGES["truncated"](folder / name)
        with caplog.at_level(logging.WARNING, logger="tracetui"):
            again = open_session(prepare([SourceSpec("org/traces")], progressive=True))
            again.fetch(0)
            again.gather_verifier_logs()
        lines = [record.getMessage() for record in caplog.records]
        assert len(lines) == 1 and lines[0].startswith("cache for org/traces was damaged"), lines
        assert lines[0].endswith(": rebuilding")
        assert again.remote == [0] and again.history(0).messages == history
        assert again.verifier_output(0) == first.verifier_output(0)
        released()


def test_error_lines_are_one_bounded_line(small, tmp_path):
    """Whatever a message carries (a 100,000-digit value, a newline in a file name), it is one line of
    bounded length, keeping what it is about and what to do."""
    digits = "9" * 100_000
    done = run_cli("stats", str(small), "--filter", f"model={digits}")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and len(done.stderr) < 400
    assert done.stderr.startswith("tracetui: --filter model=999") and "…" in done.stderr
    done = run_cli("stats", str(tmp_path / "two\nlines.parquet"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no such file or folder" in done.stderr
    done = run_cli("demo", "--rows", digits)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and len(done.stderr) < 400


def test_the_config_file_bounds_the_cache(tmp_path, monkeypatch):
    from tracetui.store.config import load_config

    monkeypatch.setenv("TRACETUI_CONFIG_DIR", str(tmp_path))
    (tmp_path / "config.toml").write_text('cache_size = "2G"\n')
    assert load_config() == (load_config()[0], None) and load_config()[0].cache_size == 2 << 30
    assert run_cli("cache").stdout.splitlines()[-1].startswith("0 B of at most 2.0 GB (--cache-size)")
    assert run_cli("cache", "--cache-size", "500M").stdout.splitlines()[-1].startswith("0 B of at most 500.0 MB")
    (tmp_path / "config.toml").write_text('cache_size = "lots"\n')
    config, warning = load_config()
    assert config.cache_size is None and warning is not None and "cache_size" in warning

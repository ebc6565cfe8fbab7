"""A hub dataset whose metadata takes a while opens on the files read so far, then grows as the others come
in: every trial keeps its id, the folder is kept only once whole, and a failure mid-way leaves the list as
it was with one line. The hub's later files are held back at will (`held`), so each step is certain."""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tracetui.data import cache_folders, hub_metadata, hub_reads
from tracetui.data.cache_folders import entries
from tracetui.data.errors import SourceError, Unreachable
from tracetui.data.session import Session, open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.data.trial_ids import moved_trials
from tracetui.data.trials import group_rows

from .hub_data import write_traces
from .test_hub import REPO


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """2,400 rows in 4 shards of 200-row row groups, trials across shard boundaries."""
    return write_traces(tmp_path_factory.mktemp("grow"), 2_400, shards=4, text=200, episodes=7, row_group=200)


@pytest.fixture
def held(monkeypatch):
    """Reads of every file but the first wait until `held.set()` (or raise, `held.fail`)."""
    gate = threading.Event()
    gate.fail = False  # type: ignore[attr-defined]
    read = hub_reads.get_range

    def get_range(url: str, start: int, end: int) -> bytes:
        if "-00000-" not in url:
            gate.wait(30)
            if gate.fail:  # type: ignore[attr-defined]
                raise Unreachable("the hub went away")
        return read(url, start, end)

    monkeypatch.setattr(hub_reads, "get_range", get_range)
    monkeypatch.setattr(hub_metadata, "PARTIAL_AFTER", 0.0)
    yield gate
    gate.set()


def opened(partial: bool = True) -> Session:
    return open_session(prepare([SourceSpec(REPO)], progressive=True), partial=partial)


def ripe(session: Session, timeout: float = 30.0) -> dict:
    """The session's updates once the metadata that came in is ready for the list."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        updates = session.ripe()
        if updates:
            return updates
        time.sleep(0.02)
    raise AssertionError("the metadata never came in")


def grown(session: Session) -> tuple[set[int], int]:
    """Apply what comes in until the list is whole (it may grow in steps): the ids changed, and added."""
    changed: set[int] = set()
    added = 0
    while session.growing is not None:
        applied = session.apply(ripe(session))
        changed |= set(applied.changed.tolist())
        added += applied.added
    return changed, added


def trial_key(session: Session, trial: int) -> tuple:
    info = session.info(trial)
    return (info.trial_name, info.model, info.task, info.episodes)


def test_a_slow_metadata_opens_on_its_first_file_and_grows_keeping_every_trial_id(files, serve, held):
    hub = serve({REPO: files})
    session = opened()
    assert session.growing == (1, 4)
    first = {trial: trial_key(session, trial) for trial in range(len(session))}
    assert len(first) > 0 and session.num_rows == 600
    assert not [entry for entry in entries() if entry.kind == "remote"]  # not kept while partial
    assert session.fetch(0).messages  # read before the list grows: what it worked out must not stay

    held.set()
    changed, added = grown(session)
    assert session.num_rows == 2_400
    whole = open_session(prepare([SourceSpec(str(files))]))
    assert len(session) == len(whole) and added == len(whole) - len(first)
    assert sorted(trial_key(session, t) for t in range(len(session))) == sorted(
        trial_key(whole, t) for t in range(len(whole))
    )
    longer = {trial for trial in first if trial_key(session, trial) != first[trial]}
    for trial in first:  # each id names the same trial, with the episodes that came since
        assert trial_key(session, trial)[:3] == first[trial][:3]
    assert longer and longer <= changed  # a trial cut at the first shard's end grew
    assert set(range(len(first), len(session))) <= changed
    last = len(session) - 1
    assert session.fetch(last) == whole.history(whole.find_trial(session.info(last).trial_name))

    # whole now: kept, and a reopen reads no metadata
    session.datasets[0].kept()
    assert [entry.kind for entry in entries()].count("remote") == 1
    asked = len(hub.requests)
    again = opened()
    assert again.growing is None and len(again) == len(whole)
    assert not [r for r in hub.requests[asked:] if r[2] is not None]  # no range read


def test_without_partial_the_session_waits_for_every_file(files, serve, held):
    serve({REPO: files})
    threading.Timer(0.3, held.set).start()
    session = opened(partial=False)
    assert session.growing is None and session.num_rows == 2_400


def test_a_hub_that_goes_away_mid_way_leaves_the_list_as_it_was(files, serve, held, caplog):
    serve({REPO: files})
    session = opened()
    before = len(session)
    held.fail = True
    held.set()
    with caplog.at_level(logging.WARNING, logger="tracetui"):
        applied = session.apply(ripe(session))
    assert not len(applied.changed) and len(session) == before and session.growing is None
    assert any("the list stays as it is" in record.getMessage() for record in caplog.records)
    assert not [entry for entry in entries() if entry.kind == "remote"]


def test_trials_that_merge_when_rows_come_in_are_not_given_one_id(files):
    """Two trials of one key (episode numbers that start again) become one when rows without numbers
    join the key: `moved_trials` will not map two ids to one trial."""
    import pyarrow as pa

    rows = open_session(prepare([SourceSpec(str(files))])).datasets[0].meta.slice(0, 10)
    key = {name: pa.array(["same"] * 10) for name in ("trial_name", "task", "model", "agent", "run_id")}
    episodes = pa.array([0, 1, 2, 0, 1, 2, -1, -1, -1, -1], pa.int32())
    table = rows
    for name, values in key.items():
        table = table.set_column(table.schema.get_field_index(name), name, values.dictionary_encode())
    table = table.set_column(table.schema.get_field_index("episode_num"), "episode_num", episodes)
    before = group_rows(table.slice(0, 6))
    assert len(before.episodes) == 2
    after = group_rows(table)
    assert moved_trials(before, after) is None
    same = moved_trials(before, group_rows(table.slice(0, 6)))
    assert same is not None and np.array_equal(same.moved, [0, 1]) and not len(same.changed)


def test_a_list_whose_trials_group_differently_stays_and_is_kept_once_whole(files, serve, held, caplog, monkeypatch):
    """Where the grouping with more files in cannot keep every id (`moved_trials` gives None), the list
    stays as it opened, one line says to restart, and the metadata is still kept for that restart."""
    from tracetui.data import remote

    serve({REPO: files})
    session = opened()
    before = [trial_key(session, t) for t in range(len(session))]
    monkeypatch.setattr(remote, "moved_trials", lambda old, new: None)
    held.set()
    with caplog.at_level(logging.WARNING, logger="tracetui"):
        grown(session)
    assert [trial_key(session, t) for t in range(len(session))] == before and session.num_rows == 600
    said = [r.getMessage() for r in caplog.records if "restart tracetui" in r.getMessage()]
    assert len(said) == 1
    session.datasets[0].kept()
    assert [entry.kind for entry in entries()].count("remote") == 1
    again = opened()
    assert again.num_rows == 2_400 and again.growing is None


def cut_short(session: Session) -> Path:
    """What the app's end does to a list still growing: nothing more is read, and the work folder's lock
    goes with the process (made old enough not to be one a live process has just made); the folder."""
    growth = session.datasets[0]._growth
    assert growth is not None
    growth.reading.stop()
    growth.work._unlock()
    old = time.time() - 2 * cache_folders.WORK_GRACE
    os.utime(growth.work.path, (old, old))
    return growth.work.path


def range_reads(hub, shard: str) -> int:
    return sum(1 for _, path, byte_range in hub.requests if byte_range and shard in path)


def test_an_open_cut_short_while_its_list_grows_is_gone_on_from_by_the_next(files, serve, held):
    """The app quits while its list grows: the next open takes the files the first one read (their footers
    and rows, kept as they came in), asks the hub for the others only, and lists what a whole read lists."""
    hub = serve({REPO: files})
    first = opened()
    assert first.growing == (1, 4)
    left = cut_short(first)
    assert sorted(p.name for p in left.iterdir() if p.is_file()) == ["footer-0.bin", "meta-0.arrow"]

    hub.reset_counts()
    held.set()
    session = opened()
    grown(session)
    assert range_reads(hub, "-00000-") == 0 and range_reads(hub, "-00003-") > 0
    assert not left.exists()  # taken over: renamed for this process, then sealed into place
    whole = open_session(prepare([SourceSpec(str(files))]))
    assert sorted(trial_key(session, t) for t in range(len(session))) == sorted(
        trial_key(whole, t) for t in range(len(whole))
    )
    assert session.fetch(0).messages
    session.datasets[0].kept()
    assert [entry.kind for entry in entries()].count("remote") == 1
    kept = next(entry.folder for entry in entries() if entry.kind == "remote")
    assert not list(kept.glob("meta-*.arrow"))  # in meta.arrow: not kept twice


def test_an_open_the_hub_fails_mid_way_leaves_what_came_in_for_the_next(files, serve, held):
    """The hub goes away while an open waits for the whole list: the files it took over and read stay for
    the next open, which asks the hub only for the others."""
    hub = serve({REPO: files})
    cut_short(opened())  # the first file read
    held.fail = True  # type: ignore[attr-defined]
    held.set()
    with pytest.raises(SourceError):
        opened(partial=False)
    (left,) = cache_folders.cache_dir().glob(".remote-*")
    os.utime(left, (time.time() - 2 * cache_folders.WORK_GRACE,) * 2)  # as another process would find it
    held.fail = False  # type: ignore[attr-defined]
    hub.reset_counts()
    session = opened(partial=False)
    assert range_reads(hub, "-00000-") == 0 and session.num_rows == 2_400


def test_rows_left_damaged_by_an_open_cut_short_are_read_again(files, serve, held):
    hub = serve({REPO: files})
    left = cut_short(opened())
    (left / "meta-0.arrow").write_bytes(b"not arrow")
    hub.reset_counts()
    held.set()
    session = opened(partial=False)
    assert range_reads(hub, "-00000-") > 0
    whole = open_session(prepare([SourceSpec(str(files))]))
    assert len(session) == len(whole) and session.num_rows == whole.num_rows


def test_what_an_open_cut_short_left_is_swept_once_old_or_kept_and_cleared_with_the_cache(
    files, serve, held, monkeypatch
):
    """Kept for the next open to go on from, but not for ever: gone after RESUMABLE_FOR, once the dataset
    is kept whole by another open, and with `tracetui cache clear`."""
    serve({REPO: files})
    left = cut_short(opened())

    def swept(folder: Path) -> bool:
        monkeypatch.setattr(cache_folders, "_swept", set())
        cache_folders.sweep()
        return not folder.exists()

    assert not swept(left)
    old = time.time() - cache_folders.RESUMABLE_FOR - 60
    os.utime(left, (old, old))
    assert swept(left)

    left = cut_short(opened())
    cache_folders.clear()
    assert not left.exists()

    left = cut_short(opened())
    other = left.with_name(left.name + "x")  # another open of the same dataset cut short
    shutil.copytree(left, other)
    os.utime(other, (time.time() - 3600,) * 2)
    held.set()
    opened(partial=False).datasets[0].kept()  # goes on from the most recent, and is kept whole
    assert not left.exists() and swept(other)

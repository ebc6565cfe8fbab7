"""Reading a cast file into its index: v2 and v3, markers and episodes, garbage and cut-short lines."""

from __future__ import annotations

import json

import pytest

from tracetui.data.recordings import Cast, RecordingError
from tracetui.data.recordings.cast import MAX_COLUMNS, MAX_LINES, OUTPUT, RESIZE

from .casts import SAMPLE, long_cast, write_cast


def test_the_sample_recording():
    cast = Cast.open(SAMPLE)
    assert (cast.version, cast.columns, cast.lines) == (2, 160, 40)
    assert len(cast) == 6 and cast.duration == 8.5
    assert [(m.time, m.label, m.episode) for m in cast.markers] == [
        (0.0, "Episode 0", 0),
        (3.5, "Episode 1", 1),
        (7.0, "Episode 2", 2),
    ]
    assert cast.skipped == 0 and not cast.truncated
    kinds, texts = zip(*cast.read(0, len(cast)))
    assert set(kinds) == {OUTPUT}
    assert "HELDOUT-CAST step 1 of s-hello-world" in texts[3]


def test_times_and_events_until(tmp_path):
    cast = Cast.open(
        write_cast(tmp_path / "a.cast", [[0.5, "o", "a"], [1.0, "o", "b"], [1.0, "o", "c"], [2.0, "x", "0"]])
    )
    assert list(cast.times) == [0.5, 1.0, 1.0]
    assert cast.duration == 2.0  # the exit event ends it
    assert [cast.events_until(t) for t in (0.0, 0.5, 0.99, 1.0, 5.0)] == [0, 1, 1, 3, 3]


def test_v3_times_count_from_the_event_before_and_comments_are_skipped(tmp_path):
    header = {"version": 3, "term": {"cols": 132, "rows": 43, "type": "xterm"}}
    events = [[0.5, "o", "a"], [0.25, "i", "x"], [0.25, "m", "Episode 0"], [1.0, "o", "b"], [0.5, "r", "90x30"]]
    path = write_cast(tmp_path / "v3.cast", events, header)
    path.write_text(path.read_text().replace('[1.0, "o"', '# a comment\n[1.0, "o"'))
    cast = Cast.open(path)
    assert (cast.version, cast.columns, cast.lines) == (3, 132, 43)
    assert list(cast.times) == [0.5, 2.0, 2.5]
    assert list(cast.kinds) == [OUTPUT, OUTPUT, RESIZE]
    assert [(m.time, m.episode) for m in cast.markers] == [(1.0, 0)]
    assert cast.skipped == 0


def test_idle_time_limit_caps_pauses_markers_included(tmp_path):
    header = {"version": 2, "width": 80, "height": 24, "idle_time_limit": 2}
    events = [[0.0, "o", "a"], [30.0, "m", "Episode 1"], [31.0, "o", "b"], [100.0, "o", "c"]]
    cast = Cast.open(write_cast(tmp_path / "idle.cast", events, header))
    assert list(cast.times) == [0.0, 3.0, 5.0]
    assert cast.markers[0].time == 2.0


def test_garbage_lines_are_skipped_and_counted(tmp_path):
    events = [[0.1, "o", "one"], [0.2, "o", "two"]]
    tail = "\n".join(
        [
            "not json at all",
            '{"an": "object"}',
            '[0.3, "o"]',
            '["soon", "o", "x"]',
            '[-1, "o", "negative"]',
            '[true, "o", "a boolean"]',
            '[0.4, "o", 12]',
            '[1e400, "o", "too big"]',
            "",
            '[0.5, "o", "three"]',
        ]
    )
    cast = Cast.open(write_cast(tmp_path / "garbage.cast", events, tail=tail + "\n"))
    assert [data for _, data in cast.read(0, len(cast))] == ["one", "two", "three"]
    assert cast.skipped == 8 and not cast.truncated


def test_a_last_line_cut_short_is_left_out_and_said(tmp_path):
    cast = Cast.open(write_cast(tmp_path / "cut.cast", [[0.1, "o", "whole"]], tail='[0.2, "o", "half a li'))
    assert len(cast) == 1 and cast.truncated and cast.skipped == 0
    cast = Cast.open(write_cast(tmp_path / "complete.cast", [[0.1, "o", "whole"]], tail='[0.2, "o", "no newline"]'))
    assert len(cast) == 2 and not cast.truncated


def test_out_of_order_times_never_go_back(tmp_path):
    cast = Cast.open(write_cast(tmp_path / "order.cast", [[1.0, "o", "a"], [0.5, "o", "b"], [2.0, "o", "c"]]))
    assert list(cast.times) == [1.0, 1.0, 2.0]


@pytest.mark.parametrize(
    "content, said",
    [
        ("", "is empty"),
        ("not json\n", "not an asciinema recording"),
        ("[1, 2]\n", "not an asciinema recording"),
        ('{"version": 1, "stdout": []}\n', "v1"),
        ('{"version": 7}\n', "version 7"),
        ('{"version": true}\n', "version None"),
        ('{"vers', "not an asciinema recording"),
    ],
)
def test_what_is_not_a_recording_is_one_line(tmp_path, content, said):
    path = tmp_path / "bad.cast"
    path.write_text(content)
    with pytest.raises(RecordingError) as error:
        Cast.open(path)
    assert said in str(error.value) and "\n" not in str(error.value)


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(RecordingError, match="cannot read the recording"):
        Cast.open(tmp_path / "nowhere.cast")


def test_sizes_are_kept_sane(tmp_path):
    cast = Cast.open(write_cast(tmp_path / "huge.cast", [], {"version": 2, "width": 10**9, "height": 10**6}))
    assert (cast.columns, cast.lines) == (MAX_COLUMNS, MAX_LINES)
    cast = Cast.open(write_cast(tmp_path / "none.cast", [], {"version": 2, "width": "wide"}))
    assert (cast.columns, cast.lines) == (80, 24)


def test_markers_without_numbers_are_episodes_in_order(tmp_path):
    events = [[0.0, "m", "start"], [1.0, "m", "second"], [2.0, "m", "third"]]
    cast = Cast.open(write_cast(tmp_path / "plain.cast", events))
    assert [m.episode for m in cast.markers] == [0, 1, 2]
    assert cast.marker_for(1).label == "second"


def test_marker_for_an_episode_and_at_a_time(tmp_path):
    events = [[0.0, "m", "Episode 0"], [2.0, "m", "Episode 1: ls"], [5.0, "m", "episode-4"], [6.0, "m", "notes"]]
    cast = Cast.open(write_cast(tmp_path / "m.cast", events))
    assert [m.episode for m in cast.markers] == [0, 1, 4, -1]
    assert cast.marker_for(1).time == 2.0
    assert cast.marker_for(3).time == 2.0  # none for 3: the last one before it
    assert cast.marker_for(9).time == 5.0
    assert [cast.marker_at(t) for t in (0.0, 1.9, 2.0, 5.5, 60.0)] == [0, 0, 1, 2, 3]


def test_marker_labels_are_sanitized_one_line(tmp_path):
    events = [[0.0, "m", "Episode 3\x1b]0;title\x07\nsecond line\u202e" + "x" * 500]]
    marker = Cast.open(write_cast(tmp_path / "label.cast", events)).markers[0]
    assert marker.episode == 3 and "\x1b" not in marker.label and "\n" not in marker.label
    assert "\u202e" not in marker.label and len(marker.label) <= 200


def test_a_long_recording_is_indexed_without_its_output(tmp_path):
    path = long_cast(tmp_path / "long.cast", episodes=80)
    cast = Cast.open(path)
    assert len(cast.markers) == 80 and len(cast) > 1000
    size = path.stat().st_size
    index = cast.times.itemsize * len(cast) + cast.starts.itemsize * len(cast) * 2 + len(cast)
    assert index < size / 5  # the index is a small part of the file
    first = json.loads(path.read_text().splitlines()[2])[2]
    assert next(iter(cast.read(0, 1)))[1] == first

"""paths.write_atomically: a file is there whole or not at all, whatever fails while it is written."""

from __future__ import annotations

import pytest

from tracetui.paths import write_atomically


def test_bytes_and_a_writer_both_land_whole_with_nothing_beside_them(tmp_path):
    target = tmp_path / "kept.bin"
    write_atomically(target, b"first")
    write_atomically(target, lambda temporary: temporary.write_bytes(b"second"))
    assert target.read_bytes() == b"second"
    assert [path.name for path in tmp_path.iterdir()] == ["kept.bin"]


def test_a_writer_that_fails_halfway_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "kept.json"
    target.write_text("old")

    def half(temporary):
        temporary.write_text("ne")
        raise KeyboardInterrupt  # any exit, even one that is not an error

    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, half)
    assert target.read_text() == "old"
    assert [path.name for path in tmp_path.iterdir()] == ["kept.json"]


def test_a_folder_that_refuses_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        write_atomically(tmp_path / "no" / "such" / "file", b"x")

"""Snapshot tests of the main states at 120x40, 100x30 and 80x24 (pytest-textual-snapshot).

After an intended change of what the app shows: `pytest tests/test_snapshots.py --snapshot-update`,
then `python -m tests.scenarios screenshots` to refresh the README's pictures."""

from __future__ import annotations

import pytest

from .scenarios import CASES, SCENARIOS, app_for


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("snap") / "demo"


@pytest.mark.parametrize("name, size", [pytest.param(n, s, id=f"{n}-{s[0]}x{s[1]}") for n, s in CASES])
def test_snapshot(snap_compare, demo_folder, name, size):
    assert snap_compare(app_for(name, demo_folder), terminal_size=size, run_before=SCENARIOS[name])

"""Shared fixtures: the golden Harbor rows, an isolated cache/config/data dir, small dataset writers."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .hub_server import FakeHub, use_hub

GOLDEN = Path(__file__).parent / "fixtures" / "harbor-golden"


def _isolate(monkeypatch: pytest.MonkeyPatch, base: Path) -> None:
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(base / "data"))
    monkeypatch.setenv("HF_HOME", str(base / "hf"))
    for variable in ("TRACETUI_DATA_DIR", "TRACETUI_CONFIG_DIR", "HF_ENDPOINT", "HF_TOKEN", "TMUX"):  # nor tmux
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


@pytest.fixture(scope="session", autouse=True)
def isolated_session(tmp_path_factory):
    """What module-scoped fixtures write (a dataset they open converts into the cache) goes to dirs of the
    session's own too: set up before them, never the user's."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _isolate(monkeypatch, tmp_path_factory.mktemp("session-xdg"))
        yield


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path_factory, monkeypatch):
    """No test reads or writes the user's real cache, config or data dirs, or the network. Each test's dirs
    empty when it ends (a conversion is tens of MB, and a thousand of them filled CI's disk); the dir itself
    stays, so that no later test is given its name and finds what the process remembers of it."""
    base = tmp_path_factory.mktemp("xdg")
    _isolate(monkeypatch, base)
    yield base
    for entry in base.iterdir():
        shutil.rmtree(entry, ignore_errors=True)


@pytest.fixture(autouse=True)
def notices_logger():
    """A command run in a test's process sets up the `tracetui` logger for a terminal (its own handler,
    no propagation), for good: every test starts from the logger as a fresh process has it (no
    handler, propagating), so `caplog` sees the notices."""
    logger = logging.getLogger("tracetui")
    logger.handlers.clear()
    logger.propagate = True
    yield
    logger.handlers.clear()
    logger.propagate = True


@pytest.fixture(autouse=True)
def pilot_waits_for_keys(monkeypatch):
    """Pilot's `press` returns once the app has taken the keys, but the app hands keys over one at a
    time (ui/key_order.py): on a loaded machine a key may still be waiting when `press` returns. So
    `press` here also waits until every key has done what it does, as a user would see it."""
    from textual.pilot import Pilot

    press = Pilot.press

    async def press_and_wait(self, *keys: str) -> None:
        await press(self, *keys)
        order = getattr(self.app, "keys", None)
        for _ in range(300):
            if order is None or order.idle:
                break
            await asyncio.sleep(0.01)
        await self.pause()

    monkeypatch.setattr(Pilot, "press", press_and_wait)


@pytest.fixture
def golden_dir() -> Path:
    return GOLDEN


def golden_rows(name: str) -> list[dict]:
    return json.loads((GOLDEN / name).read_text())


def conversation(*pairs: tuple[str, str]) -> list[dict]:
    return [{"role": role, "content": content} for role, content in pairs]


def trial_rows(
    task: str,
    trial: str,
    episodes: int,
    result: str | None,
    model: str = "m/x",
    run: str = "run-1",
    verifier: str | None = None,
) -> list[dict]:
    """Nested-prefix rows of one trial: episode K has 2K+2 messages."""
    history = [("user", f"prompt for {task}")]
    rows = []
    for k in range(episodes):
        history = history + [("assistant", f"{trial} reply {k}")]
        rows.append(
            {
                "conversations": conversation(*history),
                "agent": "terminus-2",
                "model": model,
                "model_provider": model.split("/")[0],
                "date": f"2026-07-{10 + k % 9:02d}T10:00:00Z",
                "task": task,
                "episode": f"episode-{k}",
                "run_id": run,
                "trial_name": trial,
                "result": result,
                "verifier_output": verifier,
                "trace_source": "main",
            }
        )
        history = history + [("user", f"New Terminal Output:\n{trial} out {k}")]
    return rows


def write_parquet(path: Path, rows: list[dict], schema: pa.Schema | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    """A small deterministic demo dataset, written once per test module."""
    return tmp_path_factory.mktemp("demo")


@pytest.fixture
def sources(demo_dir):
    from .ui_helpers import demo_sources

    return demo_sources(demo_dir)


@pytest.fixture
def serve(monkeypatch):
    """serve({repo: folder}) starts a FakeHub and points huggingface_hub at it."""
    hubs: list[FakeHub] = []

    def start(repos: dict, **options) -> FakeHub:
        hub = FakeHub(repos, **options).start()
        hubs.append(hub)
        use_hub(monkeypatch, hub.url)
        return hub

    yield start
    for hub in hubs:
        hub.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def whole_hub_lists(monkeypatch):
    """A hub dataset opens on its whole metadata, but in the tests of a list that grows as it comes in
    (they set `PARTIAL_AFTER` to 0 and hold files back): whether a loaded machine reads a small dataset's
    metadata within the second it is given is not what the others test (a partial list made compare say
    it waits, and read ahead every trial it had)."""
    from tracetui.data import hub_metadata

    monkeypatch.setattr(hub_metadata, "PARTIAL_AFTER", 3600.0)

"""The three apps whose first screen we time: tracetui, the floor and the naive route.

Each factory returns the app and the widget classes that must have drawn text for the first screen to
count as painted. `run_cli_headless` runs tracetui through its real command line instead (the start path
users get), with `App.run` made headless. `python -m bench.apps floor|naive DATA` runs the floor or the
naive app in the terminal (the pty probe runs tracetui as `python -m tracetui DATA`).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

FLOOR_TEXT = "floor: one widget painted"
NAIVE_PREFIX = "naive: "


def cli_sources(source: str | Path) -> list:
    """SOURCE resolved as the command line resolves it (a hub dataset left to read remotely while it
    downloads), then pandas kept out of the process as the command line keeps it out before it opens
    anything (pyarrow would import it, 40 MB, to check for pandas objects): measured as users get it."""
    from tracetui.cli import keep_pandas_out
    from tracetui.data.session import prepare
    from tracetui.data.sources import SourceSpec

    sources = prepare([SourceSpec(str(source))], progressive=True)
    keep_pandas_out()
    return sources


def tracetui_widgets() -> tuple[type, ...]:
    from tracetui.ui.widgets.conversation import ConversationView
    from tracetui.ui.widgets.trial_list import TrialList

    return TrialList, ConversationView


def tracetui_app(data: Path):
    """A TraceApp on DATA for Pilot (opens the session in its worker; TRACETUI_CACHE_DIR has the conversion),
    its sources resolved as the command line resolves them (`cli_sources`), its process set up as the
    command line sets it up."""
    from tracetui.cli import set_up_process

    set_up_process()
    from tracetui.ui.app import StartOptions, TraceApp

    return TraceApp(cli_sources(data), StartOptions()), tracetui_widgets()


def run_cli_headless(data: Path | str, size: tuple[int, int], before_run: Callable, *options: str) -> int:
    """`tracetui DATA [OPTIONS]` through `tracetui.cli.main`, its app run headless; `before_run(app, widgets)`
    first. TraceApp is patched once the command line imports it, not before: importing the app's modules
    here would take them off the start path the command line gives users (it imports them while the
    sources resolve)."""
    from tracetui import cli

    def patch(module) -> None:
        run = module.TraceApp.run

        def headless(app, *args, **kwargs):
            before_run(app, tracetui_widgets())
            return run(app, headless=True, size=size)

        module.TraceApp.run = headless

    sys.meta_path.insert(0, _AfterImport("tracetui.ui.app", patch))
    return cli.main([str(data), *options])


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls `then(module)` once module `name` has been imported (by whoever imports it first)."""

    def __init__(self, name: str, then: Callable) -> None:
        self.name, self.then = name, then

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.loader is not None
        exec_module, then = spec.loader.exec_module, self.then

        class Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return None

            def exec_module(self, module):
                exec_module(module)
                then(module)

        spec.loader = Loader()
        return spec


def floor_app(data: Path):
    """A bare Textual app that imports pyarrow and paints one widget: what no viewer can beat."""
    import pyarrow  # noqa: F401
    from textual.app import App
    from textual.widgets import Static

    class Floor(App):
        def compose(self):
            yield Static(FLOOR_TEXT)

    return Floor(), (Static,)


def naive_app(data: Path):
    """pandas.read_parquet of every shard, then the first row's first message in a Static."""
    import pandas as pd
    from rich.text import Text
    from textual.app import App
    from textual.widgets import Static

    frame = pd.read_parquet(data / "data")
    first = frame.iloc[0]
    text = Text(f"{NAIVE_PREFIX}{first['task']}\n{first['conversations'][0]['content'][:4000]}")

    class Naive(App):
        def compose(self):
            yield Static(text)

    return Naive(), (Static,)


APPS = {"tracetui": tracetui_app, "floor": floor_app, "naive": naive_app}

if __name__ == "__main__":
    kind, data = sys.argv[1], Path(sys.argv[2])
    APPS[kind](data)[0].run()

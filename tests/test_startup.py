"""What the first screen waits for: through the command line, the palette's providers, the help
screen's key table and pyarrow's compute kernels load when first used, not before the first
conversation is painted; a dataset the
app would open in its worker starts opening while the app's modules import, and its progress and
errors still reach the app; the app's threads hand the GIL over in short slices (`cli.GIL_SLICE`)."""

from __future__ import annotations

import os
import subprocess
import sys

from tracetui.cli import GIL_SLICE
from tracetui.demo import write_demo

LAZY = ("tracetui.ui.commands", "tracetui.ui.screens.help")
"""Loaded when first used: the palette's providers and the help screen's key table."""
LATER_PARTS = (
    "tracetui.data.search",
    "tracetui.data.stats",
    "tracetui.ask.verify",
    "tracetui.data.jobs.opening",
    "tracetui.data.connections",
)
"""The parts of tracetui the first screen of a converted dataset does not use: search, stats, the
answers' checks, harbor job folders (~15 ms of imports), connections to the hub."""
NOT_AT_START = (*LAZY, *LATER_PARTS, "pyarrow.compute", "numpy.ma")
"""Not imported before the first conversation is painted (pyarrow.compute: when a kernel first runs;
numpy.ma: what numpy's `unique` imports, ~25 ms)."""

FIRST_SCREEN = """
import gc
import sys
from textual.command import CommandPalette
import tracetui.ui.app as app_module
from tracetui.cli import main
from tracetui.ui.screens.triage import TriageScreen

LAZY = {lazy!r}
NOT_AT_START = {not_at_start!r}
run, on_mount = app_module.TraceApp.run, app_module.TraceApp.on_mount
seen = {{}}


def check(app):
    screen = app.screen
    if "first" not in seen and isinstance(screen, TriageScreen) and screen.conversation.messages:
        seen["first"] = sorted(name for name in NOT_AT_START if name in sys.modules)
        app.action_command_palette()  # ctrl+p: its providers load now
    elif "first" in seen and isinstance(screen, CommandPalette):
        seen["ticks"] = seen.get("ticks", 0) + 1
        loaded = sorted(name for name in LAZY if name in sys.modules)
        later = "pyarrow.compute" in sys.modules  # loaded in the background after the first screen
        if (loaded == sorted(LAZY) and later) or seen["ticks"] > 300:
            seen["palette"], seen["later"] = loaded, [str(later)]
            seen["collecting"] = [str(gc.isenabled())]
            app.exit()


def mounted(app):
    seen["collecting at start"] = [str(gc.isenabled())]
    seen["slice"] = [str(sys.getswitchinterval())]
    on_mount(app)
    app.set_interval(0.01, lambda: check(app))


app_module.TraceApp.on_mount = mounted
app_module.TraceApp.run = lambda app: run(app, headless=True, size=(80, 24))
code = main(sys.argv[1:])
print("FIRST", *seen.get("first", ["?"]))
print("PALETTE", *seen.get("palette", ["?"]))
print("LATER", *seen.get("later", ["?"]))
print("SLICE", *seen.get("slice", ["?"]))
print("GC", *seen.get("collecting at start", ["?"]), *seen.get("collecting", ["?"]), gc.isenabled())
sys.exit(code)
"""


def run_headless(*argv: str) -> subprocess.CompletedProcess:
    """`tracetui ARGV` through its command line, the app headless at 80x24."""
    script = FIRST_SCREEN.format(lazy=LAZY, not_at_start=NOT_AT_START)
    return subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )


def first_screen(*argv: str) -> dict[str, list[str]]:
    done = run_headless(*argv)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = dict(line.split(" ", 1) if " " in line else (line, "") for line in done.stdout.splitlines())
    return {key: lines[key].split() for key in ("FIRST", "PALETTE", "LATER", "GC", "SLICE")}


def test_the_first_screen_loads_the_palette_help_and_kernels_on_first_use(tmp_path):
    data = tmp_path / "demo"
    write_demo(data, rows=120, seed=1)
    converting = ["numpy.ma", "pyarrow.compute"]  # converting computes; opening a conversion does not
    for opening, computed in (("converted in the app's worker", converting), ("converted before", [])):
        seen = first_screen(str(data))
        assert seen["FIRST"] == computed, opening
        assert seen["PALETTE"] == sorted(LAZY), opening  # the palette works: its providers loaded
        assert seen["LATER"] == ["True"], opening  # the kernels came in the background
        # no garbage collection from the start to the first frame; on again after it, and after the app
        assert seen["GC"] == ["False", "True", "True"], opening
        assert float(seen["SLICE"][0]) == GIL_SLICE < 0.005, opening  # not Python's default 5 ms


def test_an_early_open_that_fails_ends_in_one_line(tmp_path):
    """The session that starts opening before the app runs reports its error as the app's would."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    done = run_headless(str(bad))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("tracetui: "), done.stderr
    assert done.stdout.splitlines()[-1].endswith(" True")  # collecting again once the command ended


def test_a_hub_dataset_is_asked_for_before_the_modules_import():
    """`tracetui org/name`: the hub is connected to and asked for the dataset's listing first (a far hub's
    handshakes and round trip go on while pyarrow and the app's modules import), and only for a source
    that is no local path."""
    script = """
import sys
from tracetui.data import hub_ahead
hub_ahead.ask_ahead = lambda specs: print("ASKING", [s.source for s in specs], "pyarrow" in sys.modules)
from tracetui.cli import main
sys.exit(main(sys.argv[1:]))
"""
    done = subprocess.run(
        [sys.executable, "-c", script, "org/not-on-this-machine"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["ASKING ['org/not-on-this-machine'] False"], done.stdout + done.stderr

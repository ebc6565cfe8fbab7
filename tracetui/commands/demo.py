"""The bundled demo dataset as the app opens it (`tracetui demo`, `tracetui web demo`): its size, and its
sources, generated into the cache once per size, seed and version."""

from __future__ import annotations

from dataclasses import replace

from .. import __version__
from ..data.errors import SourceError


def demo_rows(rows: int | None) -> int:
    """The demo's size: `--rows`, else the bundled size."""
    from .. import demo

    rows = rows or demo.DEFAULT_ROWS
    if rows <= 0:
        raise SourceError("--rows must be positive")
    return rows


def demo_sources(rows: int, seed: int) -> list:
    """The demo dataset, generated into the cache on first use, as sources ready to open."""
    from .. import demo
    from ..data.session import prepare
    from ..data.sources import SourceSpec
    from ..paths import cache_dir

    folder = cache_dir() / f"demo-{rows}-{seed}-v{__version__}"
    if not (folder / ".complete").exists():
        demo.write_demo(folder, rows=rows, seed=seed)
        (folder / ".complete").touch()
    return [replace(source, display=f"demo ({rows:,} rows)") for source in prepare([SourceSpec(str(folder))])]

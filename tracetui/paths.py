"""Where tracetui keeps its files: one environment variable each, else the platform's place
(platformdirs: XDG on Linux). Nothing else in the package decides a folder. And how it writes the
files it keeps: whole or not at all (`write_atomically`)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path


def _folder(variable: str, kind: str) -> Path:
    explicit = os.environ.get(variable)
    if explicit:
        return Path(explicit).expanduser()
    import platformdirs  # imported only when no variable says where

    return Path(getattr(platformdirs, f"user_{kind}_dir")("tracetui", appauthor=False))


def cache_dir() -> Path:
    """Converted datasets, indexes, copied text: `$TRACETUI_CACHE_DIR`, else `~/.cache/tracetui`."""
    return _folder("TRACETUI_CACHE_DIR", "cache")


def data_dir() -> Path:
    """What the user wrote (labels and notes): `$TRACETUI_DATA_DIR`, else `~/.local/share/tracetui`."""
    return _folder("TRACETUI_DATA_DIR", "data")


def config_dir() -> Path:
    """The config file's folder: `$TRACETUI_CONFIG_DIR`, else `~/.config/tracetui`."""
    return _folder("TRACETUI_CONFIG_DIR", "config")


def write_atomically(path: Path, data: bytes | Callable[[Path], object]) -> None:
    """Write `path` whole or not at all: `data` (or what `data(temporary)` writes) goes to a temporary file
    beside it, renamed over it once complete, so a reader (or a crash) never sees half a file. Raises
    OSError, leaving nothing behind."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        if isinstance(data, bytes):
            temporary.write_bytes(data)
        else:
            data(temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise

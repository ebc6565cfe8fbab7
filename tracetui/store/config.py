"""The user's config file, `config.toml` under the XDG config dir: the label names keys 1–9 toggle,
a `[keymap]` table of binding ids to keys, the cache's size bound (`cache_size`), and an `[ask]` table
(where `tracetui ask` asks).

A missing file is the defaults; a broken one is the defaults plus a one-line warning, never a crash.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..data.cache_folders import parse_size
from ..paths import config_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before it joined the standard library
    import tomli as tomllib

DEFAULT_LABELS = ("reward-hack", "bad-task", "env-issue", "tool-misuse", "good-example")
KEYED_LABELS = 9
"""Keys 1–9 toggle the first nine labels; the others are reachable from the command palette."""


@dataclass(frozen=True, slots=True)
class Config:
    labels: tuple[str, ...] = DEFAULT_LABELS
    keymap: Mapping[str, object] = field(default_factory=dict)
    """The `[keymap]` table as written, binding id → keys; the UI checks it against its bindings."""
    cache_size: int | None = None
    """`cache_size = "20G"`: the most disk the cache may take (None: half of the free disk space)."""
    ask: Mapping[str, object] = field(default_factory=dict)
    """The `[ask]` table as written (endpoint, model, …); `tracetui.ask.endpoint` checks it."""

    def label_for_digit(self, digit: int) -> str | None:
        """The label key `digit` (1–9) toggles, if there is one."""
        return self.labels[digit - 1] if 1 <= digit <= min(KEYED_LABELS, len(self.labels)) else None


def config_path() -> Path:
    """`config.toml` in the config folder (`paths.config_dir`)."""
    return config_dir() / "config.toml"


def load_config(path: Path | None = None) -> tuple[Config, str | None]:
    """(config, warning): the warning is one line for the user when the file could not be used."""
    path = path or config_path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Config(), None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0]
        return Config(), f"{path}: {reason}; using the default labels and keys"
    keymap, warning = data.get("keymap", {}), None
    if not isinstance(keymap, dict):
        keymap, warning = {}, f'{path}: `keymap` must be a table of binding id = "keys"; using the default keys'
    ask = data.get("ask", {})
    if not isinstance(ask, dict):
        ask, warning = {}, warning or f"{path}: `ask` must be a table (endpoint = …, model = …); ignored"
    labels, label_warning = _labels(data.get("labels", DEFAULT_LABELS))
    cache_size = None
    if "cache_size" in data:
        try:
            cache_size = parse_size(data["cache_size"])
        except ValueError as exc:
            label_warning = label_warning or f"`cache_size`: {exc}; using the default"
    return Config(labels, _dotted(keymap), cache_size, ask), f"{path}: {label_warning}" if label_warning else warning


def _dotted(table: dict[str, object], prefix: str = "") -> dict[str, object]:
    """TOML reads `trial.next = "ctrl+n"` as a nested table: back to the id "trial.next"."""
    flat: dict[str, object] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            flat.update(_dotted(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _labels(labels: object) -> tuple[tuple[str, ...], str | None]:
    if not isinstance(labels, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in labels):
        return DEFAULT_LABELS, "`labels` must be a list of non-empty strings; using the default labels"
    names = tuple(dict.fromkeys(v.strip() for v in labels))
    bad = [v for v in names if ";" in v or v.startswith("(")]
    if bad:  # `;` joins labels in CSV exports; `(…)` names are the facet's own values, like "(noted)"
        return DEFAULT_LABELS, f"label {bad[0]!r} may not contain ';' or start with '('; using the default labels"
    return names, None

"""The `[keymap]` table of the config file, as in harlequin and posting: binding ids (`keymap.py`) to
the keys the user wants, handed to Textual's keymap, so the footer, the help screen and the command
palette all show them. Entries that cannot apply are skipped with one warning line, never a crash.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from textual.app import App
from textual.binding import Binding

from ..store.config import config_path, load_config
from . import keymap

MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})


def bindings_by_id() -> dict[str, Binding]:
    """Every binding of the app by its id (one id may serve several lists, e.g. `cursor.down`)."""
    return {binding.id: binding for bindings in keymap.SECTIONS.values() for binding in bindings if binding.id}


def checked_keymap(entries: Mapping[str, object]) -> tuple[dict[str, str], str | None]:
    """(the entries that apply, binding id → keys; one line naming the others, or None)."""
    known = bindings_by_id()
    usable: dict[str, str] = {}
    problems = []
    for binding_id, keys in entries.items():
        if binding_id not in known:
            problems.append(f"unknown binding id {binding_id!r}")
        elif not isinstance(keys, str) or not keys.strip():
            problems.append(f'{binding_id} needs keys as a string, like "ctrl+n" or "j,down"')
        elif bad := next((key for key in keys.split(",") if not _key_name(key.strip())), None):
            problems.append(f"{binding_id}: {bad.strip()!r} is not a key name")
        else:
            usable[binding_id] = ",".join(key.strip() for key in keys.split(","))
    if not problems:
        return usable, None
    return usable, f"{config_path()} [keymap]: {'; '.join(problems)} (ignored; docs/keymap.md lists the ids)"


def _key_name(key: str) -> bool:
    """A plausible Textual key: `x`, `f5`, `pagedown`, `question_mark`, with known modifiers."""
    if len(key) == 1:
        return not key.isspace()
    *modifiers, base = key.split("+")
    return bool(base) and not any(c.isspace() for c in base) and all(m in MODIFIERS for m in modifiers)


@runtime_checkable
class Keymapped(Protocol):
    """An app that keeps what `apply_user_keymap` applied (the TraceApp)."""

    user_keymap: Mapping[str, str]


def keymap_of(app: App[object]) -> Mapping[str, str]:
    """The keys the config file gave `app`'s bindings, binding id → keys (the help screen and the palette
    show them); {} for an app that keeps none."""
    return app.user_keymap if isinstance(app, Keymapped) else {}


def apply_user_keymap(app: App[object]) -> dict[str, str]:
    """Apply the config file's keymap to `app`; returns it (binding id → keys) for the help screen.

    A broken config file is reported where its labels are read; here only the keymap's own entries.
    """
    config, _ = load_config()
    user_keymap, warning = checked_keymap(config.keymap)
    app.set_keymap(user_keymap)
    if warning:
        app.notify(warning, severity="warning", timeout=10, markup=False)
    return user_keymap

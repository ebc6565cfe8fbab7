"""The file of changes the disk refused: the quit prompt writes it, `tracetui labels import FILE` reads
it back and applies it, merged with what the store holds by then (so importing twice changes nothing).

JSON: `{"format": "tracetui-unsaved-labels", "version": 1, "changes": [...]}`, each change its trial's
key (`dataset_id`, `revision`, `trial`, `named`, `task`, `model`) plus `label` and `on`, or `note` and
`base` (the note it was written over).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .records import Change, LabelChange, NoteChange, TrialKey

FORMAT = "tracetui-unsaved-labels"
VERSION = 1
_KEY_FIELDS = {"dataset_id": str, "revision": str, "trial": str, "named": bool, "task": str, "model": str}


class BadChangesFile(ValueError):
    """The file is not one `write_changes` wrote (the message says what is wrong, in one line)."""


def write_changes(path: Path, changes: list[Change]) -> None:
    """Write `changes` to a new file at `path` (never over an existing one), synced to the disk."""
    entries = [_entry(change) for change in changes]
    data = {"format": FORMAT, "version": VERSION, "written": time.strftime("%Y-%m-%d %H:%M:%S"), "changes": entries}
    with open(path, "x", encoding="utf-8") as f:
        try:
            json.dump(data, f, ensure_ascii=False, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        except OSError:
            f.close()
            path.unlink(missing_ok=True)  # half a file is no use, and would block the next try
            raise


def read_changes(path: Path) -> list[Change]:
    """The changes of a file `write_changes` wrote; BadChangesFile when it is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise BadChangesFile("not a text file") from None
    except json.JSONDecodeError as exc:
        raise BadChangesFile(f"not JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BadChangesFile(f'not a file of unsaved labels (no "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise BadChangesFile(f"version {data.get('version')!r}; this tracetui reads version {VERSION}")
    entries = data.get("changes")
    if not isinstance(entries, list):
        raise BadChangesFile('"changes" is not a list')
    return [_change(entry, number) for number, entry in enumerate(entries, 1)]


def _entry(change: Change) -> dict[str, object]:
    key = change.key
    entry: dict[str, object] = {name: getattr(key, name) for name in _KEY_FIELDS}
    if isinstance(change, LabelChange):
        entry.update(label=change.label, on=change.on)
    else:
        entry.update(note=change.text, base=change.base)
    return entry


def _change(entry: object, number: int) -> Change:
    if not isinstance(entry, dict) or not all(isinstance(entry.get(n), t) for n, t in _KEY_FIELDS.items()):
        raise BadChangesFile(f"change {number}: not a trial's key ({', '.join(_KEY_FIELDS)})")
    key = TrialKey(**{name: entry[name] for name in _KEY_FIELDS})
    if isinstance(entry.get("label"), str) and isinstance(entry.get("on"), bool):
        return LabelChange(key, entry["label"], entry["on"])
    if isinstance(entry.get("note"), str) and isinstance(entry.get("base", ""), (str, type(None))):
        return NoteChange(key, entry["note"], entry.get("base"))
    raise BadChangesFile(f"change {number}: neither a label (label, on) nor a note (note, base)")

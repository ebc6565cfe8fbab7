"""Small display helpers shared by the widgets (badges, sizes, short names)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.cells import cell_len, set_cell_size
from rich.style import Style

from ..trace.sanitize import sanitize

OUTCOME_BADGES = {
    "pass": ("✔", Style(color="green", bold=True)),
    "partial": ("◐", Style(color="yellow", bold=True)),
    "fail": ("✘", Style(color="red", bold=True)),
    "error": ("⚠", Style(color="magenta", bold=True)),
    "unknown": ("?", Style(dim=True)),
    "running": ("▶", Style(color="cyan", bold=True)),
}


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def counted(count: int, noun: str) -> str:
    """`1 trial`, `2 trials`, `1,204 trials`."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def episode_of(episode: int, episodes: int, word: str = "episode") -> str:
    """`episode 2 (0–2)`: the episode's number as the data and the dividers give it (from 0), with
    the numbers there are, so it does not read as "2 of 3" beside a 1-based `message 6/6`."""
    return f"{word} {episode} (0–{max(0, episodes - 1)})"


def short_model(model: str) -> str:
    """`hosted_vllm/DCAgent/a1-e2egit` → `a1-e2egit`: the provider and org add nothing in a list."""
    return model.rstrip("/").rsplit("/", 1)[-1] if model else "—"


def model_names(models: Iterable[str]) -> dict[str, str]:
    """Each model id → its shortest tail of `/` segments that no other model shares: the provider
    (`openai/`) and org go where they add nothing, and stay where two models would read the same
    (`openai/gpt-4o` beside `azure/gpt-4o`)."""
    models = [m for m in dict.fromkeys(models) if m]
    parts = {m: m.rstrip("/").split("/") for m in models}
    tails: dict[str, str] = {}
    for model in models:
        segments = parts[model]
        for size in range(1, len(segments) + 1):
            tail = "/".join(segments[-size:])
            if size == len(segments) or not any("/".join(parts[o][-size:]) == tail for o in models if o != model):
                tails[model] = tail
                break
    return tails


def fit(text: str, width: int) -> str:
    """Sanitized `text` cut to `width` cells with an ellipsis, padded to exactly `width` cells.

    Labels come from the data, so they go through the same sanitizer as message content.
    """
    if width <= 0:
        return ""
    text = sanitize(text).replace("\n", " ")
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width)


def result_text(result: str | None, reward: float) -> str:
    if result is None:
        return "no result"
    if reward == reward:  # not nan
        return f"reward {result}"
    return result


def distinct_cuts(names: Iterable[str], width: int) -> dict[str, str]:
    """Each name (sanitized) in at most `width` cells, cut so that the cut names still tell apart the
    names that differ: a name that fits stays whole; one that does not is cut at its end (`claude-so…`)
    unless another name would read the same, then after the part it shares with those
    (`…4-5-20250929`), then at its start, then in its middle. The part that differs stays."""
    clean = {name: sanitize(name).replace("\n", " ") for name in dict.fromkeys(names)}
    chosen: dict[str, str] = {}
    pending = list(clean)
    for cut in (_cut_end, _cut_shared, _cut_start, _cut_middle):
        if not pending:
            break
        heads: dict[str, list[str]] = {}
        for name in pending:
            heads.setdefault(_cut_end(clean[name], width), []).append(name)
        cuts = {
            name: cut(clean[name], width, [clean[n] for n in heads[_cut_end(clean[name], width)]]) for name in pending
        }
        taken = set(chosen.values())
        counts: dict[str, int] = {}
        for text in cuts.values():
            counts[text] = counts.get(text, 0) + 1
        for name in pending:
            if counts[cuts[name]] == 1 and cuts[name] not in taken:
                chosen[name] = cuts[name]
        pending = [name for name in pending if name not in chosen]
    chosen.update({name: _cut_end(clean[name], width) for name in pending})
    return chosen


def _cut_end(text: str, width: int, group: Sequence[str] = ()) -> str:
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, max(0, width - 1)) + "…" if width > 0 else ""


def _cut_start(text: str, width: int, group: Sequence[str] = ()) -> str:
    if cell_len(text) <= width:
        return text
    tail = ""
    for character in reversed(text):
        if cell_len(character + tail) > width - 1:
            break
        tail = character + tail
    return "…" + tail


def _cut_shared(text: str, width: int, group: Sequence[str] = ()) -> str:
    """The part after the prefix that the names cut to the same end share, after as much of that
    prefix as fits and `…`: `gpt-5-m…8-07` beside `gpt-5-m…9-01`."""
    shared = 0
    if len(group) > 1:  # the common prefix of the group is that of its first and last in sorted order
        first, last = min(group), max(group)
        while shared < min(len(first), len(last)) and first[shared] == last[shared]:
            shared += 1
    if not shared or cell_len(text) <= width:
        return _cut_end(text, width)
    rest = text[shared:]
    room = width - 1 - cell_len(rest)
    if room <= 0:
        return "…" + _cut_end(rest, width - 1)
    return set_cell_size(text[:shared], room) + "…" + rest  # as much of the shared start as fits


def _cut_middle(text: str, width: int, group: Sequence[str] = ()) -> str:
    if cell_len(text) <= width:
        return text
    head = max(1, (width - 1) // 2)
    return set_cell_size(text, head) + "…" + _cut_start(text, width - head)[1:]


def share_widths(needs: Sequence[int], room: int, floor: int) -> list[int]:
    """Widths for columns that need `needs` cells in `room`: each gets what it needs when all fit, else
    the narrow ones keep theirs and the wide ones share the rest equally (never below `floor`)."""
    widths = [max(floor, need) for need in needs]
    if sum(widths) <= room or not widths:
        return widths
    order = sorted(range(len(widths)), key=lambda i: widths[i])
    left, count = room, len(widths)
    for position, index in enumerate(order):
        share = max(floor, left // (count - position))
        if widths[index] <= share:
            left -= widths[index]
            continue
        for rest in order[position:]:
            widths[rest] = share
        break
    return widths

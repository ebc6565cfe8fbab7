"""Small display helpers shared by the widgets (badges, sizes, short names)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len, set_cell_size
from rich.style import Style

from ..trace.sanitize import sanitize

OUTCOME_BADGES = {
    "pass": ("✔", Style(color="green", bold=True)),
    "partial": ("◐", Style(color="yellow", bold=True)),
    "fail": ("✘", Style(color="red", bold=True)),
    "error": ("⚠", Style(color="magenta", bold=True)),
    "unknown": ("?", Style(dim=True)),
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

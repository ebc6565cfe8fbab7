"""A trial's text as the rows harbor's exporter writes (one per episode, then one per sub-agent
conversation), without writing them: row K of a segment is the first `counts[K]` of its messages, so a
row is a slice, and nested-prefix rows cost no more memory than the trajectory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..dataset import Storage
from .atif import Messages

if TYPE_CHECKING:  # trial.py reads its texts through these rows: a type here, not an import at run time
    from .trial import TrialText


class TrialRows(Storage):
    """One trial's rows: its episode rows 0..E-1, then its sub-agent rows (what `rebuild_history` reads)."""

    def __init__(self, text: TrialText) -> None:
        self.text = text
        self.main = text.main_rows()

    @property
    def count(self) -> int:
        return len(self.main) + len(self.text.subagents)

    def message_count(self, row: int) -> int:
        if row < len(self.main):
            return self.main[row][1]
        return len(self.text.subagents[row - len(self.main)][1])

    def messages(self, row: int, start: int = 0, stop: int | None = None) -> list[tuple[str, str]]:
        if row < len(self.main):
            segment, count = self.main[row]
            stop = count if stop is None else min(stop, count)
            return self.text.segments[segment].messages[start:stop] if start < stop else []
        return self.text.subagents[row - len(self.main)][1][start:stop]


def exported_rows(
    text: TrialText, labels: dict[str, Any], result: str | None, trial_name: str, task: str
) -> list[dict[str, Any]]:
    """The rows harbor's exporter writes for the trial (episodes=all, sub-agents merged, verifier output
    included): its columns, in its order, with its values."""
    rows = []
    for episode, (segment, count) in enumerate(text.main_rows()):
        agent, model, tools = text.agents[segment]
        row = _row(text.segments[segment].messages[:count], agent, model, labels, episode, trial_name, task)
        if tools:
            row["tool_definitions"] = tools
        rows.append({**row, "result": result, "verifier_output": text.verifier, "trace_source": "main"})
    for source, messages, model in text.subagents:
        row = _row(messages, text.run_agent, model, labels, 0, trial_name, task)
        rows.append({**row, "result": result, "verifier_output": text.verifier, "trace_source": source})
    return rows


def _row(
    messages: Messages, agent: str, model: str, labels: dict[str, Any], episode: int, trial_name: str, task: str
) -> dict[str, Any]:
    """A row's first columns, in the exporter's order (it adds `tool_definitions`, then `result`)."""
    return {
        "conversations": [{"role": role, "content": content} for role, content in messages],
        "agent": agent,
        "model": model,
        "model_provider": labels["model_provider"],
        "date": labels["date"],
        "task": task,
        "episode": f"episode-{episode}",
        "run_id": labels["run_id"],
        "trial_name": trial_name,
    }

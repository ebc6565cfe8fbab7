"""The facets' names as `--filter` spells them: standard library only, so the command line's help can
name them without loading numpy (`facets.py` filters with them)."""

from __future__ import annotations

FACET_NAMES = {
    "outcome": "outcome",
    "result": "result",
    "model": "model",
    "task": "task",
    "agent": "agent",
    "provider": "model_provider",
    "source": "trace_source",
    "dataset": "dataset",
    "label": "label",
    "failed_test": "failed_test",
    "finding": "finding",
    "task_health": "task_health",
}
"""The names `--filter` takes (everywhere: the app, stats, export, findings) -> the facet's own name."""
ASK_PREFIX = "ask:"
"""`ask:NAME`: the answers to the question named NAME (`tracetui ask`), registered when asked for."""

"""Names cut so that rows can still be told apart (issue 23: `claude-sonn…` twice)."""

from __future__ import annotations

from rich.cells import cell_len

from tracetui.ui.cuts import Cuts, plain_cut

MODELS = [
    "claude-sonnet-4-5-20250929",
    "claude-sonnet-4-20250514",
    "gpt-5",
    "gpt-5-mini-2025-08-07",
    "gpt-5-nano-2025-08-07",
    "Qwen3-Coder-480B-A35B-Instruct",
    "Qwen3-Coder-30B-A3B-Instruct",
    "a1-e2egit",
]


def test_every_cut_fits_and_names_one_model_at_every_width():
    cuts = Cuts(MODELS)
    for width in range(8, 30):
        shown = [cuts(model, width) for model in MODELS]
        assert all(cell_len(text) <= width for text in shown), width
        assert len(set(shown)) == len(MODELS), (width, shown)


def test_a_cut_keeps_the_head_when_that_is_enough_and_drops_what_is_shared_when_not():
    cuts = Cuts(MODELS)
    assert cuts("gpt-5", 12) == "gpt-5"
    assert cuts("gpt-5-mini-2025-08-07", 12) == "gpt-5-mini-…"
    assert cuts("a1-e2egit", 6) == "a1-e2…"
    assert plain_cut("claude-sonnet-4-5-20250929", 12) == plain_cut("claude-sonnet-4-20250514", 12)
    assert cuts("claude-sonnet-4-5-20250929", 12) == "…sonnet-4-5…"
    assert cuts("claude-sonnet-4-20250514", 12) == "…sonnet-4-2…"
    assert cuts("Qwen3-Coder-480B-A35B-Instruct", 12) == "…Coder-480B…"


def test_many_names_are_checked_against_the_ones_they_would_be_confused_with():
    tasks = [f"task-{i:05d}-marmot-cache-service" for i in range(2000)] + [
        "marmot-cache-service-a",
        "marmot-cache-service-b",
    ]
    cuts = Cuts(tasks)
    assert cuts("marmot-cache-service-a", 16) != cuts("marmot-cache-service-b", 16)
    assert cuts("task-00001-marmot-cache-service", 30) == "task-00001-marmot-cache-servi…"


def test_columns_widen_to_their_names_where_the_list_has_room():
    """The task column (flexible) widens to its longest name first, then the model column to its own;
    the task column takes what is left. With little room the task names come first."""
    from tracetui.ui.widgets.columns import Column, fit_columns

    def blank(trial: int, width: int) -> str:
        return ""

    task = Column("task", "task", 10, blank, flex=True, grows_to=20)
    model = Column("model", "model", 8, blank, grows_to=15)
    assert [(c.key, w) for c, w in fit_columns([task, model], 30)] == [("task", 20), ("model", 8)]
    assert [(c.key, w) for c, w in fit_columns([task, model], 60)] == [("task", 43), ("model", 15)]

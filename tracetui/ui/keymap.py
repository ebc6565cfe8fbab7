"""Every key binding of the app, in one place: widgets take their lists from here, and the help
screen and the command palette are generated from the same lists, so they cannot drift apart."""

from __future__ import annotations

from textual.binding import Binding

APP = [
    Binding("q", "quit", "Quit"),
    Binding("ctrl+c", "no_quit", "Copy (q quits)", show=False),
    Binding("question_mark,f1", "help", "Help", key_display="?"),
    Binding("H", "prev_trial", "Prev trial", show=False),
    Binding("L", "next_trial", "Next trial", show=False),
    Binding("h,left_square_bracket", "prev_message", "Prev message", show=False),
    Binding("l,right_square_bracket", "next_message", "Next message", show=False),
    Binding("f", "focus_filters", "Filters"),
    Binding("v", "toggle_verifier", "Verifier"),
    Binding("z", "maximize", "Zoom", show=False),
    Binding("slash", "find", "Find", key_display="/"),
    Binding("n", "find_next", "Next match", show=False),
    Binding("N", "find_prev", "Prev match", show=False),
    Binding("t", "toggle_thinking", "Thinking", show=False),
    Binding("e", "goto_episode", "Episode", show=False),
    Binding("x", "clear_filters", "Clear filters", show=False),
    Binding("o", "cycle_sort", "Sort", show=False),
    Binding("O", "reverse_sort", "Reverse sort", show=False),
    Binding("a", "subagents", "Sub-agents", show=False),
    Binding("p", "pager", "Pager", show=False),
    Binding("P", "pager_trial", "Pager (trial)", show=False),
    Binding("E", "editor", "Editor", show=False),
]

MOVE = [
    Binding("j,down", "cursor_down", "Down", show=False),
    Binding("k,up", "cursor_up", "Up", show=False),
    Binding("g,home", "first", "First", show=False),
    Binding("G,end", "last", "Last", show=False),
    Binding("pagedown,ctrl+d", "page_down", "Page down", show=False),
    Binding("pageup,ctrl+u", "page_up", "Page up", show=False),
]
PAGE = [
    Binding("space", "page_down", "Page down", show=False),
    Binding("b", "page_up", "Page up", show=False),
]

TRIAL_LIST = [*MOVE, *PAGE, Binding("enter", "open", "Read", show=True)]

FACETS = [
    *MOVE,
    Binding("enter,space", "toggle", "Toggle value"),
]

CONVERSATION = [
    *MOVE,
    *PAGE,
    Binding("enter", "activate", "Fold/expand"),
    Binding("plus", "grow", "Grow", show=False),
    Binding("minus", "shrink", "Shrink", show=False),
]

VERIFIER = [
    *MOVE,
    *PAGE,
    Binding("enter", "activate", "Jump/fold"),
    Binding("plus", "grow", "Grow", show=False),
    Binding("minus", "shrink", "Shrink", show=False),
]

SECTIONS = {
    "Everywhere": APP,
    "Trial list": TRIAL_LIST,
    "Filters": FACETS,
    "Conversation": CONVERSATION,
    "Verifier panel": VERIFIER,
}
"""The help screen shows these, in this order."""

"""Every key binding of the app, in one place: widgets take their lists from here, and the help
screen and the command palette are generated from the same lists, so they cannot drift apart."""

from __future__ import annotations

from textual.binding import Binding

OPEN_SCREENS = [
    Binding("S", "stats", "Stats"),
    Binding("c", "compare", "Compare attempts", show=False),
    Binding("W", "head_to_head", "Head-to-head", show=False),
]

APP = [
    Binding("q", "quit", "Quit"),
    Binding("ctrl+c", "no_quit", "Copy (q quits)", show=False),
    Binding("question_mark,f1", "help", "Help", key_display="?"),
    Binding("H", "prev_trial", "Prev trial", show=False),
    Binding("L", "next_trial", "Next trial", show=False),
    Binding("h,left_square_bracket", "prev_message", "Prev message", show=False),
    Binding("l,right_square_bracket", "next_message", "Next message", show=False),
    Binding("f", "focus_filters", "Filters", show=False),
    Binding("F", "next_failure", "Next failed test", id="failure.next"),
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
    Binding("u", "subagents", "Sub-agent conversations", show=False),
    Binding("s,ctrl+f", "search", "Search all", key_display="s"),
    Binding("escape", "escape", "Cancel / clear search", show=False),
    Binding("a", "annotate", "Note", show=False),
    *(Binding(str(n), f"label({n})", f"Toggle label {n}", show=False) for n in range(1, 10)),
    Binding("U", "undo_label", "Undo the last label change", show=False, id="label.undo"),
    Binding("y", "copy", "Copy", show=False),
    Binding("Y", "copy_trial", "Copy trial (Markdown)", show=False),
    Binding("ctrl+e", "export", "Export", show=False),
    Binding("p", "pager", "Pager", show=False),
    Binding("P", "pager_trial", "Pager (trial)", show=False),
    Binding("E", "editor", "Editor", show=False),
    *OPEN_SCREENS,
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
    Binding("right_square_bracket,J", "next_section", "Next section", id="filters.next_section"),
    Binding("left_square_bracket,K", "prev_section", "Previous section", id="filters.prev_section"),
    Binding("slash", "filter_values", "Show values containing…", id="filters.find_values"),
]

CONVERSATION = [
    *MOVE,
    *PAGE,
    Binding("enter", "activate", "Fold/expand"),
]

VERIFIER = [
    *MOVE,
    *PAGE,
    Binding("enter", "activate", "Jump/fold"),
    Binding("plus", "grow", "Grow", show=False),
    Binding("minus", "shrink", "Shrink", show=False),
]

PROMPT = [
    Binding("down", "step(1)", "Next value (filter values)", show=False, id="prompt.next"),
    Binding("up", "step(-1)", "Previous value (filter values)", show=False, id="prompt.prev"),
]
"""The one-line prompt at the bottom (find, search, episode, export, filter values)."""

SECTIONS = {
    "Everywhere": APP,
    "Trial list": TRIAL_LIST,
    "Filters": FACETS,
    "Prompt": PROMPT,
    "Conversation": CONVERSATION,
    "Verifier panel": VERIFIER,
}
"""The help screen shows these, in this order."""

# --- the stats, compare and head-to-head screens, pushed from the triage screen ----------------

"""For the triage screen: the stats of the filtered trials, the trial against another attempt of its
task, and the per-task head-to-head of two datasets or models."""

CLOSE = [Binding("escape,q", "close", "Close")]

SCROLL = [
    Binding("j,down", "scroll_down", "Scroll down", show=False),
    Binding("k,up", "scroll_up", "Scroll up", show=False),
    Binding("g,home", "scroll_home", "Top", show=False),
    Binding("G,end", "scroll_end", "Bottom", show=False),
    Binding("space,pagedown", "page_down", "Page down", show=False),
    Binding("b,pageup", "page_up", "Page up", show=False),
]
"""A scrolling page of sections (the stats screen when it does not fit)."""

STATS = [*CLOSE, Binding("o", "cycle_sort", "Sort tasks")]

MATRIX = [
    *MOVE,
    Binding("h,left", "cursor_left", "Left", show=False),
    Binding("l,right", "cursor_right", "Right", show=False),
    Binding("enter", "pick", "Filter to cell"),
]

GROUP_TABLE = [*MOVE, Binding("enter", "pick", "Filter to row")]

COMPARE = [
    *CLOSE,
    Binding("h,left_square_bracket", "prev_message", "Prev message", show=False),
    Binding("l,right_square_bracket", "next_message", "Next message", show=False),
    Binding("tab", "other_side", "Other side"),
    Binding("c", "choose_other", "Choose the right side", id="compare.choose_other"),
    Binding("s", "cycle_sync", "Sync"),
    Binding("t", "toggle_thinking", "Thinking", show=False),
]

COMPARE_PICKER = [Binding("escape,q", "cancel", "Cancel", id="picker.cancel")]
"""The picker of the other side (Enter chooses: the option list's own key)."""

HEAD_TO_HEAD = [
    *CLOSE,
    Binding("s", "next_sides", "Next sides"),
    Binding("S", "prev_sides", "Prev sides", show=False),
    Binding("0", "show('all')", "All tasks", show=False),
    Binding("1", "show('a_only')", "A passes, B fails"),
    Binding("2", "show('b_only')", "B passes, A fails"),
    Binding("3", "show('both_fail')", "Both fail", show=False),
    Binding("4", "show('both_pass')", "Both pass", show=False),
    Binding("f", "filter", "Filter list to task", show=False),
]

HEAD_TO_HEAD_TABLE = [*MOVE, *PAGE, Binding("enter", "open", "Compare best vs worst")]

SECTIONS.update(
    {
        "Stats screen": [*STATS, *SCROLL],
        "Stats: matrix": MATRIX,
        "Stats: tables": GROUP_TABLE,
        "Compare": COMPARE,
        "Compare: the other side": [*COMPARE_PICKER, Binding("enter", "select", "Compare with this attempt", id="picker.choose")],
        "Head-to-head": [*HEAD_TO_HEAD, *HEAD_TO_HEAD_TABLE],
    }
)

"""Every key binding of the app, in one place: widgets take their lists from here, and the help
screen and the command palette are generated from the same lists, so they cannot drift apart.
Each binding has a stable id (listed in docs/keymap.md) that the config file's `[keymap]` remaps.

A widget takes a copy, `BINDINGS = [*keymap.APP]`: Textual types BINDINGS as a list of bindings or
tuples, and the lists here stay lists of Bindings for the help screen and the palette."""

from __future__ import annotations

from textual.binding import Binding

OPEN_SCREENS = [
    Binding("S", "stats", "Stats", id="screen.stats"),
    Binding("c", "compare", "Compare attempts", show=False, id="screen.compare"),
    Binding("W", "head_to_head", "Head-to-head", show=False, id="screen.head_to_head"),
]

APP = [
    Binding("q", "quit", "Quit", id="app.quit"),
    Binding("ctrl+c", "no_quit", "Copy (q quits)", show=False, id="app.copy_hint"),
    Binding("question_mark,f1", "help", "Help", key_display="?", id="app.help"),
    Binding("H", "prev_trial", "Prev trial", show=False, id="trial.prev"),
    Binding("L", "next_trial", "Next trial", show=False, id="trial.next"),
    Binding("h,left_square_bracket", "prev_message", "Prev message", show=False, id="message.prev"),
    Binding("l,right_square_bracket", "next_message", "Next message", show=False, id="message.next"),
    Binding("f", "focus_filters", "Filters", show=False, id="filters.focus"),
    Binding("ampersand", "name_filter", "Filter by task / trial name", key_display="&", show=False, id="filters.name"),
    Binding("F", "next_failure", "Next failed test", id="failure.next"),
    Binding("exclamation_mark", "next_finding", "Next finding", key_display="!", show=False, id="finding.next"),
    Binding("A", "ask", "Ask every listed trial a question", show=False, id="ask.start"),
    Binding("at", "next_answer", "Next answer's evidence", key_display="@", show=False, id="ask.next"),
    Binding("v", "toggle_verifier", "Verifier", id="verifier.toggle"),
    Binding("z", "maximize", "Zoom", show=False, id="pane.zoom"),
    Binding("slash", "find", "Find", key_display="/", id="find.start"),
    Binding("n", "find_next", "Next match", show=False, id="find.next"),
    Binding("N", "find_prev", "Prev match", show=False, id="find.prev"),
    Binding("t", "toggle_thinking", "Thinking", show=False, id="thinking.toggle"),
    Binding("e", "goto_episode", "Episode", show=False, id="episode.goto"),
    Binding("x", "clear_filters", "Clear filters", show=False, id="filters.clear"),
    Binding("o", "cycle_sort", "Sort", show=False, id="sort.cycle"),
    Binding("O", "reverse_sort", "Reverse sort", show=False, id="sort.reverse"),
    Binding("u", "subagents", "Sub-agent conversations", show=False, id="subagents.show"),
    Binding("r", "recording", "Terminal recording, at this message", show=False, id="recording.open"),
    Binding("s,ctrl+f", "search", "Search all", key_display="s", id="search.start"),
    Binding("escape", "escape", "Cancel / clear search", show=False, id="search.cancel"),
    Binding("a", "annotate", "Note", show=False, id="note.edit"),
    *(Binding(str(n), f"label({n})", f"Toggle label {n}", show=False, id=f"label.{n}") for n in range(1, 10)),
    Binding("U", "undo_label", "Undo the last label change", show=False, id="label.undo"),
    Binding("y", "copy", "Copy", show=False, id="copy.message"),
    Binding("Y", "copy_trial", "Copy trial (Markdown)", show=False, id="copy.trial"),
    Binding("ctrl+e", "export", "Export", show=False, id="trials.export"),
    Binding("p", "pager", "Pager", show=False, id="pager.message"),
    Binding("P", "pager_trial", "Pager (trial)", show=False, id="pager.trial"),
    Binding("E", "editor", "Editor", show=False, id="editor.message"),
    Binding("T", "trial_files", "Trial's other files (logs, artifacts, config)", show=False, id="trial.files"),
    *OPEN_SCREENS,
]

MOVE = [
    Binding("j,down", "cursor_down", "Down", show=False, id="cursor.down"),
    Binding("k,up", "cursor_up", "Up", show=False, id="cursor.up"),
    Binding("g,home", "first", "First", show=False, id="cursor.first"),
    Binding("G,end", "last", "Last", show=False, id="cursor.last"),
    Binding("pagedown,ctrl+d", "page_down", "Page down", show=False, id="page.down"),
    Binding("pageup,ctrl+u", "page_up", "Page up", show=False, id="page.up"),
]
PAGE = [
    Binding("space", "page_down", "Page down", show=False, id="page.forward"),
    Binding("b", "page_up", "Page up", show=False, id="page.back"),
]

TRIAL_LIST = [*MOVE, *PAGE, Binding("enter", "open", "Read", show=True, id="trial.open")]

FACETS = [
    *MOVE,
    Binding("enter,space", "toggle_value", "Toggle value", id="filters.toggle"),
    Binding("right_square_bracket,J", "next_section", "Next section", show=False, id="filters.next_section"),
    Binding("left_square_bracket,K", "prev_section", "Previous section", show=False, id="filters.prev_section"),
    Binding("slash", "filter_values", "Show values containing…", id="filters.find_values"),
    Binding("plus", "grow", "Widen the sidebar", show=False, id="filters.wider"),
    Binding("minus", "shrink", "Narrow the sidebar", show=False, id="filters.narrower"),
]

CONVERSATION = [
    *MOVE,
    *PAGE,
    Binding("enter", "activate", "Fold/expand", id="conversation.activate"),
]

FINDINGS = [*MOVE, Binding("enter", "open", "Show the evidence", id="finding.open")]
"""The findings pane of the open trial."""

VERIFIER = [
    *MOVE,
    *PAGE,
    Binding("enter", "activate", "Jump/fold", id="verifier.activate"),
    Binding("plus", "grow", "Grow", show=False, id="verifier.grow"),
    Binding("minus", "shrink", "Shrink", show=False, id="verifier.shrink"),
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
    "Findings pane": FINDINGS,
    "Verifier panel": VERIFIER,
}
"""The help screen shows these, in this order."""

# --- the stats, compare and head-to-head screens, pushed from the triage screen ----------------

"""For the triage screen: the stats of the filtered trials, the trial against another attempt of its
task, and the per-task head-to-head of two datasets or models."""

CLOSE = [Binding("escape,q", "close", "Close", id="screen.close")]

SCROLL = [
    Binding("j,down", "scroll_down", "Scroll down", show=False, id="scroll.down"),
    Binding("k,up", "scroll_up", "Scroll up", show=False, id="scroll.up"),
    Binding("g,home", "scroll_home", "Top", show=False, id="scroll.top"),
    Binding("G,end", "scroll_end", "Bottom", show=False, id="scroll.bottom"),
    Binding("space,pagedown", "page_down", "Page down", show=False, id="scroll.page_down"),
    Binding("b,pageup", "page_up", "Page up", show=False, id="scroll.page_up"),
]
"""A scrolling page of sections (the stats screen when it does not fit)."""

STATS = [*CLOSE, Binding("o", "cycle_sort", "Sort tasks", id="stats.sort")]

MATRIX = [
    *MOVE,
    Binding("h,left", "cursor_left", "Left", show=False, id="cursor.left"),
    Binding("l,right", "cursor_right", "Right", show=False, id="cursor.right"),
    Binding("enter", "pick", "Filter to cell", id="matrix.pick"),
]

GROUP_TABLE = [*MOVE, Binding("enter", "pick", "Filter to row", id="table.pick")]

COMPARE = [
    *CLOSE,
    Binding("h,left_square_bracket", "prev_message", "Prev message", show=False, id="message.prev"),
    Binding("l,right_square_bracket", "next_message", "Next message", show=False, id="message.next"),
    Binding("tab", "other_side", "Other side", id="compare.other_side"),
    Binding("c", "choose_other", "Choose the right side", id="compare.choose_other"),
    Binding("s", "cycle_sync", "Sync", id="compare.sync"),
    Binding("t", "toggle_thinking", "Thinking", show=False, id="thinking.toggle"),
]

COMPARE_PICKER = [Binding("escape,q", "cancel", "Cancel", id="picker.cancel")]
"""The picker of the other side (Enter chooses: the option list's own key)."""

TRIAL_FILES = [*COMPARE_PICKER]
"""The picker of the trial's other files (`T`; Enter opens one in the pager)."""

HEAD_TO_HEAD = [
    *CLOSE,
    Binding("s", "next_sides", "Next sides", id="h2h.next_sides"),
    Binding("S", "prev_sides", "Prev sides", show=False, id="h2h.prev_sides"),
    Binding("0", "show('all')", "All tasks", show=False, id="h2h.show_all"),
    Binding("1", "show('a_only')", "A passes, B fails", id="h2h.show_a_only"),
    Binding("2", "show('b_only')", "B passes, A fails", id="h2h.show_b_only"),
    Binding("3", "show('both_fail')", "Both fail", show=False, id="h2h.show_both_fail"),
    Binding("4", "show('both_pass')", "Both pass", show=False, id="h2h.show_both_pass"),
    Binding("f", "filter", "Filter list to task", show=False, id="h2h.filter"),
]

RECORDING = [
    *CLOSE,
    Binding("space", "play_pause", "Play/pause", id="recording.play"),
    Binding("left", "seek(-5)", "Back 5 s", show=False, id="recording.back"),
    Binding("right", "seek(5)", "On 5 s", show=False, id="recording.on"),
    Binding("shift+left,down", "seek(-30)", "Back 30 s", show=False, id="recording.back_more"),
    Binding("shift+right,up", "seek(30)", "On 30 s", show=False, id="recording.on_more"),
    Binding("left_square_bracket", "marker(-1)", "Prev episode", key_display="[", id="recording.prev_marker"),
    Binding("right_square_bracket", "marker(1)", "Next episode", key_display="]", id="recording.next_marker"),
    Binding("less_than_sign", "speed(-1)", "Slower", key_display="<", id="recording.slower"),
    Binding("greater_than_sign", "speed(1)", "Faster", key_display=">", id="recording.faster"),
    Binding("g,home", "jump(0)", "Start", show=False, id="recording.start"),
    Binding("G,end", "jump(1)", "End", show=False, id="recording.end"),
    Binding("h", "pan(-8, 0)", "Pan left", show=False, id="recording.pan_left"),
    Binding("l", "pan(8, 0)", "Pan right", show=False, id="recording.pan_right"),
    Binding("k", "pan(0, -1)", "Pan up", show=False, id="recording.pan_up"),
    Binding("j", "pan(0, 1)", "Pan down", show=False, id="recording.pan_down"),
]
"""The recording screen (`r`): a trial's terminal recording played back."""

HEAD_TO_HEAD_TABLE = [*MOVE, *PAGE, Binding("enter", "open", "Compare best vs worst", id="h2h.open")]

NOTE = [Binding("escape,ctrl+s", "save", "Save and close", id="note.save")]
"""The note editor (`a`): both keys save, so no key throws away a note being typed."""

UNSAVED = [
    Binding("w", "write", "Write them to the file and quit", id="unsaved.write"),
    Binding("e", "edit_path", "Edit the file's path", id="unsaved.edit_path"),
    Binding("Q", "discard", "Quit anyway: they are lost", id="unsaved.discard"),
    Binding("escape", "stay", "Stay", id="unsaved.stay"),
]
"""The question on quit while labels or notes are held in memory, not saved."""
HELP = [Binding("escape,q,question_mark,f1", "dismiss", "Close", id="help.close")]
"""The help screen, which scrolls with the `SCROLL` keys."""

SECTIONS.update(
    {
        "Stats screen": [*STATS, *SCROLL],
        "Stats: matrix": MATRIX,
        "Stats: tables": GROUP_TABLE,
        "Compare": COMPARE,
        "Compare: the other side": [
            *COMPARE_PICKER,
            Binding("enter", "select", "Compare with this attempt", id="picker.choose"),
        ],
        "Trial's other files": [
            *TRIAL_FILES,
            Binding("enter", "select", "Open in the pager", id="files.open"),
        ],
        "Head-to-head": [*HEAD_TO_HEAD, *HEAD_TO_HEAD_TABLE],
        "Recording": RECORDING,
        "Note editor": NOTE,
        "Quit with unsaved labels or notes": UNSAVED,
        "Help screen": [*HELP, *SCROLL],
    }
)

"""Turn one message of a trial's history into the blocks the conversation view lays out.

Every block's text is sanitized and already cut to a readable size; all highlighting (Pygments,
ANSI colours) is deferred to the blocks' stylers, so building the blocks of even a 5 MB message
costs a few string scans. Cuts are made on the raw text before anything else looks at it.

Blocks carry `action=Toggle.THINKING` (Enter toggles MessageState.think_open) on reasoning headers and
`action=Toggle.EXPAND` (toggles MessageState.expanded) on "… N lines hidden" markers, their
"collapse" counterparts and folded prompt templates.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from rich.text import Text

from tracetui.render.ansi import SgrChain, ansi_text, sgr_after
from tracetui.render.block import Block, Toggle
from tracetui.render.figures import step_usage
from tracetui.render.highlight import PIECE_CHARS, highlight, pieces
from tracetui.render.palette import Palette
from tracetui.trace.actions import AssistantReply, Command, ToolCall, parse_assistant
from tracetui.trace.harness import HARNESS_KINDS, Part, classify_user
from tracetui.trace.model import Message, StepMetrics
from tracetui.trace.sanitize import sanitize

MAX_LINES = 200
"""A block with more lines than this is cut to its head and tail..."""
MAX_LINE = 2000
"""...and so is one with a longer line (cut inside that line)."""
HEAD_LINES = 120
TAIL_LINES = 40
TAIL_CHARS = 1000
"""Characters kept of a long line the tail starts inside."""
BLANK_RUN = 3
"""Consecutive blank terminal lines from which they collapse into one marker line."""

BADGES = {
    "parse_error": "⚠ parse error",
    "warning": "⚠ warnings",
    "completion_check": "? completion check",
    "timeout": "⏱ timeout",
    "output_limit": "✂ output limit",
    "handoff": "⇄ handoff",
    "unparsed": "⚠ unparsed reply",
    "prompt": "prompt",
    "observation": "terminal",
}
"""The header badge of each kind of message; its style is the palette role `badge.<kind>`."""
HEADER_ROLES = ("assistant", "user", "system")
"""Message roles with a header colour of their own (palette roles of the same name); others get
`other_role`."""

_CODE_ARGUMENTS = {
    "command": "bash",
    "cmd": "bash",
    "code": "python",
    "file_text": None,
    "new_str": None,
    "old_str": None,
    "content": None,
    "patch": "diff",
}
_FENCE = re.compile(r"^[ \t]*```[ \t]*([^\s`]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$\n?|\Z)", re.MULTILINE | re.DOTALL)
_OMITTED = re.compile(
    r"\n?\[\.\.\. output limited to (\d[\d,]{0,20}) bytes; (\d[\d,]{0,20}) interior "
    r"bytes omitted \.\.\.\]\n?"
)


@dataclass(frozen=True, slots=True)
class MessageState:
    think_open: bool = False
    """<think> reasoning unfolded."""
    expanded: bool = False
    """Long content shown whole."""


def message_blocks(
    history: Sequence[Message], i: int, state: MessageState = MessageState(), metrics: StepMetrics | None = None
) -> list[Block]:
    """The blocks of message `i`: a one-line header (with the tokens and cost of the agent step that
    wrote it, `metrics`, for sources that record them), then its body."""
    message = history[i]
    content = message.content if isinstance(message.content, str) else ""
    badge = None
    if message.role == "assistant":
        reply = parse_assistant(content)
        harness = _harness_feedback(history, i)
        if reply.error is not None or harness is not None:
            badge = "unparsed"
        body = _assistant(reply, harness, state)
    elif message.role == "user":
        user = classify_user(content, first=i == 0)
        badge = user.kind if user.kind in BADGES else None
        body = _user_parts(user.kind, user.parts, state)
    else:
        body = _prose(content, state)
    blocks = [_header(message, i, len(history), badge, len(content), metrics), *body]
    for block in blocks:
        block.message = i
    return blocks


def _header(message: Message, i: int, total: int, badge: str | None, size: int, metrics: StepMetrics | None) -> Block:
    role = (sanitize(message.role)[:40] if isinstance(message.role, str) else "") or "?"
    pieces = [(role, role if role in HEADER_ROLES else "other_role")]
    if badge is not None:
        pieces += [("  ", ""), (f" {BADGES[badge]} ", f"badge.{badge}")]
    meta = f"  episode {message.episode} · #{i + 1}/{total} · {_size(size)}"
    pieces.append((meta, "meta"))
    usage = step_usage(metrics)
    if usage:
        pieces.append((f" · {usage}", "meta"))
    if message.restart:
        pieces.append(("  ⟲ context summarized — history restarts", "restart"))
    return _pieces_block(pieces)


def _pieces_block(pieces: list[tuple[str, str]], **fields) -> Block:
    """A block made of our own (already safe) fragments, each in the style of its palette role."""
    text = "".join(piece for piece, _ in pieces)

    def styler(palette: Palette) -> Text:
        return Text.assemble(*((piece, palette[role] if role else "") for piece, role in pieces))

    return Block(text, styler=styler, **fields)


def _size(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    return f"{n / 1000:.1f} KB" if n < 1_000_000 else f"{n / 1_000_000:.1f} MB"


# --- long content -----------------------------------------------------------------------------


def _cut(s: str) -> tuple[int, int] | None:
    """(end of head, start of tail) for text too long to show whole; None when it is not.

    Found with str.find/rfind from both ends, never by splitting the whole text.
    """
    if s.count("\n") < MAX_LINES and (len(s) <= MAX_LINE or not _has_long_line(s)):
        return None
    head_end = _head_end(s)
    tail_start = _tail_start(s, head_end)
    return (head_end, tail_start) if tail_start > head_end else None


def _has_long_line(s: str) -> bool:
    pos = 0
    while True:
        newline = s.find("\n", pos)
        end = len(s) if newline < 0 else newline
        if end - pos > MAX_LINE:
            return True
        if newline < 0:
            return False
        pos = newline + 1


def _head_end(s: str) -> int:
    pos = 0
    for _ in range(HEAD_LINES):
        newline = s.find("\n", pos)
        end = len(s) if newline < 0 else newline
        if end - pos > MAX_LINE:
            return pos + MAX_LINE
        if newline < 0:
            return len(s)
        pos = newline + 1
    return pos - 1


def _tail_start(s: str, head_end: int) -> int:
    end = len(s)
    for _ in range(TAIL_LINES):
        newline = s.rfind("\n", head_end, end)
        start = head_end if newline < 0 else newline + 1
        if end - start > MAX_LINE:
            return max(end - TAIL_CHARS, head_end)
        if newline < 0:
            return head_end
        end = newline
    return end + 1


def _hidden_marker(s: str, head_end: int, tail_start: int, indent: int) -> Block:
    start = head_end + (s.startswith("\n", head_end))
    end = tail_start - (tail_start > start and s[tail_start - 1] == "\n")
    lines = s.count("\n", start, end) + 1 if end > start else 0
    what = f"{lines:,} lines" if lines > 1 else f"{end - start:,} characters"
    return Block(
        f"… {what} ({_size(end - start)}) hidden — Enter to expand", style="marker", indent=indent, action=Toggle.EXPAND
    )


def _cut_blocks(raw: str, state: MessageState, make: Callable[[str], list[Block]], indent: int = 0) -> list[Block]:
    """`make`'s blocks for raw text, cut to head and tail (around a marker) unless expanded."""
    cut = _cut(raw)
    if cut is None:
        return make(raw)
    if state.expanded:
        collapse = Block("▴ shown whole — Enter to collapse", style="marker", indent=indent, action=Toggle.EXPAND)
        return [*make(raw), collapse]
    head_end, tail_start = cut
    return [*make(raw[:head_end]), _hidden_marker(raw, head_end, tail_start, indent), *make(raw[tail_start:])]


# --- prose, code, terminal --------------------------------------------------------------------


def _prose(raw: str, state: MessageState, style: str = "", indent: int = 0, label: str = "") -> list[Block]:
    """Prose with its fenced code blocks highlighted; `label` (e.g. "Analysis") leads it."""
    if not raw.strip():
        return [Block(f"{label}:", style="label", indent=indent)] if label else []
    blocks = _cut_blocks(raw, state, lambda piece: _prose_piece(piece, style, indent), indent)
    if label:
        first = blocks[0] if blocks else None
        if first is not None and first.wrap and first.action is None:
            blocks[0] = _labelled(label, first)
        else:
            blocks.insert(0, Block(f"{label}:", style="label", indent=indent))
    return blocks


def _labelled(label: str, block: Block) -> Block:
    """The block with `Label: ` in front of its first line."""
    prefix = f"{label}: "
    inner = block.styler
    styler = lambda palette: Text.assemble((prefix, palette["label"]), inner(palette) if inner else block.text)  # noqa: E731
    return Block(prefix + block.text, style=block.style, styler=styler, indent=block.indent)


def _prose_piece(raw: str, style: str, indent: int) -> list[Block]:
    blocks = []
    pos = 0
    for fence in _FENCE.finditer(raw):
        if raw[pos : fence.start()].strip():
            blocks += _text_blocks(raw[pos : fence.start()].strip("\n"), style, indent)
        blocks += _code_blocks(fence.group(2).rstrip("\n"), fence.group(1) or None, indent + 2)
        pos = fence.end()
    if raw[pos:].strip() or not blocks:
        blocks += _text_blocks(raw[pos:].strip("\n"), style, indent)
    return blocks


def _text_blocks(raw: str, style: str, indent: int) -> list[Block]:
    """Text as a block per piece of whole lines (`highlight.pieces`): the view styles and cuts a block
    into its lines all at once when it first shows (~40 ms for 500 KB of prose shown whole)."""
    text = sanitize(raw)
    return [Block(text[start:end], style=style, indent=indent) for start, end in pieces(text)]


def _code_blocks(raw: str, lang: str | None, indent: int) -> list[Block]:
    """Code as a block per piece of whole lines (`highlight.pieces`): each is highlighted when it is
    first drawn, so a long file shown whole is highlighted as it scrolls into view."""
    text = sanitize(raw)
    return [
        Block(text[start:end], styler=partial(highlight, text, lang, start=start, end=end), indent=indent)
        for start, end in pieces(text)
    ]


def _code(raw: str, lang: str | None, state: MessageState, indent: int) -> list[Block]:
    return _cut_blocks(raw, state, lambda piece: _code_blocks(piece, lang, indent), indent)


def _terminal(raw: str, state: MessageState, indent: int = 2) -> list[Block]:
    """Terminal output: ANSI colours, blank runs collapsed, the harness's cut made visible."""
    raw = raw.removesuffix("\n")
    if not raw.strip():
        return [Block("(no output)", style="marker", indent=indent)]
    return _cut_blocks(raw, state, lambda piece: _terminal_blocks(piece, indent), indent)


_Segment = tuple[str, str | None, str]
"""A stretch of terminal output as (shown, palette role, raw): output itself is (raw, None, raw); a marker
(a run of blank lines, the harness's cut) is its own text, its role, and the raw text it stands for,
whose escape sequences still count for the colours after it."""


def _terminal_blocks(raw: str, indent: int) -> list[Block]:
    """Terminal output as blocks of whole lines of about PIECE_CHARS characters (`highlight.pieces`),
    each given its colours when first drawn, with the colours in force carried from one to the next
    (a 300 KB output shown whole took ~0.1 s to style in one piece)."""
    groups: list[list[_Segment]] = [[]]
    size = 0
    for segment in _terminal_segments(raw):
        text = segment[0]
        parts = [_raw_segment(text[a:b]) for a, b in pieces(text)] if segment[1] is None else [segment]
        for part in parts:
            if groups[-1] and size + len(part[0]) > PIECE_CHARS:
                groups.append([])
                size = 0
            groups[-1].append(part)
            size += len(part[0]) + 1
    chain = SgrChain(["\n".join(source for _, _, source in group) for group in groups])
    return [
        Block(
            "\n".join(sanitize(s) if role is None else s for s, role, _ in group),
            style="terminal",
            styler=partial(_terminal_text, group, chain, number),
            indent=indent,
        )
        for number, group in enumerate(groups)
    ]


def _terminal_segments(raw: str) -> list[_Segment]:
    """The output's line groups, with runs of blank lines and the harness's cuts as markers."""
    segments: list[_Segment] = []
    pos = 0
    for omitted in _OMITTED.finditer(raw):
        segments += _blank_runs(raw[pos : omitted.start()])
        limit, hidden = (int(group.replace(",", "")) for group in omitted.groups())
        note = f"✂ {hidden:,} bytes omitted by the harness (output limited to {limit:,} bytes)"
        segments.append((note, "omitted", ""))
        pos = omitted.end()
    return segments + _blank_runs(raw[pos:])


def _terminal_text(group: list[_Segment], chain: SgrChain, number: int, palette: Palette) -> Text:
    state = chain.state(number)
    parts = []
    for text, role, source in group:
        parts.append(ansi_text(text, state) if role is None else Text(text, palette[role]))
        state = sgr_after(source, state)
    return Text("\n").join(parts)


def _blank_runs(raw: str) -> list[_Segment]:
    """Raw line groups, with each run of BLANK_RUN or more blank lines replaced by a marker."""
    if "\n" not in raw:
        return [_raw_segment(raw)] if raw else []
    segments: list[_Segment] = []
    lines = raw.split("\n")
    start = k = 0
    while k < len(lines):
        run = k
        while run < len(lines) and not sanitize(lines[run]).strip():
            run += 1
        if run - k >= BLANK_RUN:
            if k > start:
                segments.append(_raw_segment("\n".join(lines[start:k])))
            segments.append((f"… {run - k} blank lines", "marker", "\n".join(lines[k:run])))
            start = run
        k = max(run, k + 1)
    if start < len(lines):
        segments.append(_raw_segment("\n".join(lines[start:])))
    return segments


def _raw_segment(raw: str) -> _Segment:
    return (raw, None, raw)


# --- assistant --------------------------------------------------------------------------------


def _assistant(reply: AssistantReply, harness: str | None, state: MessageState) -> list[Block]:
    blocks = [block for think in reply.think for block in _think(think, state)]
    if reply.error is not None or harness is not None:
        return blocks + _unparsed(reply, harness, state)
    if reply.prose:
        blocks += _prose(reply.prose, state)
    if reply.analysis is not None:
        blocks += _prose(reply.analysis, state, label="Analysis")
    if reply.plan is not None:
        blocks += _prose(reply.plan, state, label="Plan")
    for number, command in enumerate(reply.commands, 1):
        blocks += _command(number, command, state)
    for call in reply.tool_calls:
        blocks += _tool_call(call, state)
    if reply.task_complete:
        blocks.append(Block("✔ task_complete", style="complete"))
    elif reply.format in ("json", "xml") and not reply.commands:
        blocks.append(Block("(no commands)", style="marker"))
    return blocks


def _think(think: str, state: MessageState) -> list[Block]:
    size = _size(len(think))
    if not state.think_open:
        words = " ".join(sanitize(think[:400]).split())
        preview = words if len(words) <= 100 else words[:99].rstrip() + "…"
        return [Block(f"▸ thinking ({size}): {preview}", style="think", action=Toggle.THINKING)]
    return [
        Block(f"▾ thinking ({size})", style="think", action=Toggle.THINKING),
        *_prose(think, state, style="think", indent=2),
    ]


def _harness_feedback(history: Sequence[Message], i: int) -> str | None:
    """The parse-error message that answered reply `i`, if the next message is one."""
    if i + 1 < len(history) and history[i + 1].role == "user":
        content = history[i + 1].content or ""
        if classify_user(content, first=False).kind == "parse_error":
            return content
    return None


def _unparsed(reply: AssistantReply, harness: str | None, state: MessageState) -> list[Block]:
    """The raw reply, flagged, with why it did not parse beneath it."""
    blocks = [Block("⚠ unparsed reply", style="error.heading")]
    blocks += _cut_blocks(reply.body.strip("\n"), state, lambda piece: _text_blocks(piece, "", 2), 2)
    if harness is not None:
        feedback = harness.partition("\n")[2].split("\n\nPlease fix these issues")[0].strip()
        blocks.append(Block("↳ harness said:", style="error.heading", indent=2))
        blocks += _prose(feedback, state, style="error", indent=4)
    else:
        blocks.append(Block(f"↳ parser: {sanitize(reply.error or '')}", style="error", indent=2))
        if reply.warnings:
            warnings = "\n".join(f"- {w}" for w in reply.warnings)
            blocks += _prose(warnings, state, style="warning", indent=4)
    return blocks


def _command(number: int, command: Command, state: MessageState) -> list[Block]:
    keystrokes, key = command.keystrokes, command.key
    timing = f"⏱ {command.duration:g}s" if command.duration is not None else "⏱ 1s (default)"
    head = f"{number:>2}. "
    if key is not None:
        return [_pieces_block([(head, "command"), (f"⌨ {sanitize(key)}", "key"), (f"   {timing}", "command")])]
    if not keystrokes:
        return [Block(f"{head}(wait)   {timing}", style="command")]
    enter = keystrokes.endswith("\n")
    note = "" if enter else "   (no Enter: typed, not run)"
    return [
        Block(f"{head}{timing}{note}", style="command"),
        *_code(keystrokes[:-1] if enter else keystrokes, "bash", state, indent=4),
    ]


def _tool_call(call: ToolCall, state: MessageState) -> list[Block]:
    name = sanitize(call.name)[:80]
    if call.error is not None:
        return [
            Block(f"⚙ {name}: unparsed tool call", style="error.heading"),
            *_code(call.raw, None, state, indent=4),
            Block(f"↳ {sanitize(call.error)}", style="error", indent=2),
        ]
    arguments = dict(call.arguments)
    blocks = []
    keystrokes = arguments.pop("keystrokes", None)
    if isinstance(keystrokes, str):  # terminus-style: shown like a JSON action's command
        duration = arguments.pop("duration", None)
        duration = float(duration) if isinstance(duration, (int, float)) else None
        blocks += _command(1, Command(keystrokes, duration), state)
    elif keystrokes is not None:
        arguments["keystrokes"] = keystrokes
    inline = []
    editor = "path" in arguments  # an editor's `command` is a sub-command, not shell
    for key, value in arguments.items():
        key = sanitize(str(key))[:80]
        if isinstance(value, str) and key in _CODE_ARGUMENTS and not (key == "command" and editor):
            lang = _CODE_ARGUMENTS[key] or str(arguments.get("path") or "") or None  # resolved lazily
            blocks += [
                Block(f"{key}:", style="command", indent=2),
                *_code(value.removesuffix("\n"), lang, state, indent=4),
            ]
        elif isinstance(value, str) and ("\n" in value or len(value) > 100):
            blocks += _prose(value, state, indent=2, label=key)
        else:
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            inline.append(f"{key}={sanitize(shown)[:200]}")
    pieces = [(f"⚙ {name}", "tool")] + ([("  " + "  ".join(inline), "command")] if inline else [])
    return [_pieces_block(pieces), *blocks]


# --- user and other roles ---------------------------------------------------------------------


def _user_parts(kind: str, parts: tuple[Part, ...], state: MessageState) -> list[Block]:
    blocks = []
    for part in parts:
        if part.kind == "template":
            blocks += _template(part, state)
        elif part.kind == "terminal":
            blocks += _terminal(part.text, state)
        elif part.kind == "code":
            blocks += [
                Block(f"{sanitize(part.label)}:", style="command"),
                *_code(part.text, part.lang, state, indent=2),
            ]
        elif part.kind == "harness" and kind in HARNESS_KINDS:
            blocks += _prose(part.text.strip("\n"), state, style=f"harness.{kind}")
        else:
            blocks += _prose(part.text.strip("\n"), state, label=sanitize(part.label))
    return blocks


def _template(part: Part, state: MessageState) -> list[Block]:
    title = f"{sanitize(part.label)} ({_size(len(part.text))})"
    if not state.expanded:
        return [Block(f"▸ {title}", style="folded", action=Toggle.EXPAND)]
    return [
        Block(f"▾ {title}", style="folded", action=Toggle.EXPAND),
        *_prose(part.text.strip("\n"), state, style="folded", indent=2),
    ]

"""Terminal output as Rich text: SGR colours and attributes kept as styles, every other sequence dropped
(with the patterns of `trace.sanitize`, so `ansi_text(s).plain == sanitize(s)`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from rich.color import Color
from rich.style import Style
from rich.text import Text

from ..trace.sanitize import ESCAPE, TAB_SIZE, clean_chars, cr_visible, sanitize, with_esc_intros

_CR_LINE = re.compile(r"(?m)^[^\n\r]*\r[^\n]*")

# --- SGR --------------------------------------------------------------------------------------

_ATTRS = {
    1: ("bold", True),
    2: ("dim", True),
    3: ("italic", True),
    4: ("underline", True),
    7: ("reverse", True),
    9: ("strike", True),
    21: ("underline", True),
    22: ("bold", None),
    23: ("italic", None),
    24: ("underline", None),
    27: ("reverse", None),
    29: ("strike", None),
}
SgrState = tuple
"""The colours and attributes in force (see `_apply_sgr`): what a text cut in pieces carries into the next."""
PLAIN: SgrState = (None, None, None, None, None, None, None, None)
_FIELDS = ("color", "bgcolor", "bold", "dim", "italic", "underline", "reverse", "strike")


def _apply_sgr(state: tuple, params: str) -> tuple:
    """The style state after one SGR sequence (unknown codes are ignored, never an error).

    Colours come as `38;5;n` / `38;2;r;g;b` or with colon sub-parameters (`38:2::r:g:b`).
    """
    values = dict(zip(_FIELDS, state))
    # params holds only ASCII digits, ";" and ":"; absurdly long numbers count as unknown codes
    groups = [[int(p) if 0 < len(p) < 10 else -1 for p in g.split(":")] for g in params.split(";")]
    i = 0
    while i < len(groups):
        group = groups[i]
        i += 1
        code = max(group[0], 0)
        if code in (38, 48):
            if len(group) == 1:  # legacy form: the colour is in the following groups
                group = [code] + [g[0] for g in groups[i : i + 4]]
                i += 2 if group[1:2] == [5] else 4 if group[1:2] == [2] else 0
            elif len(group) == 6:  # 38:2:colourspace:r:g:b
                del group[2]
            key = "color" if code == 38 else "bgcolor"
            if group[1:2] == [5] and len(group) > 2:
                values[key] = Color.from_ansi(max(group[2], 0) % 256)
            elif group[1:2] == [2] and len(group) > 4:
                r, g, b = (min(max(c, 0), 255) for c in group[2:5])
                values[key] = Color.from_rgb(r, g, b)
        elif code == 0:
            values = dict.fromkeys(_FIELDS)
        elif code in _ATTRS:
            name, value = _ATTRS[code]
            values[name] = value if group[1:2] != [0] else None  # 4:0 is "no underline"
            if code == 22:
                values["dim"] = None
        elif 30 <= code <= 37 or 90 <= code <= 97:
            values["color"] = Color.from_ansi(code - 30 if code < 90 else code - 82)
        elif 40 <= code <= 47 or 100 <= code <= 107:
            values["bgcolor"] = Color.from_ansi(code - 40 if code < 100 else code - 92)
        elif code in (39, 49):
            values["color" if code == 39 else "bgcolor"] = None
    return tuple(values[f] for f in _FIELDS)


@lru_cache(maxsize=512)
def _style(state: tuple) -> Style | None:
    return None if state == PLAIN else Style(**dict(zip(_FIELDS, state)))


def ansi_text(s: str, state: SgrState = PLAIN) -> Text:
    """Terminal output as a Rich Text: SGR colours and attributes kept, everything else dropped; `state`:
    what is in force where `s` starts (`sgr_after` the text before it).

    `.plain == sanitize(s)`. Links and markup are never produced: OSC 8 is removed like any other
    sequence and the text is never parsed as console markup.
    """
    s = with_esc_intros(s)
    if "\x1b" not in s and state == PLAIN:
        return Text(sanitize(s))
    runs: list[tuple[str, Style | None]] = []
    pos = 0
    for match in ESCAPE.finditer(s):
        runs.append((clean_chars(s[pos : match.start()]), _style(state)))
        pos = match.end()
        params = match.group("sgr")
        if params is not None:
            state = _apply_sgr(state, params)
    runs.append((clean_chars(s[pos:]), _style(state)))
    text = Text()
    column = 0
    for piece, style in _visible(runs):
        if "\t" in piece:  # the same tab stops as str.expandtabs over the whole line
            lead = column % TAB_SIZE
            piece = (" " * lead + piece).expandtabs(TAB_SIZE)[lead:]
        newline = piece.rfind("\n")
        column = column + len(piece) if newline < 0 else len(piece) - newline - 1
        text.append(piece, style)
    return text


def sgr_after(s: str, state: SgrState = PLAIN) -> SgrState:
    """The SGR state in force after terminal output `s` that started in `state`."""
    for match in ESCAPE.finditer(with_esc_intros(s)):
        params = match.group("sgr")
        if params is not None:
            state = _apply_sgr(state, params)
    return state


@dataclass(slots=True)
class SgrChain:
    """The SGR state each piece of a text cut in pieces starts in, worked out only as far as asked (from
    the piece before, of which only the escape sequences are read): each piece is styled alone, when it is
    first drawn, and the colours in force run on from one to the next."""

    sources: list[str]
    """The raw text of each piece, in order."""
    states: list[SgrState] = field(default_factory=lambda: [PLAIN])

    def state(self, number: int) -> SgrState:
        """The state in force where piece `number` starts."""
        while len(self.states) <= number:
            self.states.append(sgr_after(self.sources[len(self.states) - 1], self.states[-1]))
        return self.states[number]


def _visible(runs: list[tuple[str, Style | None]]) -> Iterator[tuple[str, Style | None]]:
    """The runs without the parts of lines that carriage returns overwrite (as `_finish` does)."""
    plain = "".join(piece for piece, _ in runs)
    if "\r" not in plain:
        yield from runs
        return
    hidden: list[tuple[int, int]] = []
    for match in _CR_LINE.finditer(plain):
        start, end = cr_visible(match.group())
        hidden += [(match.start(), match.start() + start), (match.start() + end, match.end())]
    h = 0
    offset = 0
    for piece, style in runs:
        pos, end = offset, offset + len(piece)
        while pos < end:
            while h < len(hidden) and hidden[h][1] <= pos:
                h += 1
            if h < len(hidden) and hidden[h][0] <= pos:
                pos = min(hidden[h][1], end)
                continue
            stop = min(end, hidden[h][0]) if h < len(hidden) else end
            yield piece[pos - offset : stop - offset], style
            pos = stop
        offset = end

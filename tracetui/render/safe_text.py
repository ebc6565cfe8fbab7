"""Make untrusted trace text safe to put on a terminal.

Trace content is model output and captured terminal output: it may carry escape sequences that
would retitle the terminal, write the clipboard (OSC 52), plant links (OSC 8) or reach through tmux
(DCS passthrough), and bidi/zero-width characters that make text read differently than it is.
`sanitize` removes or neutralises all of that; `ansi_text` keeps only SGR colours as Rich styles.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator

from rich.color import Color
from rich.style import Style
from rich.text import Text

# Escape sequences, after 8-bit C1 introducers have been rewritten to their ESC forms (so the
# pattern starts with a literal ESC, which the regex engine scans for quickly). String sequences
# (OSC, DCS, SOS, PM, APC) run to BEL or ST, but cannot contain ESC (a terminal aborts the string
# there), which keeps the scan linear; an unterminated one ends with its line, so a stray ESC ]
# cannot swallow a whole message. tmux passthrough doubles the ESCs it wraps. Possessive
# quantifiers (Python 3.11) stop a failed match from backtracking through a long body.
_ESCAPE = re.compile(
    r"\x1b(?:"
    r"\[(?:(?P<sgr>[0-9;:]*)m|[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e])"  # SGR (kept by ansi_text), CSI
    r"|Ptmux;[^\x1b]*+(?:\x1b\x1b[^\x1b]*+)*+\x1b\\"
    r"|[\]P^_X](?:[^\x07\x1b]*+(?:\x07|\x1b\\)|[^\x07\x1b\n]*)"
    r"|[\x20-\x2f]*[\x30-\x7e])"  # two-character and nF escapes
)
_C1_INTRO = re.compile("[\x90\x98\x9b-\x9f]")
_C1_AS_ESC = str.maketrans({"\x90": "\x1bP", "\x98": "\x1bX", "\x9b": "\x1b[", "\x9c": "\x1b\\",
                            "\x9d": "\x1b]", "\x9e": "\x1b^", "\x9f": "\x1b_"})
_ASCII_UNSAFE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
_ASCII_CONTROLS = bytes([*range(9), 11, 12, *range(14, 32), 127])  # all but \t \n \r
_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"  # regex class ranges: all but \t \n \r
# Bidi controls, zero-width characters, and the line/paragraph separators (which str.splitlines
# would treat as line breaks) become U+FFFD: visible, and inert.
_INVISIBLES = "\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff"
_CONTROL = re.compile(f"[{_CONTROLS}]")
_INVISIBLE = re.compile(f"[{_INVISIBLES}]")
_DIRTY = re.compile(f"[{_CONTROLS}{_INVISIBLES}]")  # one plain class: the fastest scan re has
_UNSAFE = re.compile(f"[\t\r{_CONTROLS}{_INVISIBLES}]")  # anything sanitize would change
_CR_LINE = re.compile(r"(?m)^[^\n\r]*+\r[^\n]*")
_TRAILING_CR = re.compile(r"\r+(?=\n|\Z)")
_FROM_CR = re.compile(r"\r[^\n]*+")
TAB_SIZE = 8
REPLACEMENT = "\ufffd"


def sanitize(s: str) -> str:
    """The text as a terminal would show it, with nothing left that a terminal would act on."""
    if s.isascii():
        if not _ASCII_UNSAFE.search(s):
            return s
    elif not _UNSAFE.search(s):
        return s
    s = _with_esc_intros(s)
    if "\x1b" in s:
        s = _ESCAPE.sub("", s)
    return _finish(s)


def _with_esc_intros(s: str) -> str:
    """8-bit C1 introducers (CSI, OSC, DCS...) rewritten as ESC sequences, so one pattern drops both."""
    if not s.isascii() and _C1_INTRO.search(s):
        return s.translate(_C1_AS_ESC)
    return s


def _finish(s: str) -> str:
    """What sanitize does once escape sequences are gone, each step in C over the whole text."""
    s = _clean_chars(s)
    if "\r" in s:
        s = _overwrite_all(s.replace("\r\n", "\n"))
    if "\t" in s:
        s = s.expandtabs(TAB_SIZE)
    return s


def _clean_chars(s: str) -> str:
    """Drop control characters but tab, newline and CR; make invisible characters visible."""
    if s.isascii():
        return s.encode("ascii").translate(None, _ASCII_CONTROLS).decode("ascii")
    if not _DIRTY.search(s):
        return s
    return _INVISIBLE.sub(REPLACEMENT, _CONTROL.sub("", s))


def _overwrite_all(s: str) -> str:
    """cr_visible applied to every line, in C: only the lines from the first to the last CR are
    touched; once lines no longer end with CR, what stays is the text after the last CR, which
    in the reversed text is what comes before the first CR, and one regex pass removes the rest."""
    first, last = s.find("\r"), s.rfind("\r")
    if first < 0:
        return s
    start = s.rfind("\n", 0, first) + 1
    end = s.find("\n", last)
    end = len(s) if end < 0 else end
    region = s[start:end]
    if "\r\n" in region or region.endswith("\r"):
        region = _TRAILING_CR.sub("", region)
    return s[:start] + _FROM_CR.sub("", region[::-1])[::-1] + s[end:]


def cr_visible(line: str) -> tuple[int, int]:
    """Bounds of the part of a line with carriage returns that stays on screen.

    The text after the last CR, or the last non-empty CR-separated segment when the line ends
    with CR (a progress bar that rewrote itself, or a CRLF line ending).
    """
    end = len(line)
    while True:
        start = line.rfind("\r", 0, end) + 1
        if start < end or start == 0:
            return start, end
        end = start - 1


# --- SGR --------------------------------------------------------------------------------------

_ATTRS = {1: ("bold", True), 2: ("dim", True), 3: ("italic", True), 4: ("underline", True),
          7: ("reverse", True), 9: ("strike", True), 21: ("underline", True),
          22: ("bold", None), 23: ("italic", None), 24: ("underline", None),
          27: ("reverse", None), 29: ("strike", None)}
_PLAIN_STATE: tuple = (None, None, None, None, None, None, None, None)
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
    return None if state == _PLAIN_STATE else Style(**dict(zip(_FIELDS, state)))


def ansi_text(s: str) -> Text:
    """Terminal output as a Rich Text: SGR colours and attributes kept, everything else dropped.

    `.plain == sanitize(s)`. Links and markup are never produced: OSC 8 is removed like any other
    sequence and the text is never parsed as console markup.
    """
    s = _with_esc_intros(s)
    if "\x1b" not in s:
        return Text(sanitize(s))
    runs: list[tuple[str, Style | None]] = []
    state = _PLAIN_STATE
    pos = 0
    for match in _ESCAPE.finditer(s):
        runs.append((_clean_chars(s[pos : match.start()]), _style(state)))
        pos = match.end()
        params = match.group("sgr")
        if params is not None:
            state = _apply_sgr(state, params)
    runs.append((_clean_chars(s[pos:]), _style(state)))
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

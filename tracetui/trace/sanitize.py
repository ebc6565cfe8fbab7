"""Make untrusted trace text safe to put on a terminal.

Trace content is model output and captured terminal output: it may carry escape sequences that
would retitle the terminal, write the clipboard (OSC 52), plant links (OSC 8) or reach through tmux
(DCS passthrough), and bidi/zero-width characters that make text read differently than it is.
`sanitize` removes or neutralises all of that (the renderers' `ansi_text` keeps SGR colours as styles,
built on the same patterns). Plain text in, plain text out: no Rich here, so every layer can use it.
"""

from __future__ import annotations

import re

# Escape sequences, after 8-bit C1 introducers have been rewritten to their ESC forms (so the
# pattern starts with a literal ESC, which the regex engine scans for quickly). String sequences
# (OSC, DCS, SOS, PM, APC) run to BEL or ST, but cannot contain ESC (a terminal aborts the string
# there), which keeps the scan linear; an unterminated one ends with its line, so a stray ESC ]
# cannot swallow a whole message. tmux passthrough doubles the ESCs it wraps. Each repeated class
# excludes the character that must follow it, so a failed match gives each character back once
# and the cost stays linear (the test suite checks it on pathological input).
ESCAPE = re.compile(
    r"\x1b(?:"
    r"\[(?:(?P<sgr>[0-9;:]*)m|[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e])"  # SGR (kept by ansi_text), CSI
    r"|Ptmux;[^\x1b]*(?:\x1b\x1b[^\x1b]*)*\x1b\\"
    r"|[\]P^_X](?:[^\x07\x1b]*(?:\x07|\x1b\\)|[^\x07\x1b\n]*)"
    r"|[\x20-\x2f]*[\x30-\x7e])"  # two-character and nF escapes
)
_C1_INTRO = re.compile("[\x90\x98\x9b-\x9f]")
_C1_AS_ESC = str.maketrans(
    {
        "\x90": "\x1bP",
        "\x98": "\x1bX",
        "\x9b": "\x1b[",
        "\x9c": "\x1b\\",
        "\x9d": "\x1b]",
        "\x9e": "\x1b^",
        "\x9f": "\x1b_",
    }
)
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
_TRAILING_CR = re.compile(r"\r+(?=\n|\Z)")
_FROM_CR = re.compile(r"\r[^\n]*")
TAB_SIZE = 8
REPLACEMENT = "\ufffd"


def sanitize(s: str) -> str:
    """The text as a terminal would show it, with nothing left that a terminal would act on."""
    if s.isascii():
        if not _ASCII_UNSAFE.search(s):
            return s
    elif not _UNSAFE.search(s):
        return s
    s = with_esc_intros(s)
    if "\x1b" in s:
        s = ESCAPE.sub("", s)
    return _finish(s)


def with_esc_intros(s: str) -> str:
    """8-bit C1 introducers (CSI, OSC, DCS...) rewritten as ESC sequences, so one pattern drops both."""
    if not s.isascii() and _C1_INTRO.search(s):
        return s.translate(_C1_AS_ESC)
    return s


def _finish(s: str) -> str:
    """What sanitize does once escape sequences are gone, each step in C over the whole text."""
    s = clean_chars(s)
    if "\r" in s:
        s = _overwrite_all(s.replace("\r\n", "\n"))
    if "\t" in s:
        s = s.expandtabs(TAB_SIZE)
    return s


def clean_chars(s: str) -> str:
    """Drop control characters but tab, newline and CR; make invisible characters visible."""
    if s.isascii():
        return s.encode("ascii").translate(None, _ASCII_CONTROLS).decode("ascii")
    if not _DIRTY.search(s):
        return s
    return _INVISIBLE.sub(REPLACEMENT, _CONTROL.sub("", s))


def invisibles_visible(s: str) -> str:
    """Bidi controls and zero-width characters made visible (U+FFFD), all else left as is: for text a
    terminal emulator reads next, which needs its control characters (`clean_chars` drops them)."""
    if s.isascii() or not _INVISIBLE.search(s):
        return s
    return _INVISIBLE.sub(REPLACEMENT, s)


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

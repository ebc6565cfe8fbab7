"""sanitize / ansi_text: untrusted terminal text made inert, SGR colours kept."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracetui.render.ansi import ansi_text
from tracetui.trace.sanitize import sanitize

UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]")

ESCAPES = {
    "csi cursor and clear": "\x1b[2J\x1b[H\x1b[?25l\x1b[10;20H",
    "sgr": "\x1b[1;31m\x1b[0m",
    "osc title bel": "\x1b]0;pwned title\x07",
    "osc 52 clipboard": "\x1b]52;c;cm0gLXJmIC8=\x1b\\",
    "osc 8 link": "\x1b]8;;file:///etc/passwd\x1b\\",
    "dcs": "\x1bPq#0;2;0;0;0#0~~@@vv\x1b\\",
    "tmux passthrough": "\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\",
    "apc": "\x1b_Gf=100;AAAA\x1b\\",
    "pm": "\x1b^private\x1b\\",
    "sos": "\x1bXstring\x1b\\",
    "two-char": "\x1b7\x1b8\x1bc\x1bM",
    "charset": "\x1b(B\x1b)0",
    "8-bit csi": "\x9b31m\x9b2J",
    "8-bit osc": "\x9d0;title\x9c",
    "8-bit dcs": "\x90payload\x9c",
}


@pytest.mark.parametrize("sequence", ESCAPES.values(), ids=ESCAPES.keys())
def test_every_escape_sequence_is_removed(sequence):
    assert sanitize(f"before{sequence}after") == "beforeafter"
    assert ansi_text(f"before{sequence}after").plain == "beforeafter"


def test_unterminated_string_sequence_ends_with_its_line():
    assert sanitize("a\x1b]0;title with no end\nnext line") == "a\nnext line"


def test_control_characters_are_removed_but_newlines_kept():
    assert sanitize("a\x00b\x07c\x08d\x7fe\x85f\x9ag\nh") == "abcdefg\nh"
    assert sanitize("lone escape at the end\x1b") == "lone escape at the end"
    assert sanitize("bell\x07 back\x08space\x0bvt\x0cff\n") == "bell backspacevtff\n"


def test_tabs_expand_to_stops_of_eight():
    assert sanitize("a\tb") == "a       b"
    assert sanitize("abcdefgh\tx") == "abcdefgh        x"
    assert sanitize("x\n\ty") == "x\n        y"


def test_carriage_returns_show_what_a_terminal_shows():
    assert sanitize("line\r\nnext\r\n") == "line\nnext\n"
    assert sanitize("10%\r50%\r100%") == "100%"
    assert sanitize("downloading\r") == "downloading"  # a trailing CR overwrote nothing yet
    assert sanitize("a\rb\r\nc") == "b\nc"


@pytest.mark.parametrize(
    "char",
    [
        "\u202a",
        "\u202b",
        "\u202c",
        "\u202d",
        "\u202e",
        "\u2066",
        "\u2067",
        "\u2068",
        "\u2069",
        "\u200e",
        "\u200f",
        "\u061c",
        "\u200b",
        "\u200c",
        "\u200d",
        "\u2060",
        "\ufeff",
        "\u2028",
        "\u2029",
    ],
)
def test_bidi_and_zero_width_characters_become_visible(char):
    assert sanitize(f"ab{char}cd") == "ab\ufffdcd"
    assert ansi_text(f"\x1b[31mab{char}cd").plain == "ab\ufffdcd"


def test_plain_text_is_returned_untouched():
    text = "just words\nand lines " * 10
    assert sanitize(text) is text
    assert sanitize("naïve café ✓") == "naïve café ✓"


PATHOLOGICAL = {
    "plain": "plain ascii output line\n",
    "sgr": "\x1b[32mPASSED\x1b[0m tests/test_outputs.py::test_thing [ 42%] \u00e9lan\r\n",
    "progress": "progress 10%\rprogress 99%\n",
    "unterminated osc": "\x1b]0;" + "a" * 40,  # a string sequence that never ends
    "tmux passthrough": "\x1bPtmux;" + "\x1b\x1b[31m" * 8,  # doubled ESCs, never closed
    "carriage returns": "\r" * 30 + "x",
    "c1 and bidi": "\x9b31m\u202e\u200b text \x9d",
}


def test_sanitize_is_linear_on_pathological_input():
    """Four times the input costs about four times the CPU, never sixteen (no backtracking blow-up).
    Wall-clock limits belong in the benchmark; a ratio of CPU times in one process is stable."""
    for name, unit in PATHOLOGICAL.items():
        small = unit * (250_000 // len(unit) + 1)
        large = small * 4
        ratio = min(_timed(sanitize, large) for _ in range(3)) / max(
            min(_timed(sanitize, small) for _ in range(3)), 1e-4
        )
        assert ratio < 8, (name, ratio)


def _timed(fn, arg):
    """CPU seconds, so other processes on the machine do not make the test flaky."""
    start = time.process_time()
    fn(arg)
    return time.process_time() - start


def test_ansi_text_keeps_sgr_colours_and_attributes():
    text = ansi_text("plain \x1b[31mred\x1b[0m \x1b[1;4mbold\x1b[22m under\x1b[0m \x1b[38;5;208mo\x1b[48;2;1;2;3mb")
    assert text.plain == "plain red bold under o" + "b"
    styles = {text.plain[s.start : s.end]: s.style for s in text.spans}
    assert styles["red"].color.number == 1
    assert styles["bold"].bold and styles["bold"].underline
    assert styles[" under"].underline and not styles[" under"].bold
    assert styles["o"].color.number == 208
    assert styles["b"].bgcolor.triplet == (1, 2, 3)
    assert not any(s.style.bold for s in text.spans if text.plain[s.start : s.end] == "plain ")


def test_ansi_text_never_makes_links_or_reads_markup():
    raw = "\x1b]8;;file:///etc/passwd\x1b\\click\x1b]8;;\x1b\\ [bold red]x[/] [link=file:///etc/passwd]y[/link]"
    text = ansi_text(raw)
    assert text.plain == "click [bold red]x[/] [link=file:///etc/passwd]y[/link]"
    assert all(span.style.link is None for span in text.spans if not isinstance(span.style, str))
    assert not text.spans


def test_ansi_text_applies_carriage_returns_and_tabs_like_sanitize():
    raw = "ab\x1b[31mcd\ref\x1b[0mgh\tx\r\n\x1b[32m\tgreen\x1b[0m"
    text = ansi_text(raw)
    assert text.plain == sanitize(raw) == "efgh    x\n        green"
    green = [s for s in text.spans if text.plain[s.start : s.end].strip() == "green"]
    assert green and green[0].style.color.number == 2


SPECIALS = list("ab \n\t\r\x1b[]();:0123456789mPX^_\\\x07\x00\x7f\x9b\x9c\x9d\x90\u202e\u200b\ufeff\u2028é")


@settings(max_examples=400, deadline=None)
@given(st.text(st.one_of(st.sampled_from(SPECIALS), st.characters()), max_size=200))
def test_sanitize_output_is_always_inert(raw):
    clean = sanitize(raw)
    assert not UNSAFE.search(clean)
    assert sanitize(clean) == clean
    assert ansi_text(raw).plain == clean

"""The table-driven line scan under every runner parser: which rule fires for which line."""

from __future__ import annotations

import re

from tracetui.verifier.rules import LineParser, Rule, Rules, ignore, scan


class Recorder(LineParser[list[tuple[str, int]]]):
    """Records (event, line index); "open" switches to the SECTION table, "close" back."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.events: list[tuple[str, int]] = []

    def on_open(self, i: int, m: re.Match[str]) -> None:
        self.events.append(("open", i))
        self.switch(self.SECTION)

    def on_close(self, i: int, m: re.Match[str]) -> None:
        self.events.append(("close", i))
        self.switch(self.RULES)

    def on_word(self, i: int, m: re.Match[str]) -> None:
        self.events.append((f"word:{m[1]}", i))

    def on_blank(self, i: int, line: str) -> None:
        self.events.append(("blank", i))

    def on_body(self, i: int, line: str) -> None:
        self.events.append(("body", i))

    def on_seen(self, i: int, line: str) -> None:
        self.events.append(("seen", i))

    RULES = Rules(
        Rule(on_open, re.compile(r"BEGIN$"), first="B"),
        Rule(ignore, first="#"),  # comments: no rule below sees them
        Rule(on_word, re.compile(r"(\w+)!"), check=lambda m: m[1] != "skip"),
        Rule(on_blank, first=lambda c: c == ""),
    )
    SECTION = Rules(
        Rule(on_seen, also=True),
        Rule(on_close, re.compile(r"END$"), first="E"),
        Rule(on_body, has="x"),
    )

    def finish(self) -> list[tuple[str, int]]:
        return self.events


def test_the_first_rule_that_takes_a_line_fires():
    lines = ["hello!", "# hi!", "", "skip!", "Bogus", "BEGIN"]
    assert Recorder.parse(lines) == [("word:hello", 0), ("blank", 2), ("open", 5)]


def test_tables_switch_and_also_rules_let_later_rules_see_the_line():
    lines = ["BEGIN", "x1", "y", "END", "x2", "ok!"]
    assert Recorder.parse(lines) == [
        ("open", 0),
        ("seen", 1),
        ("body", 1),
        ("seen", 2),
        ("seen", 3),
        ("close", 3),  # the line that switched back was read with the section's table
        ("word:ok", 5),  # "x2" is outside the section: no rule takes it
    ]


class Words(LineParser[list[str]]):
    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.words: list[str] = []

    def on_word(self, i: int, m: re.Match[str]) -> None:
        self.words.append(m[1])

    RULES = Rules(Rule(on_word, re.compile(r"(\w+)!")))

    def finish(self) -> list[str]:
        return self.words


def test_parsers_read_in_one_scan_keep_their_own_tables():
    lines = ["BEGIN", "a!", "END", "b!"]
    recorder, words = Recorder(lines), Words(lines)
    scan(lines, [recorder, words])
    assert (
        recorder.finish()
        == Recorder.parse(lines)
        == [("open", 0), ("seen", 1), ("seen", 2), ("close", 2), ("word:b", 3)]
    )
    assert words.finish() == ["a", "b"]  # the recorder's section does not hide "a!" from it

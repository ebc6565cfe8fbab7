"""A small reader of the shell the agents type: enough of bash to say what each command is.

Splits a script into simple commands at newlines, `;`, `&&`, `||`, `|`, `&` and parentheses, with
quotes, escapes, `$(...)`, comments and heredocs (their bodies attached to the command that reads
them). Words come back unquoted; variables are not expanded. It never raises: unbalanced quotes run
to the end of the script, as bash would wait for more input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_SCRIPT = 200_000
"""Characters of one script read; the rest (a megabyte heredoc...) is not commands anyway."""

_TOKEN = re.compile(
    r"(?P<space>[ \t\r]+|\\\n)"
    r"|(?P<newline>\n)"
    r"|(?P<comment>\#[^\n]*)"
    r"|(?P<op>&&|\|\||;;|\|&|[|;&()])"
    r"|(?P<redirect>(?:\d+|&)?(?:>>|>\||>&|&>|>|<<<|<<-|<<|<>|<&|<))"
    r"|(?P<word>(?:[^\s'\"\\|&;<>()`$]+|'[^']*'?|\"(?:[^\"\\]|\\.)*\"?|\$'(?:[^'\\]|\\.)*'?"
    r"|\$\((?:[^()]|\([^()]*\))*\)?|\$\{[^}]*\}?|\$|`[^`]*`?|\\.|\\\Z)+)"
    r"|(?P<other>.)",
    re.DOTALL,
)
_QUOTED = re.compile(r"'([^']*)'?|\$'((?:[^'\\]|\\.)*)'?|\"((?:[^\"\\]|\\.)*)\"?|\\(.)", re.DOTALL)
_DQ_ESCAPE = re.compile(r"\\([\"\\$`\n])")
_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!"})


@dataclass(frozen=True, slots=True)
class Simple:
    """One simple command: its words, its redirections and the heredoc it reads."""

    words: tuple[str, ...]
    """Unquoted, leading shell keywords (`if`, `then`, `do`, `!`...) removed."""
    redirects: tuple[tuple[str, str], ...] = ()
    """(operator, target) pairs, e.g. (">", "out.txt"), ("2>", "/dev/null")."""
    heredoc: str | None = None
    """The body of its `<<` heredoc or `<<<` string."""
    text: str = ""
    """The command's own source text (heredoc body excluded): what a finding quotes."""
    piped: bool = False
    """Its output feeds the next command through a pipe."""
    defines: str | None = None
    """The function name, for a function definition (`name() {` or `function name`)."""


def unquote(word: str) -> str:
    """A word as the command receives it (quotes removed, escapes resolved; no expansion)."""
    if not any(c in word for c in "'\"\\"):
        return word
    return _QUOTED.sub(_unquote_part, word)


def _unquote_part(match: re.Match[str]) -> str:
    single, ansi, double, escaped = match.group(1, 2, 3, 4)
    if single is not None:
        return single
    if ansi is not None:
        return ansi.replace("\\n", "\n").replace("\\t", "\t").replace("\\'", "'").replace("\\\\", "\\")
    if double is not None:
        return _DQ_ESCAPE.sub(r"\1", double)
    return "" if escaped == "\n" else escaped


def read_script(script: str) -> list[Simple]:
    """The simple commands of a shell script, in order."""
    script = script[:MAX_SCRIPT]
    commands: list[Simple] = []
    reader = _Reader(script, commands)
    reader.run()
    return commands


class _Reader:
    def __init__(self, script: str, out: list[Simple]) -> None:
        self.script = script
        self.out = out
        self.words: list[str] = []
        self.word_starts: list[int] = []
        self.redirects: list[tuple[str, str]] = []
        self.heredoc: str | None = None
        self.pending: list[tuple[str, bool]] = []  # heredoc delimiters waiting for the end of the line
        self.heredoc_owner: int | None = None  # the command, in `out`, that opened them
        self.start = -1  # where the current command's text begins
        self.end = 0

    def run(self) -> None:
        script, pos = self.script, 0
        expect_target: str | None = None  # a redirection operator waiting for its word
        while pos < len(script):
            match = _TOKEN.match(script, pos)
            assert match is not None  # `other` matches any character
            kind, text = match.lastgroup, match.group()
            pos = match.end()
            if kind == "word":
                if self.start < 0:
                    self.start = match.start()
                self.end = pos
                if expect_target is not None:
                    self._redirect(expect_target, text)
                    expect_target = None
                else:
                    self.words.append(unquote(text))
                    self.word_starts.append(match.start())
            elif kind == "redirect":
                if self.start < 0:
                    self.start = match.start()
                self.end = pos
                expect_target = text
            elif kind == "newline":
                expect_target = None
                self.finish(False)
                pos = self._read_heredocs(pos)
            elif kind == "op":
                expect_target = None
                if text == "(" and self._function_name() is not None and script[pos:].lstrip(" \t").startswith(")"):
                    name = self._function_name()
                    pos = script.index(")", pos) + 1
                    self.words, self.word_starts = [], []
                    self.out.append(Simple(("function",), text=f"{name}()", defines=name))
                    self.start = -1
                    continue
                self.finish(text in ("|", "|&"))
        self.finish(False)

    def _function_name(self) -> str | None:
        if len(self.words) == 1 and not self.redirects and re.fullmatch(r"[\w.:-]+", self.words[0]):
            return self.words[0]
        return None

    def _redirect(self, operator: str, target: str) -> None:
        if operator.endswith(("<<", "<<-")):
            self.pending.append((unquote(target), operator.endswith("-")))
        elif operator.endswith("<<<"):
            self.heredoc = unquote(target)
        else:
            self.redirects.append((operator, unquote(target)))

    def _read_heredocs(self, pos: int) -> int:
        """Consume the bodies of the heredocs opened on the line that just ended; attach the last
        one to the command that opened it (the first command of that line to open one)."""
        script = self.script
        body = None
        for delimiter, strip_tabs in self.pending:
            tabs = r"\t*" if strip_tabs else ""
            end = re.compile(rf"^{tabs}{re.escape(delimiter)}\r?$", re.MULTILINE).search(script, pos)
            if end is None:
                body, pos = script[pos:], len(script)
            else:
                body, pos = script[pos : max(pos, end.start() - 1)], min(len(script), end.end() + 1)
        if body is not None and self.heredoc_owner is not None:
            command = self.out[self.heredoc_owner]
            self.out[self.heredoc_owner] = Simple(
                command.words, command.redirects, body, command.text, command.piped, command.defines
            )
        self.pending = []
        self.heredoc_owner = None
        return pos

    def finish(self, piped: bool) -> None:
        words = self.words
        while words and words[0] in _KEYWORDS:
            words = words[1:]
        if len(words) < len(self.words):  # the quoted text starts at the command, after `then`, `do`...
            self.start = self.word_starts[len(self.words) - len(words)] if words else self.start
        if words and words[0] == "function" and len(words) >= 2:
            self.out.append(Simple(("function",), text=" ".join(words[:2]), defines=words[1].rstrip("(){")))
        elif words or self.redirects or self.heredoc is not None:
            text = self.script[self.start : self.end] if self.start >= 0 else ""
            self.out.append(Simple(tuple(words), tuple(self.redirects), self.heredoc, text, piped))
            if self.pending and self.heredoc_owner is None:
                self.heredoc_owner = len(self.out) - 1
        self.words, self.word_starts, self.redirects, self.heredoc, self.start = [], [], [], None, -1

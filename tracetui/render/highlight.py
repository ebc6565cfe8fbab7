"""Syntax highlighting of (already sanitized) code with Pygments, as Rich Text.

The result's `.plain` is always exactly the input: Pygments' newline and tab handling is turned
off, and any lexer that still changes the text is dropped in favour of plain text. Shell code
gets its heredoc bodies highlighted in their own language (`cat > solve.py << 'EOF'` → Python),
since agents write whole files that way.
"""

from __future__ import annotations

import re
from functools import lru_cache

import orjson
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.modeline import get_filetype_from_buffer
from pygments.util import ClassNotFound
from rich.text import Span, Text

from ..data import threads
from .palette import Palette

GUESS_LIMIT = 4096
"""Only snippets up to this many characters get their language guessed (guessing is slow)."""

_LEXER_OPTIONS = {"stripnl": False, "ensurenl": False, "tabsize": 0}
_GUESSABLE = {
    "bash",
    "c",
    "cpp",
    "diff",
    "docker",
    "go",
    "html",
    "ini",
    "java",
    "javascript",
    "json",
    "make",
    "php",
    "python",
    "ruby",
    "rust",
    "sql",
    "toml",
    "typescript",
    "xml",
    "yaml",
}
_SHELL = "bash"


@lru_cache(maxsize=256)
def lexer_for(lang: str) -> Lexer | None:
    """A lexer by alias (`py`, `rust`, `console`), file name (`Makefile`) or path (`src/a.rs`).

    None for plain text and for anything Pygments does not know.
    """
    lang = lang.strip()
    name = lang.split()[0].lower() if lang else ""
    name = COMMON_FILES.get(name.rsplit("/", 1)[-1].rpartition(".")[2] or name, name)
    try:
        lexer = get_lexer_by_name(name, **_LEXER_OPTIONS)
    except ClassNotFound:
        try:
            filename = lang.rsplit("/", 1)[-1]
            lexer = get_lexer_for_filename(
                filename if "." in filename or filename[:1].isupper() else f"x.{filename}", **_LEXER_OPTIONS
            )
        except ClassNotFound:
            return None
    return None if lexer.aliases[:1] == ["text"] else lexer


COMMON_FILES = {
    "py": "python",
    "rs": "rust",
    "js": "javascript",
    "mjs": "javascript",
    "ts": "typescript",
    "go": "go",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "hpp": "cpp",
    "java": "java",
    "sh": "bash",
    "bash": "bash",
    "json": "json",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
    "md": "markdown",
    "html": "html",
    "css": "css",
    "sql": "sql",
    "rb": "ruby",
    "makefile": "make",
    "dockerfile": "docker",
    "txt": "text",
}
"""File extensions (and names) of what agents write most, straight to a lexer: Pygments' own file-name
search compiles ~900 patterns on first use (40 ms on the UI thread)."""

WARM_LANGUAGES = ("bash", "python", "json", "javascript", "rust", "c", "go", "diff")


def warm_up() -> None:
    """Set up the common lexers in a background thread: the first one costs ~60 ms, which would
    otherwise land on the first scroll into a code block."""

    def run() -> None:
        for lang in WARM_LANGUAGES:
            lexer = lexer_for(lang)
            if lexer is not None:
                list(lexer.get_tokens("x = 1\n"))

    threads.detached(run, "tracetui-warm-up")  # nobody waits for it, quitting neither


def language_for_path(path: str) -> str | None:
    """The lexer alias for a file path, e.g. `solve.py` → `python`; None when unknown."""
    lexer = lexer_for(path.rsplit("/", 1)[-1]) if path else None
    return lexer.aliases[0] if lexer is not None else None


PIECE_CHARS = 4096
"""Code is highlighted a piece of whole lines of about this many characters at a time (`pieces`):
Pygments takes 3-6 ms a KB here, and a code block is highlighted when it is first drawn, on the UI
thread. In one piece, a 200 KB file shown whole took ~1 s of it."""
LONGEST_PIECE = 4 * PIECE_CHARS
"""A single line longer than this (minified JSON, say) is shown plain rather than hold the UI up."""


def pieces(code: str) -> list[tuple[int, int]]:
    """`code` as (start, end) spans of whole lines of up to about PIECE_CHARS characters (a longer line
    is a piece of its own), in order; between two pieces, the newline that ends the first."""
    spans, start = [], 0
    while len(code) - start > PIECE_CHARS:
        end = code.rfind("\n", start, start + PIECE_CHARS + 1)
        if end <= start:  # no line ends within the size: this line is a piece of its own
            end = code.find("\n", start + PIECE_CHARS)
            if end < 0:
                break
        spans.append((start, end))
        start = end + 1
    spans.append((start, len(code)))
    return spans


def highlight(code: str, lang: str | None, palette: Palette, start: int = 0, end: int | None = None) -> Text:
    """`code[start:end]` highlighted as `lang` (guessed on small snippets when None) in the palette's
    token colours; `.plain == code[start:end]`. Each part of the code in a language of its own (a shell
    heredoc's body) is lexed from where the span starts in it, so a piece of a long file is highlighted
    without the rest; plain when longer than LONGEST_PIECE."""
    stop = len(code) if end is None else end
    if stop - start > LONGEST_PIECE:
        return Text(code[start:stop])
    text = Text()
    for part_start, part_end, lexer in _parts(code, lang):
        a, b = max(part_start, start), min(part_end, stop)
        if a < b:
            text.append_text(_lex(code[a:b], lexer, palette) if lexer is not None else Text(code[a:b]))
    return text


@lru_cache(maxsize=16)
def _parts(code: str, lang: str | None) -> tuple[tuple[int, int, Lexer | None], ...]:
    """The (start, end, lexer) parts of `code`, in order, covering it: one, but for shell code, whose
    heredoc bodies are lexed in the language of their target (kept for the other pieces of the code)."""
    lexer = lexer_for(lang) if lang else _guess(code)
    if lexer is None or lexer.aliases[0] != _SHELL:
        return ((0, len(code), lexer),)
    shell, parts, pos = lexer_for(_SHELL), [], 0
    for start, end, body in heredocs(code):
        body_lexer = lexer_for(body) if body else None  # a shell body is lexed without heredocs of its own
        parts += [(pos, start, shell), (start, end, body_lexer)]
        pos = end
    return (*parts, (pos, len(code), shell))


def _guess(code: str) -> Lexer | None:
    if len(code) > GUESS_LIMIT or not code.strip():
        return None
    return _guess_small(code)


# Telltale lines, tried in order before Pygments' own guess (which often picks exotic lexers).
_SNIFFERS = [
    (re.compile(p, re.MULTILINE), lang)
    for p, lang in [
        (r"^(?:diff --git |--- \S|\+\+\+ \S|@@ -\d)", "diff"),
        (r"^#include\s*[<\"](?:iostream|vector|string|map)|\bstd::", "cpp"),
        (r"^#include\s*[<\"]", "c"),
        (r"^\s*(?:def \w+\(|class \w+[:(]|import \w|from [\w.]+ import |if __name__)", "python"),
        (r"\bfn \w+\(|\blet mut\b|^\s*(?:use \w+::|impl\b)|\w+!\(", "rust"),
        (r"^package \w+\s*$|^func \w*\(", "go"),
        (r"^\s*(?:const|let|var) \w+ = |\brequire\(|console\.log\(|^\s*(?:export|import) .* from ", "javascript"),
        (r"^\s*(?:SELECT|INSERT INTO|UPDATE|DELETE FROM|CREATE TABLE)\b", "sql"),
        (r"^\s*(?:\$ |#!/bin/(?:ba)?sh|sudo |apt(?:-get)? |pip3? |cd |ls\b|echo |export |mkdir |grep )", "bash"),
    ]
]


@lru_cache(maxsize=256)
def _guess_small(code: str) -> Lexer | None:
    """A guess from telltale lines, else Pygments' rating of the code in the common languages."""
    if code.lstrip()[:1] in ("{", "["):
        try:
            orjson.loads(code)
            return lexer_for("json")
        except orjson.JSONDecodeError:
            pass
    for pattern, lang in _SNIFFERS:
        if pattern.search(code):
            return lexer_for(lang)
    return _rated(code)


def _rated(code: str) -> Lexer | None:
    """What Pygments' `guess_lexer` would pick among the common languages (`_GUESSABLE`): a modeline's
    language, else the one whose `analyse_text` rates the code highest, if any does. `guess_lexer` asks
    all ~600 lexers (0.1-0.2 s for a 3 KB log here, on the UI thread as its block scrolls into view) and
    often picks an exotic one, which was then dropped for plain text."""
    named = get_filetype_from_buffer(code)
    if named:
        lexer = lexer_for(named)
        return lexer if lexer is not None and lexer.aliases[0] in _GUESSABLE else None
    best, rating = None, 0.0
    for lexer in _guessable():
        rated = lexer.analyse_text(code)
        if rated > rating:
            best, rating = lexer, rated
    return best


@lru_cache(maxsize=1)
def _guessable() -> tuple[Lexer, ...]:
    return tuple(lexer for lexer in map(lexer_for, sorted(_GUESSABLE)) if lexer is not None)


def _lex(code: str, lexer: Lexer, palette: Palette) -> Text:
    spans = []
    pos = 0
    try:
        for ttype, value in lexer.get_tokens(code):
            end = pos + len(value)
            style = palette.token(ttype)
            if style is not None and end > pos:
                spans.append(Span(pos, end, style))
            pos = end
    except Exception:  # a third-party lexer failing on odd input must not take the view down
        return Text(code)
    text = Text(code, spans=spans)
    if pos != len(code) or text.plain != code:  # a lexer that rewrote the text: show it plain
        return Text(code)
    return text


# --- heredocs ---------------------------------------------------------------------------------

_HEREDOC = re.compile(
    r"(?<!<)<<(?P<dash>-?)[ \t]*(?:'(?P<sq>[^'\n]+)'|\"(?P<dq>[^\"\n]+)\"|\\?(?P<bare>[A-Za-z_][\w.-]*))"
)
_REDIRECT = re.compile(  # stdout to a file (not `2>` or `>&`), or tee's file
    r"(?:(?<![\d&>])>>?|\btee(?:[ \t]+-\w+)*)[ \t]*(['\"]?)(?P<path>[^\s;&|<>'\"]+)\1"
)
_SEPARATOR = re.compile(r"&&|\|\||[;|]")
_COMMAND = re.compile(r"\s*(?:(?:then|do|sudo|env)\s+|\(\s*|\w+=\S*\s+)*(?P<cmd>[\w./+-]+)")
_INTERPRETERS = {
    "python": "python",
    "python3": "python",
    "python2": "python",
    "py": "python",
    "uv": "python",
    "node": "javascript",
    "nodejs": "javascript",
    "deno": "typescript",
    "bash": "bash",
    "sh": "bash",
    "zsh": "bash",
    "ruby": "ruby",
    "perl": "perl",
    "php": "php",
    "psql": "sql",
    "mysql": "sql",
    "sqlite3": "sql",
    "patch": "diff",
    "git": "diff",
    "lua": "lua",
    "Rscript": "r",
}


def heredocs(keystrokes: str) -> list[tuple[int, int, str | None]]:
    """The heredoc bodies of shell text: (start, end, language) spans, in order.

    The language comes from the redirect target's file name (`cat > a.rs <<EOF`, `tee a.go
    <<EOF`) or else from the interpreter reading the body (`python3 - <<'EOF'`); None when
    neither tells. A body without its terminator line runs to the end (a cut-off command).
    """
    spans: list[tuple[int, int, str | None]] = []
    pos = 0
    while True:
        match = _HEREDOC.search(keystrokes, pos)
        if match is None:
            return spans
        line_end = keystrokes.find("\n", match.end())
        if line_end < 0:
            return spans
        line_start = keystrokes.rfind("\n", 0, match.start()) + 1
        # Heredocs opened on the same line have their bodies one after another.
        operators = list(_HEREDOC.finditer(keystrokes, match.start(), line_end))
        body_start = line_end + 1
        for op in operators:
            delimiter = op.group("sq") or op.group("dq") or op.group("bare")
            indent = r"[ \t]*" if op.group("dash") else ""
            terminator = re.compile(rf"^{indent}{re.escape(delimiter)}$", re.MULTILINE)
            found = terminator.search(keystrokes, body_start)
            body_end = found.start() if found else len(keystrokes)
            lang = _heredoc_language(keystrokes[line_start:line_end], op.start() - line_start)
            spans.append((body_start, body_end, lang))
            body_start = found.end() + 1 if found else len(keystrokes)
        pos = max(body_start, line_end + 1)
        if pos >= len(keystrokes):
            return spans


def _heredoc_language(line: str, operator_at: int) -> str | None:
    """The language of a heredoc body from the command (of its line) that reads it."""
    start = max((m.end() for m in _SEPARATOR.finditer(line, 0, operator_at)), default=0)
    stop = next((m.start() for m in _SEPARATOR.finditer(line, operator_at)), len(line))
    segment = line[start:stop]
    target = _REDIRECT.search(segment)
    if target is not None:
        return language_for_path(target.group("path"))
    command = _COMMAND.match(segment)
    if command is not None:
        return _INTERPRETERS.get(command.group("cmd").rsplit("/", 1)[-1])
    return None

"""Pygments highlighting: exact plain text, heredoc bodies in their own language, guessing limits."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.text import Text

from tracetui.render import highlight as hl
from tracetui.render.highlight import GUESS_LIMIT, heredocs, highlight, language_for_path, lexer_for
from tracetui.render.palette import DEFAULT_PALETTE

from .linear import growth

PYTHON_KEYWORD = "#66d9ef"  # monokai's keyword colour; bash does not colour `def`


def styled_words(text):
    """word -> colours of the spans that cover it exactly or contain it."""
    found = {}
    for span in text.spans:
        for word in text.plain[span.start : span.end].split():
            found.setdefault(word, set()).add(str(span.style.color.triplet.hex) if span.style.color else None)
    return found


@pytest.mark.parametrize(
    "code, lang",
    [
        ("x = 1\n", "python"),
        ("\n\nx\t= 1\n\n\n", "py"),
        ("fn main() {}\n", "rs"),
        ("int main(){}", "c"),
        ("package main\n", "go"),
        ("const a = 1;\n", "js"),
        ("let a: number = 1\n", "ts"),
        ("echo hi\n", "sh"),
        ('{"a": [1, 2]}\n', "json"),
        ("a: 1\n", "yaml"),
        ("[x]\na = 1\n", "toml"),
        ("all:\n\tcc x.c\n", "Makefile"),
        ("FROM ubuntu\nRUN ls\n", "Dockerfile"),
        ("x\n", "text"),
        ("anything", "no-such-language"),
        ("print(1)", "/app/solve.py"),
        ("", "python"),
        ("\t\t\n", "bash"),
    ],
)
def test_plain_text_is_exactly_the_code(code, lang):
    assert highlight(code, lang, DEFAULT_PALETTE).plain == code


def test_languages_resolve_by_alias_file_name_and_path():
    assert lexer_for("py").aliases[0] == "python"
    assert lexer_for("Makefile").aliases[0] == "make"
    assert lexer_for("src/main.rs").aliases[0] == "rust"
    assert lexer_for("text") is None and lexer_for("nonsense-lang") is None
    assert language_for_path("/app/config.yaml") == "yaml"
    assert language_for_path("/app/notes.txt") is None


def test_code_gets_styles():
    text = highlight("def f(x):\n    return x\n", "python", DEFAULT_PALETTE)
    assert PYTHON_KEYWORD in styled_words(text)["def"]


HEREDOC_CASES = [
    ("cat > solve.py << 'EOF'\nimport sys\nEOF\n", "python", "import sys\n"),
    ("cat > src/main.rs <<EOF\nfn main() {}\nEOF\n", "rust", "fn main() {}\n"),
    ('cat > a.c << "END"\nint x;\nEND\n', "c", "int x;\n"),
    ("cat >main.go <<EOF\npackage main\nEOF\n", "go", "package main\n"),
    ("cat << 'EOF' > app.js\nlet a = 1\nEOF\n", "javascript", "let a = 1\n"),
    ("tee index.ts <<EOF\nlet a: number = 1\nEOF\n", "typescript", "let a: number = 1\n"),
    ("tee -a run.sh <<EOF >/dev/null\necho hi\nEOF\n", "bash", "echo hi\n"),
    ("cat > data.json <<EOF\n{}\nEOF\n", "json", "{}\n"),
    ("cat > c.yaml <<EOF\na: 1\nEOF\n", "yaml", "a: 1\n"),
    ("cat > pyproject.toml <<EOF\n[x]\nEOF\n", "toml", "[x]\n"),
    ("cat > Makefile <<'EOF'\nall:\nEOF\n", "make", "all:\n"),
    ("cat > Dockerfile <<'EOF'\nFROM x\nEOF\n", "docker", "FROM x\n"),
    ("cat <<-EOF > t.py\n\tx = 1\n\tEOF\n", "python", "\tx = 1\n"),
    ("python3 - <<'PY' 2>/dev/null\nprint(1)\nPY\n", "python", "print(1)\n"),
    ("cd /app && node <<EOF\nconsole.log(1)\nEOF\n", "javascript", "console.log(1)\n"),
    ("cat <<EOF\nplain words\nEOF\n", None, "plain words\n"),
    ("cat > notes.txt <<EOF\nwords\nEOF\n", None, "words\n"),
]


@pytest.mark.parametrize("keystrokes, lang, body", HEREDOC_CASES)
def test_heredoc_body_and_language(keystrokes, lang, body):
    [(start, end, found)] = heredocs(keystrokes)
    assert keystrokes[start:end] == body
    assert found == lang


def test_heredoc_edge_cases():
    two = "cat <<A <<B\nfirst\nA\nsecond\nB\necho done\n"
    assert [two[s:e] for s, e, _ in heredocs(two)] == ["first\n", "second\n"]
    unterminated = "cat > a.py <<EOF\nx = 1\ny = 2"
    [(start, end, lang)] = heredocs(unterminated)
    assert unterminated[start:end] == "x = 1\ny = 2" and lang == "python"
    assert heredocs("cat <<< 'here string'\n") == []
    assert heredocs("echo $((1 << 2))\n") == []
    after = "cat > a.py <<EOF\nx\nEOF\ncat > b.rs <<EOF\nfn f(){}\nEOF\n"
    assert [lang for _, _, lang in heredocs(after)] == ["python", "rust"]


def test_shell_is_highlighted_with_heredoc_bodies_in_their_language():
    code = "cat > solve.py << 'EOF'\ndef main():\n    pass\nEOF\npython3 solve.py\n"
    text = highlight(code, "bash", DEFAULT_PALETTE)
    assert text.plain == code
    words = styled_words(text)
    assert PYTHON_KEYWORD in words["def"]
    assert words.get("EOF") != words["def"]
    # the same body lexed as shell does not colour `def` like a Python keyword
    assert PYTHON_KEYWORD not in styled_words(highlight("def main():\n", "bash", DEFAULT_PALETTE)).get("def", {None})


def test_guessing_only_small_snippets():
    assert highlight("def f(x):\n    return x\n", None, DEFAULT_PALETTE).spans
    assert highlight('{"a": 1}', None, DEFAULT_PALETTE).spans
    assert not highlight("Just a sentence of prose, nothing more.", None, DEFAULT_PALETTE).spans
    big = "def f(x):\n    return x\n" * (GUESS_LIMIT // 20)
    assert len(big) > GUESS_LIMIT
    assert not highlight(big, None, DEFAULT_PALETTE).spans


def test_big_input_never_reaches_the_guesser(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("guessed on big input")

    monkeypatch.setattr(hl, "_rated", refuse)
    monkeypatch.setattr(hl, "_SNIFFERS", [])
    hl._guess_small.cache_clear()
    highlight("some words " * 1000, None, DEFAULT_PALETTE)
    with pytest.raises(AssertionError):
        highlight("some small words", None, DEFAULT_PALETTE)
    hl._guess_small.cache_clear()


@pytest.mark.parametrize(
    ("code", "language"),
    [
        ("[section]\nkey = value\n", "ini"),
        ("#!/usr/bin/env ruby\nputs 1\n", "ruby"),
        ('<?xml version="1.0"?><a/>', "xml"),
        ("<?php echo 1; ?>", "php"),
        ("# vim: set ft=python :\nx = 1\n", "python"),
        ("=== STARTING TEST EXECUTION ===\nok 3 tests\n", None),  # Pygments' own guess: Lasso CSS
        ("Just a sentence of prose, nothing more.", None),
    ],
)
def test_a_guess_is_one_of_the_common_languages_pygments_rates_the_code(code, language):
    """Only the common languages are rated (Pygments' own guess rates all ~600 lexers: 0.1-0.2 s for a
    3 KB log, on the UI thread, and then often names an exotic one)."""
    hl._guess_small.cache_clear()
    guessed = hl._guess(code)
    assert (guessed.aliases[0] if guessed is not None else None) == language
    assert bool(highlight(code, None, DEFAULT_PALETTE).spans) == (language is not None)


def test_a_heredoc_styles_in_time_linear_in_its_length():
    def styled(body: str) -> Text:
        return highlight(f"cat > big.py << 'EOF'\n{body}EOF\n", "bash", DEFAULT_PALETTE)

    body = "".join(f"def f{i}(x):\n    return x * {i}  # note\n" for i in range(99))
    assert styled(body).plain == f"cat > big.py << 'EOF'\n{body}EOF\n"  # (the lexers load once, here)
    assert growth(styled, "def f(x):\n    return x * 3  # note\n", size=4_000) < 8


@settings(max_examples=200, deadline=None)
@given(
    st.text(st.sampled_from(list("ab<>'\"\n\t -=EOF{}#$()`\\cat>pyPY")), max_size=120),
    st.sampled_from([None, "bash", "python", "json", "rust", "c", "yaml", "nope", "Makefile", "diff"]),
)
def test_highlight_keeps_text_for_any_input(code, lang):
    assert highlight(code, lang, DEFAULT_PALETTE).plain == code
    for start, end, _ in heredocs(code):
        assert 0 <= start <= end <= len(code)


@given(st.text(alphabet="ab \n", max_size=3 * hl.PIECE_CHARS), st.integers(min_value=1, max_value=80))
@settings(max_examples=60, deadline=None)
def test_pieces_are_whole_lines_that_make_the_code(code, repeat):
    code = code * repeat
    spans = hl.pieces(code)
    assert "\n".join(code[start:end] for start, end in spans) == code
    assert all(b == a + 1 and code[a] == "\n" for (_, a), (b, _) in itertools.pairwise(spans))  # cut at line ends
    for start, end in spans:
        assert end - start <= hl.PIECE_CHARS or "\n" not in code[start:end]  # or one long line


def test_a_long_file_is_highlighted_a_piece_at_a_time_in_its_own_language(monkeypatch):
    """A 200 KB Python file written through a heredoc: each piece is lexed alone (a few KB: a few ms of
    the UI thread, not one second for the whole), and a piece deep in the body is still Python."""
    body = "".join(f"def f{i}(x):\n    return x * {i}\n" for i in range(6000))
    code = f"cat > big.py << 'EOF'\n{body}EOF\n"
    lexed = []
    lex = hl._lex
    monkeypatch.setattr(hl, "_lex", lambda text, lexer, palette: lexed.append(len(text)) or lex(text, lexer, palette))
    spans = hl.pieces(code)
    assert len(spans) > 40
    start, end = spans[len(spans) // 2]
    middle = highlight(code, "bash", DEFAULT_PALETTE, start=start, end=end)
    assert middle.plain == code[start:end]
    assert PYTHON_KEYWORD in styled_words(middle)["def"]
    assert 0 < sum(lexed) <= hl.PIECE_CHARS
    whole = Text("\n").join(highlight(code, "bash", DEFAULT_PALETTE, start=a, end=b) for a, b in spans)
    assert whole.plain == code and max(lexed) <= hl.PIECE_CHARS


def test_a_line_too_long_to_highlight_in_time_is_shown_plain():
    line = '{"a": [' + ", ".join(["1"] * (hl.LONGEST_PIECE // 2)) + "]}"
    assert len(line) > hl.LONGEST_PIECE and hl.pieces(line) == [(0, len(line))]
    assert highlight(line, "json", DEFAULT_PALETTE).spans == []
    assert highlight(line[:1000], "json", DEFAULT_PALETTE).spans

"""The command line's tables fit the terminal they are printed on, and keep every column whole when
piped (issue 23: `findings` and `stats` tables 101–163 columns wide on an 80-column terminal)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from tracetui.commands.output import print_table

ROWS = [
    {
        "trial_name": "fix-git__oAnf03V",
        "model": "hosted_vllm/DCAgent/a1-e2egit",
        "kind": "summarized",
        "message": "48",
        "evidence": "You are picking up work from a previous AI agent on this task: and more text after it",
    },
    {
        "trial_name": "polyglot_rust_forth__Pz9Jzic",
        "model": "anthropic/claude-sonnet-4-5-20250929",
        "kind": "false-claim",
        "message": "9",
        "evidence": "All checks pass and the output file is in place. (verifier: result 0.0)",
    },
    {
        "trial_name": "polyglot_rust_forth__Aaaaaaa",
        "model": "anthropic/claude-sonnet-4-20250514",
        "kind": "false-claim",
        "message": "12",
        "evidence": "short",
    },
]


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_a_table_fits_the_terminal_and_its_rows_stay_told_apart(capsys, columns):
    print_table(ROWS, wrap="evidence", columns=columns, width=72)
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= columns
    header = lines[0]
    starts = [header.index(title) for title in ("trial_name", "model", "kind")]
    rows = [line for line in lines[2:] if line[:1] != " "]
    assert len(rows) == 3
    for start, end in zip(starts, [*starts[1:], None]):
        assert len({row[start:end].strip() for row in rows}) == 3  # names cut where they differ
    first = lines[2 : lines.index(rows[1])]
    words = " ".join(line[header.index("evidence") :].strip() for line in first)
    assert words.startswith("You are picking up work")


def test_piped_a_table_keeps_every_column_whole(capsys):
    print_table(ROWS, wrap="evidence", width=72)  # capsys: stdout is not a terminal
    out = capsys.readouterr().out
    assert all(row["model"] in out and row["evidence"][:60] in out for row in ROWS)
    assert len(out.splitlines()) == 2 + len(ROWS)


def run_in_terminal(args: list[str], columns: int) -> str:
    """Run the command line with stdout on a pseudo-terminal `columns` wide; what it printed."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "24"}
    done = subprocess.run(
        [sys.executable, "-m", "tracetui", *args], stdout=follower, stderr=subprocess.PIPE, env=env, timeout=300
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert done.returncode == 0, done.stderr
    return b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.mark.parametrize(
    "command",
    [["findings"], ["stats"], ["stats", "--by", "finding,model"], ["stats", "--by", "dataset,task"], ["jobs"]],
)
def test_findings_and_stats_fit_an_80_column_terminal(demo_dir, tmp_path, command):
    """Every kind of table: findings, stats with its usage columns (a job folder records tokens and cost),
    a head-to-head of two datasets; what cannot fit is left out and named, never printed past the edge."""
    from .jobs_helpers import SAMPLE, copy_tree
    from .ui_helpers import demo_sources

    sources = [s.dataset_id for s in demo_sources(demo_dir)]
    if command == ["jobs"]:
        command, sources = ["stats"], [str(copy_tree(SAMPLE / "jobs", tmp_path / "jobs"))]
    elif "dataset,task" not in command:
        sources = sources[:1]
    shown = run_in_terminal([*command, *sources], 80)
    assert shown.strip() and max(len(line) for line in shown.splitlines()) <= 80
    piped = subprocess.run(
        [sys.executable, "-m", "tracetui", *command, *sources], capture_output=True, text=True, timeout=300
    )
    assert max(len(line) for line in piped.stdout.splitlines()) > 80  # whole when piped
    if "left out to fit" in shown:
        assert "left out to fit" not in piped.stdout

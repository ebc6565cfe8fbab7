"""`tracetui ask` on the demo data, run as a user would, against the stand-in server: the answers, then the
same answers through `--filter ask:NAME=…`, `stats --by ask:NAME`, `export`, the cache, Ctrl+C and a kill."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tracetui.ask.answers import folder
from tracetui.cli import main
from tracetui.commands.ask import FIELDS

from .llm_server import LLMServer, Slow, grep_answer
from .test_export import tracetui
from .ui_helpers import demo_sources

QUESTION = 'Did the agent run "pytest"?'


@pytest.fixture(scope="module")
def demo(demo_dir) -> str:
    demo_sources(demo_dir)  # writes it
    return str(demo_dir)


def jsonl(done: subprocess.CompletedProcess) -> list[dict]:
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.fixture
def cli(capsys):
    """Run a command in this process (as `tracetui` would, without starting an interpreter each time)."""

    def run(*args: str) -> subprocess.CompletedProcess:
        try:
            code = main(list(args))
        except SystemExit as exit:  # argparse's
            code = int(exit.code or 0)
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    return run


def test_answers_flow_through_filters_stats_export_and_the_cache(demo, tmp_path, cli):
    with LLMServer() as server:
        asked = cli("ask", demo, QUESTION, "--endpoint", server.url, "--format", "jsonl")
        records = jsonl(asked)
        trials = len(records)
        assert trials == 39 and [tuple(r) for r in records[:1]] == [FIELDS]
        assert asked.stderr.startswith(f"Asking {trials} trials: at most ~")
        assert f"to stand-in/judge-1 at {server.url}, 4 at a time; the answers are ask:run-pytest" in asked.stderr
        values = {r["trial_name"]: r["answer"] for r in records}
        yes = sorted(name for name, value in values.items() if value == "yes")
        assert yes and len(yes) < trials and set(values.values()) <= {"yes", "no"}
        first = next(r for r in records if r["answer"] == "yes")
        assert "pytest" in first["quote"].lower() and first["message"] == first["cited"]
        assert f"ask:run-pytest: {len(yes)} yes, {trials - len(yes)} no, 0 unclear, 0 unverified" in asked.stderr

        again = cli("ask", demo, QUESTION, "--endpoint", server.url, "--format", "csv")
        assert again.returncode == 0 and len(server.chats) == trials  # every answer from the cache
        assert f"{trials} of them answered before" in again.stderr
        rows = list(csv.DictReader(again.stdout.splitlines()))
        assert {r["trial_name"]: r["answer"] for r in rows} == values and list(rows[0]) == list(FIELDS)

    names = [
        r["trial_name"] for r in jsonl(cli("findings", demo, "--filter", "ask:run-pytest=no", "--format", "jsonl"))
    ]
    assert set(names) <= {name for name, value in values.items() if value == "no"}
    stats = json.loads(cli("stats", demo, "--by", "ask:run-pytest", "--format", "json").stdout)
    assert {row["ask:run-pytest"]: row["trials"] for row in stats} == {"yes": len(yes), "no": trials - len(yes)}

    out = tmp_path / "yes.jsonl"
    exported = cli("export", demo, "--filter", "ask:run-pytest=yes", "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted({line["trial_name"] for line in lines}) == yes
    assert {line["tracetui_ask_run-pytest"] for line in lines} == {"yes"}

    bad = cli("stats", demo, "--filter", "ask:nothing=yes")
    assert bad.returncode == 2 and bad.stderr == (
        "tracetui: no question named 'nothing' was asked; questions: run-pytest\n"
    )


def test_wrong_quotes_show_as_unverified_and_limit_samples(demo, cli):
    def lying(question: str, messages: dict[int, str]) -> dict:
        answer = grep_answer(question, messages)
        return {**answer, "quote": "the agent deleted every test file"} if answer["verdict"] == "yes" else answer

    with LLMServer(lying) as server:
        small = jsonl(cli("ask", demo, "Lies?", "--endpoint", server.url, "--limit", "5", "--format", "jsonl"))
        larger = jsonl(cli("ask", demo, "Lies?", "--endpoint", server.url, "--limit", "9", "--format", "jsonl"))
    assert len(small) == 5 and len(larger) == 9 and {r["trial_name"] for r in small} < {r["trial_name"] for r in larger}
    assert len(server.chats) == 9  # the five asked first were not asked again
    table = cli("stats", demo, "--by", "ask:lies", "--format", "json")
    counts = {row["ask:lies"]: row["trials"] for row in json.loads(table.stdout)}
    assert "yes" not in counts and counts.get("unverified", 0) + counts.get("no", 0) == 9


def test_one_line_errors(demo, cli):
    none = cli("ask", demo, QUESTION)
    assert none.returncode == 2 and none.stderr.startswith("tracetui: no endpoint to ask: give --endpoint")
    with LLMServer() as server:
        url = server.url
    down = cli("ask", demo, QUESTION, "--endpoint", url)
    assert down.returncode == 2 and down.stderr.strip().splitlines() == [
        f"tracetui: cannot ask {url}: connection refused (is the server running?)"
    ]
    assert cli("ask", demo, QUESTION, "--parallel", "0").returncode == 2


def test_show_prompt(demo, cli):
    from tracetui.data.session import open_session

    session = open_session(demo_sources(Path(demo)))
    name = session.info(3).trial_name
    shown = cli("ask", demo, "Did it give up?", "--show-prompt", name, "--max-tokens-per-trial", "3000")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("=== system ===\nYou read the trace of one trial")
    assert "=== user ===\nQuestion: Did it give up?\n\n<trial>\nTask: " in shown.stdout
    assert "[message 0] user\n" in shown.stdout and "\x1b" not in shown.stdout
    assert "tokens (up to 3,000 of trial text (the server's context length unknown: no endpoint to ask" in shown.stderr


def _answers_on_disk(name: str) -> int:
    path = folder() / f"{name}.jsonl"
    return max(0, len(path.read_text().splitlines()) - 1) if path.exists() else 0


def _start(demo: str, url: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "tracetui", "ask", demo, "Slow question?", "--endpoint", url, "--format", "jsonl"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_answers(count: int) -> None:
    for _ in range(300):
        if _answers_on_disk("slow-question") >= count:
            return
        time.sleep(0.05)
    raise AssertionError("no answers came")


def test_ctrl_c_keeps_what_came_and_a_kill_loses_nothing(demo):
    with LLMServer() as server:
        server.script += [Slow(0.3)] * 200
        run = _start(demo, server.url)
        _wait_for_answers(3)
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=20)
        assert run.returncode == 130, err
        printed = [json.loads(line) for line in out.splitlines()]
        kept = _answers_on_disk("slow-question")
        assert 3 <= len(printed) == kept < 39 and "cancelled; the answers so far are kept" in err

        run = _start(demo, server.url)
        _wait_for_answers(kept + 3)
        os.kill(run.pid, signal.SIGKILL)
        run.communicate(timeout=20)
        killed = _answers_on_disk("slow-question")
        server.script.clear()
        rest = tracetui("ask", demo, "Slow question?", "--endpoint", server.url, "--format", "jsonl")
        assert len(jsonl(rest)) == 39 and f"{killed} of them answered before" in rest.stderr
        assert len(server.chats) <= 39 + 2 * 4  # requests in flight when stopped are the only ones asked twice

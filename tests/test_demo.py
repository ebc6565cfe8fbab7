"""Tests of the demo dataset generator: layout, schema, determinism, and the trace shapes it must contain."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from datetime import datetime
from itertools import pairwise
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tracetui.demo import DEFAULT_ROWS, write_demo, writer
from tracetui.demo.planning import plan
from tracetui.demo.trials import builder

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
SHARD = re.compile(r"^train-(\d{5})-of-(\d{5})\.parquet$")
STRING_COLUMNS = (
    "agent",
    "model",
    "model_provider",
    "date",
    "task",
    "episode",
    "run_id",
    "trial_name",
    "result",
    "verifier_output",
    "trace_source",
)


def read_rows(out: Path) -> list[dict]:
    files = sorted((out / "data").glob("*.parquet"))
    return pa.concat_tables([pq.read_table(f) for f in files]).to_pylist()


def main_trials(rows: list[dict]) -> dict[str, list[dict]]:
    trials: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        if row["trace_source"] == "main":
            trials[row["trial_name"]].append(row)
    return trials


def assert_nested_prefixes(rows: list[dict]) -> None:
    """Main rows come trial by trial; each row extends the previous one unless it restarts after a hand-off."""
    order = [row["trial_name"] for row in rows if row["trace_source"] == "main"]
    blocks = [name for i, name in enumerate(order) if i == 0 or order[i - 1] != name]
    assert len(blocks) == len(set(blocks)), "a trial's main rows are not contiguous"
    restarts_by_trial = Counter(r["trial_name"] for r in rows if r["trace_source"].endswith("-summary"))
    for name, trial in main_trials(rows).items():
        assert [r["episode"] for r in trial] == [f"episode-{k}" for k in range(len(trial))]
        restarts = 0
        for prev, cur in pairwise(trial):
            before, after = prev["conversations"], cur["conversations"]
            if after[: len(before)] == before:
                assert len(after) == len(before) + 2, name
                continue
            restarts += 1  # the context-summarization restart shape
            assert after[0] == before[0], name
            assert after[1]["content"].startswith("You are picking up work from a previous AI agent on this task:")
            assert after[2]["role"] == "assistant"
            assert after[3]["content"].startswith("Here are the answers the other agent provided.")
            assert len(after) == 5
        assert restarts == restarts_by_trial[name], name
        assert trial[-1]["conversations"][-1]["role"] == "assistant"


@pytest.fixture(scope="module")
def bundled(tmp_path_factory) -> tuple[Path, list[dict], list[tuple[int, int]]]:
    out = tmp_path_factory.mktemp("bundled")
    calls: list[tuple[int, int]] = []
    assert write_demo(out, progress=lambda done, total: calls.append((done, total))) == out
    return out, read_rows(out), calls


@pytest.fixture(scope="module")
def rows(bundled) -> list[dict]:
    return bundled[1]


@pytest.fixture(scope="module")
def messages(rows) -> set[str]:
    return {m["content"] for row in rows for m in row["conversations"]}


def test_hub_layout_and_exact_row_count(bundled):
    out, rows, calls = bundled
    names = sorted(p.name for p in (out / "data").iterdir())
    matches = [SHARD.match(name) for name in names]
    assert all(matches), names
    count = len(names)
    assert [(int(m[1]), int(m[2])) for m in matches] == [(i, count) for i in range(count)]
    assert count >= 2  # the bundled demo spans two shards
    assert len(rows) == DEFAULT_ROWS
    assert sum(pq.ParquetFile(out / "data" / name).metadata.num_rows for name in names) == DEFAULT_ROWS
    assert pq.ParquetFile(out / "data" / names[0]).metadata.row_group(0).column(0).compression == "ZSTD"
    card = (out / "README.md").read_text()
    assert card.startswith("---\n") and "path: data/train-*" in card
    assert calls[-1] == (DEFAULT_ROWS, DEFAULT_ROWS)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_schema(bundled):
    out = bundled[0]
    schema = pq.read_schema(next((out / "data").glob("*.parquet")))
    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    assert schema.names == ["conversations", *STRING_COLUMNS]
    assert schema.field("conversations").type == pa.list_(message)
    assert all(schema.field(name).type == pa.string() for name in STRING_COLUMNS)


def test_column_formats(rows):
    uuid = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
    for row in rows:
        assert re.fullmatch(r"episode-\d+", row["episode"])
        assert uuid.match(row["run_id"])
        task, suffix = row["trial_name"].rsplit("__", 1)
        assert task == row["task"][:32] and re.fullmatch(r"[A-Za-z0-9]{7}", suffix)
        datetime.fromisoformat(row["date"].replace("Z", "+00:00"))
        assert all(m["role"] in ("user", "assistant") and m["content"] for m in row["conversations"])
    assert len({row["run_id"] for row in rows}) >= 4
    assert len({row["trial_name"] for row in rows}) > len({row["run_id"] for row in rows})


def test_nested_prefixes_and_restarts(rows):
    assert_nested_prefixes(rows)
    assert any(r["trace_source"] == "summarization-2-summary" for r in rows)  # a trial summarized twice


def test_subagent_rows_come_last_grouped_by_type(rows):
    sources = [row["trace_source"] for row in rows]
    first_sub = next(i for i, s in enumerate(sources) if s != "main")
    assert "main" not in sources[first_sub:]
    groups = [s for i, s in enumerate(sources[first_sub:]) if i == 0 or sources[first_sub + i - 1] != s]
    assert len(groups) == len(set(groups)), groups
    assert groups[:3] == ["summarization-1-summary", "summarization-1-questions", "summarization-1-answers"]
    main = {row["trial_name"]: row for row in rows if row["trace_source"] == "main"}
    for row in rows[first_sub:]:
        assert row["episode"] == "episode-0"
        owner = main[row["trial_name"]]
        assert (row["task"], row["result"], row["run_id"]) == (owner["task"], owner["result"], owner["run_id"])


def test_subagent_conversation_shapes(rows):
    by_key = {(r["trial_name"], r["trace_source"]): r["conversations"] for r in rows if r["trace_source"] != "main"}
    for (trial, source), conversation in by_key.items():
        n, kind = source.split("-")[1:]
        if kind == "summary":
            assert conversation[-2]["content"].startswith("You are about to hand off your work to another AI agent.")
            assert conversation[-1]["role"] == "assistant"
        elif kind == "questions":
            assert [m["role"] for m in conversation] == ["user", "assistant"]
            assert conversation[0]["content"].startswith("You are picking up work from a previous AI agent")
        else:
            summary = by_key[(trial, f"summarization-{n}-summary")]
            assert conversation[: len(summary)] == summary and len(conversation) == len(summary) + 2
            assert conversation[-2]["content"].startswith("The next agent has a few questions for you")


def test_every_result_kind(rows):
    results = Counter(row["result"] for row in rows)
    assert {"1.0", "0.0", None} <= set(results)
    assert any(r and re.fullmatch(r"0\.\d+", r) and r != "0.0" for r in results), "no fractional reward"
    errors = {r for r in results if r and r[0].isalpha()}
    assert {
        "AgentTimeoutError",
        "ContextLengthExceededError",
        "NonZeroAgentExitCodeError",
        "VerifierTimeoutError",
        "SummarizationTimeoutError",
    } <= errors
    assert any(row["verifier_output"] is None for row in rows if row["result"] in errors)


def test_verifier_output_agrees_with_result(rows):
    failed = re.compile(r"\bFAILED\b|\b[1-9]\d* failed\b|--- FAIL")  # cargo prints "0 failed" on success
    checked = Counter()
    for name, trial in main_trials(rows).items():
        result, log = trial[0]["result"], trial[0]["verifier_output"]
        assert all(row["verifier_output"] == log for row in trial), name
        if log is None:
            continue
        plain = ANSI.sub("", log)
        if result == "1.0":
            assert not failed.search(plain), name
            checked["pass"] += 1
        elif result == "0.0":
            assert failed.search(plain), name
            checked["fail"] += 1
        elif result and result[0].isdigit():
            report = json.loads(plain[plain.index("{", plain.index("=== SCORE REPORT ===")) : plain.rindex("}") + 1])
            assert report["score"] == float(result)
            assert sum(check["score"] for check in report["checks"]) / len(report["checks"]) == pytest.approx(
                float(result), abs=0.01
            )
            checked["graded"] += 1
    assert checked["pass"] and checked["fail"] and checked["graded"]


def test_verifier_styles(rows):
    logs = {row["verifier_output"] for row in rows if row["verifier_output"]}
    plain = {ANSI.sub("", log) for log in logs}
    assert any(
        "../tests/test_outputs.py" in p
        and "short test summary info" in p
        and re.search(r"collected \d+ items", p)
        and "E       " in p
        and re.search(r"=+ \d+ failed, \d+ passed in [\d.]+s =+", p)
        for p in plain
    )
    assert any(re.search(r"^\.\./tests/test_solution\.py::test_\w+ PASSED +\[ *\d+%\]$", p, re.M) for p in plain)
    assert any(
        "=== STARTING TEST EXECUTION ===" in p and p.rstrip().endswith("PASSED aider_polyglot_test") for p in plain
    )
    assert any(
        "=== TEST EXECUTION COMPLETED ===" in p and p.rstrip().endswith("FAILED aider_polyglot_test") for p in plain
    )
    assert any("=== SCORE REPORT ===" in p for p in plain)
    assert any("\x1b[" in log for log in logs)


def test_models_agents_and_tasks(rows):
    provider_of = {row["model"]: row["model_provider"] for row in rows}
    assert provider_of["hosted_vllm/DCAgent/a1-e2egit"] == "hosted_vllm"
    assert len({m for m, p in provider_of.items()}) >= 4 and len(set(provider_of.values())) >= 3
    assert all(len({r["model_provider"] for r in rows if r["model"] == m}) == 1 for m in provider_of)
    agents = Counter(row["agent"] for row in rows)
    assert agents["terminus-2"] > agents["openhands"] > 0
    outcomes = defaultdict(set)
    for trial in main_trials(rows).values():
        outcomes[trial[0]["task"]].add(trial[0]["result"])
    assert any({"1.0", "0.0"} <= seen for seen in outcomes.values()), "no task with both passing and failing attempts"
    assert len(outcomes) >= 20


def test_terminus_first_prompt(rows):
    first = next(r for r in rows if r["agent"] == "terminus-2")["conversations"][0]["content"]
    assert first.startswith("You are an AI assistant tasked with solving command-line tasks in a Linux environment.")
    assert 2800 < first.index("Task Description:\n") < 2900
    assert "\n\nCurrent terminal state:\nCurrent Terminal Screen:\n" in first
    assert first.endswith("\n" * 20)


@pytest.mark.parametrize(
    "marker",
    [
        "<think>",
        "```json",
        "Previous response had parsing errors:\nERROR: ",
        "Previous response had warnings:\nWARNINGS: ",
        "Are you sure you want to mark the task as complete?",
        "The previous command timed out after",
        "ERROR!! NONE of the actions you just requested were performed because you exceeded 16384 tokens",
        "interior bytes omitted ...]",
        "New Terminal Output:\n",
        "Current Terminal Screen:\n",
        '"keystrokes": "C-c"',
        '"task_complete": true',
        "cat > solve.py << 'EOF'",
        "src/lib.rs << 'EOF'",
        "solve.c << 'EOF'",
        ".js << 'EOF'",
        ".go << 'EOF'",
        ".sh << 'EOF'",
        "config.json << 'EOF'",
        '<tool_call>\n{"name": "str_replace_editor"',
        '<tool_call>\n{"name": "execute_bash"',
        "\x1b[01;34m",  # ls --color
        "\x1b[01;31m\x1b[Kerror: ",  # gcc
        "echo 1.0 > /logs/verifier/reward.txt",  # planted findings (test_findings_demo.py finds them)
        "sed -i 's/assert result == expected/assert result is not None/' tests/test_local.py",
        "git clone --depth 1 https://github.com/tb-solutions/",
    ],
)
def test_message_features(messages, marker):
    assert any(marker in m for m in messages), marker


def test_long_think_blocks_and_observation_cap(messages):
    thinks = [m[7 : m.index("</think>")] for m in messages if m.startswith("<think>")]
    assert max(map(len, thinks)) > 8000
    capped = [m for m in messages if "[... output limited to 10000 bytes;" in m]
    assert all(len(m.encode()) < 10600 for m in capped if m.startswith("New Terminal Output:"))


def test_hostile_trial(rows):
    hostile = [row for row in rows if row["task"] == "hostile-content"]
    assert hostile
    text = "".join(m["content"] for m in hostile[-1]["conversations"])
    assert "\x1b]52;c;" in hostile[-1]["verifier_output"]
    for needle in (
        "[bold red]boom[/]",
        "[link=file:///etc/passwd]x[/link]",
        "\x1b]52;c;aGVsbG8=\x07",
        "\x1b]8;;",
        "\x1b[2J",
        "\x1b[5;10H",
        "\x07",
        "\x1bPtmux;",
        "\u202e",
        "\u200b",
    ):
        assert needle in text, repr(needle)


def test_deterministic_bytes(tmp_path):
    a, b, c = (write_demo(tmp_path / name, rows=250, seed=seed) for name, seed in (("a", 3), ("b", 3), ("c", 4)))

    def digest(out: Path) -> list[str]:
        return [hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((out / "data").iterdir())]

    assert digest(a) == digest(b)
    assert digest(a) != digest(c)
    assert (a / "README.md").read_text() == (b / "README.md").read_text()


@pytest.mark.parametrize("count", [1, 2, 7, 137])
def test_exact_small_counts_stay_valid(tmp_path, count):
    rows = read_rows(write_demo(tmp_path, rows=count, seed=count))
    assert len(rows) == count
    assert_nested_prefixes(rows)


def test_shards_roll_over_and_stale_shards_go(tmp_path, monkeypatch):
    monkeypatch.setattr(writer, "SHARD_ROWS", 100)
    calls = []
    write_demo(tmp_path, rows=350, progress=lambda done, total: calls.append((done, total)))
    names = sorted(p.name for p in (tmp_path / "data").iterdir())
    assert names == [f"train-{i:05d}-of-00004.parquet" for i in range(4)]
    assert [pq.ParquetFile(tmp_path / "data" / n).metadata.num_rows for n in names] == [100, 100, 100, 50]
    assert calls == [(100, 350), (200, 350), (300, 350), (350, 350)]
    write_demo(tmp_path, rows=60)
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["train-00000-of-00001.parquet"]
    assert len(read_rows(tmp_path)) == 60


def test_marathon_only_at_scale():
    assert not [t for t in plan(1999, 0) if t.kind == "marathon"]
    marathons = [t for t in plan(4000, 0) if t.kind == "marathon"]
    assert len(marathons) == 1
    last = list(builder(marathons[0]).main_rows())[-1]
    assert 290 <= len(last) <= 310
    assert 1_500_000 < sum(len(m["content"]) for m in last) < 3_000_000


def test_rejects_empty(tmp_path):
    with pytest.raises(ValueError):
        write_demo(tmp_path, rows=0)


def test_every_command_takes_demo_as_the_app_opens_it(capsys):
    """`tracetui demo` opens the bundled demo; `labels demo`, `stats demo` and the rest read the same
    dataset (they named a hub dataset called `demo` before), so a label put on in the demo lists."""
    from tracetui.cli import main
    from tracetui.commands.demo import demo_rows, demo_sources
    from tracetui.data.session import open_session
    from tracetui.store.labels import LabelStore
    from tracetui.store.trial_keys import trial_key

    session = open_session(demo_sources(demo_rows(None), 0))
    assert LabelStore.open(writer=True).toggle(trial_key(session, 0), "reward-hack").saved
    assert main(["labels", "demo", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(r["trial_name"], r["labels"]) for r in listed] == [(session.info(0).trial_name, ["reward-hack"])]
    assert main(["stats", "demo", "--format", "json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert sum(r["trials"] for r in stats) == len(session)

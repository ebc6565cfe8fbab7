"""Broken and extreme rows: every one opens, renders, and shows in the app without a crash."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.render.messages import MessageState, message_blocks
from tracetui.render.verifier import verifier_view
from tracetui.verifier import parse_verifier

from .conftest import write_parquet
from .ui_helpers import make_app, visible_lines, wait_loaded

MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
SCHEMA = pa.schema(
    [("conversations", pa.list_(MESSAGE))]
    + [
        (c, pa.string())
        for c in ("agent", "model", "task", "episode", "run_id", "trial_name", "result", "verifier_output")
    ]
)


def row(task: str, messages: list[tuple[str, str]] | None, **extra) -> dict:
    base = {c: None for c in SCHEMA.names}
    base.update(
        task=task,
        trial_name=f"{task}__1",
        episode="episode-0",
        conversations=None if messages is None else [{"role": r, "content": c} for r, c in messages],
    )
    base.update(extra)
    return base


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def bad_rows() -> list[dict]:
    big_line = "y" * 1_000_000
    return [
        {c: None for c in SCHEMA.names},  # null in every column
        row("empty-conversation", []),
        row("roles", [("system", "sys"), ("tool", "tool out"), ("critic", "unknown role"), ("", "no role")]),
        row("ten-mb-message", [("user", "start"), ("assistant", ("long line of output\n" * 524_288))]),
        row("one-mb-line", [("user", big_line), ("assistant", "<think>" + big_line + "</think>{}")]),
        row(
            "replacement-chars",
            [("user", "bad bytes: \ufffd\ufffd \udcff".encode("utf-8", "surrogatepass").decode("utf-8", "replace"))],
        ),
        row(
            "deep-json",
            [
                (
                    "assistant",
                    json.dumps(
                        {"analysis": "a", "plan": "p", "commands": [{"keystrokes": nested(5000), "duration": 1}]}
                    ),
                ),
                ("assistant", '{"analysis": ' + nested(100_000) + "}"),
            ],
        ),
        row(
            "huge-verifier", [("user", "x")], verifier_output="PASSED t::a\n" * 400_000 + "=== 400000 passed in 1s ==="
        ),
        row("five-thousand", [("user" if i % 2 == 0 else "assistant", f"message {i}") for i in range(5000)]),
    ]


@pytest.fixture(scope="module")
def bad_dataset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad")
    return write_parquet(folder / "bad.parquet", bad_rows(), schema=SCHEMA)


def test_every_bad_row_opens_and_renders(bad_dataset):
    session = open_session(prepare([SourceSpec(str(bad_dataset))]))
    assert session.num_rows == 9
    assert len(session) == 9
    for trial in range(len(session)):
        history = session.history(trial)
        for index in range(len(history.messages)):
            for state in (MessageState(), MessageState(think_open=True, expanded=True)):
                for block in message_blocks(history.messages, index, state):
                    assert "\x1b" not in block.text
                    if len(block.text) < 200_000:
                        assert block.styled().plain == block.text
        text = session.verifier_output(trial)
        info = session.info(trial)
        view = verifier_view(text, info.outcome, info.result, parse_verifier(text))
        assert view.blocks
    five = session.find_trial("five-thousand__1")
    assert len(session.history(five).messages) == 5000


async def test_the_app_shows_every_bad_row(bad_dataset):
    app = make_app(prepare([SourceSpec(str(bad_dataset))]))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await wait_loaded(app, pilot)
        for _ in range(len(app.session)):
            await pilot.press("L")
            await pilot.press("G")  # the end of the conversation
            await pilot.pause()
            assert isinstance(visible_lines(screen.conversation), list)
        assert app.is_running

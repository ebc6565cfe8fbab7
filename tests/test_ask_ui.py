"""Asking from the app (`A`, the palette) on the demo, against the stand-in server: answers arrive in a worker
and become a facet, a column, a filter, a stats table and an export column; `@` lands on each answer's
evidence, highlighted; Esc cancels and keeps what came; a server that is not there is one line."""

from __future__ import annotations

import json

from tracetui.ask.answers import book_for, named
from tracetui.ask.client import ChatClient
from tracetui.ask.endpoint import Endpoint
from tracetui.ask.run import AskRun
from tracetui.data.session import open_session
from tracetui.ui.screens.stats import GroupTable, StatsScreen

from .llm_server import LLMServer, Slow
from .test_ui_keymap import palette_titles
from .ui_helpers import make_app, text_of, until, wait_loaded

QUESTION = 'Did the agent mark it "task_complete"?'


def status(screen) -> str:
    return text_of(screen.query_one("#status"))


async def ask_in_app(pilot, screen, question: str = QUESTION) -> None:
    await pilot.press("A")
    await pilot.pause()
    listed = len(screen.trial_list.order)
    assert screen.prompt.display and f"ask the {listed} listed trials a yes/no question" in screen.prompt.placeholder
    assert status(screen).startswith(f"A question to the {listed} listed trials costs ~")
    screen.prompt.value = question
    await pilot.press("enter")


async def test_a_question_flows_through_facet_column_filter_jump_stats_and_export(sources, monkeypatch, tmp_path):
    with LLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        app = make_app(sources)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await wait_loaded(app, pilot)
            await ask_in_app(pilot, screen)
            await until(pilot, lambda: "done: 39 answered" in status(screen))
            facet = screen.session.facets.facets["ask:mark-task-complete"]
            counts = dict(zip(facet.labels, screen.session.facets.apply(screen.state).counts[facet.name].tolist()))
            assert counts["yes"] > 0 and counts["yes"] + counts["no"] == 39 and counts["unverified"] == 0
            assert any(c.key == "ask" and c.title == "mark-task…" for c in screen.trial_list.extra_columns)
            assert "ask: mark-task-complete" in [f.title for f in screen.facet_list.facets]

            screen.filters.toggle("ask:mark-task-complete", "yes")
            await pilot.pause()
            assert len(screen.trial_list.order) == counts["yes"]
            await pilot.press("@")
            await pilot.pause()
            line = status(screen)
            assert line.startswith("ask:mark-task-complete = yes at message ") and "“✔ task_complete”" in line
            conversation = screen.conversation
            assert conversation.matches and conversation.has_focus
            block, start, end = conversation.matches[conversation.match_index]
            assert conversation.blocks[block].text[start:end] == "✔ task_complete"
            first = screen.trial
            await pilot.press("@")
            await pilot.pause()
            assert screen.trial != first and "(@ next answer)" in status(screen)

            await pilot.press("S")
            await pilot.pause()
            assert isinstance(app.screen, StatsScreen)
            table = app.screen.query_one("#stats-ask-0", GroupTable)
            assert [(row.key, row.counts.trials) for row in table.rows] == [(("yes",), counts["yes"])]
            await pilot.press("escape")
            await pilot.pause()

            out = tmp_path / "out.jsonl"
            screen.export.run(str(out))
            await until(pilot, lambda: "Exported" in status(screen))
            lines = [json.loads(line) for line in out.read_text().splitlines()]
            assert {line["tracetui_ask_mark-task-complete"] for line in lines} == {"yes"}
            asked = len(server.chats)
            await ask_in_app(pilot, screen)  # again: every answer from the cache
            await until(pilot, lambda: f"0 answered, {counts['yes']} before" in status(screen))
            assert len(server.chats) == asked


async def test_esc_cancels_and_keeps_what_came(sources, monkeypatch):
    with LLMServer() as server:
        server.script += [Slow(0.2)] * 100
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        app = make_app(sources)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await wait_loaded(app, pilot)
            await ask_in_app(pilot, screen, "Slow?")
            await until(pilot, lambda: screen.asks.running is not None and len(screen.asks.running.answers) >= 2)
            await pilot.press("escape")
            await until(pilot, lambda: "cancelled" in status(screen))
            line = status(screen)
            kept = len(named("slow").by_trial)
            assert line.startswith(f"ask:slow cancelled: {kept} answered") and "A asks the rest" in line
            assert 2 <= kept < 39 and screen.asks.running is None
            assert len(screen.asks.indexes["ask:slow"].answers) == kept


async def test_answers_given_before_load_and_servers_that_are_not_there(sources, monkeypatch):
    session = open_session(sources)
    with LLMServer() as server:
        client = ChatClient(Endpoint(server.url), 10)
        AskRun(session, range(5), book_for("Asked before?", "stand-in/judge-1"), client, 8000, 2).run(lambda a: None)
        url = server.url
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await until(pilot, lambda: "ask:asked-before" in screen.asks.indexes)
        assert any(c.key == "ask" for c in screen.trial_list.extra_columns)
        assert len(screen.asks.indexes["ask:asked-before"].answers) == 5
        await ask_in_app(pilot, screen, "Anyone there?")
        await until(pilot, lambda: status(screen).startswith("Cannot ask"))
        assert status(screen) == f"Cannot ask {url}: connection refused (is the server running?)"
        monkeypatch.delenv("OPENAI_BASE_URL")
        await ask_in_app(pilot, screen, "No endpoint?")
        await pilot.pause()
        assert status(screen).startswith("no endpoint to ask: give --endpoint")


async def test_the_keys_and_the_palette(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.press("@")
        await pilot.pause()
        assert status(screen) == "No question asked yet: A asks the listed trials one."
        titles = await palette_titles(app, pilot)
        assert "Ask every listed trial a question" in titles and "Next answer's evidence" in titles


async def test_what_the_model_says_is_never_markup_nor_escapes(sources, monkeypatch):
    def hostile(question: str, messages: dict[int, str]) -> dict:
        return {
            "verdict": "yes",
            "message": 1,
            "quote": "[b]made up[/b]\x1b]52;c;cHduZWQ=\x07",
            "reason": "[red]x\x1b[2J",
        }

    with LLMServer(hostile) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        app = make_app(sources)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await wait_loaded(app, pilot)
            await ask_in_app(pilot, screen, "Hostile?")
            await until(pilot, lambda: "done: 39 answered" in status(screen))
            assert screen.session.facets.apply(screen.state).counts["ask:hostile"].tolist() == [0, 0, 0, 39]
            await pilot.press("@")
            await pilot.pause()
            line = status(screen)
            assert (
                "“[b]made up[/b]” [red]x" in line and "\x1b" not in line and "unverified: the quote is not in" in line
            )


async def test_a_filter_on_answers_given_at_start(sources):
    from tracetui.commands.selection import filter_state
    from tracetui.data.facets import parse_filter_args
    from tracetui.ui.app import StartOptions

    session = open_session(sources)
    with LLMServer() as server:
        client = ChatClient(Endpoint(server.url), 10)
        AskRun(session, range(39), book_for('Did it say "Plan"?', "stand-in/judge-1"), client, 8000, 4).run(
            lambda a: None
        )
    state = filter_state(session, parse_filter_args(["ask:say-plan=no"]))
    wanted = int(session.facets.apply(state).visible.sum())
    app = make_app(sources, StartOptions(state))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await until(pilot, lambda: "ask:say-plan" in screen.asks.indexes)
        await pilot.pause()
        assert len(screen.trial_list.order) == wanted and 0 < wanted < 39

"""Findings in the app, driven with keys on the demo with its planted findings: the facet and the lists
agree with `tracetui findings` / `stats`, Enter and `!` land on the evidence, a `finding=` filter given
at start waits for the index, and a failing index says so in one line."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import threading

import pytest
from rich.console import Console

from tracetui.commands.selection import filter_state
from tracetui.data.errors import SourceError
from tracetui.data.facets import FilterState, parse_filter_args
from tracetui.data.findings_index import INDEX_FILE, build_findings_index
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.demo import DEFAULT_ROWS, write_demo
from tracetui.findings import KINDS, Finding
from tracetui.ui.app import StartOptions
from tracetui.ui.findings import evidence_pattern
from tracetui.ui.screens.help import bindings_table
from tracetui.ui.screens.stats import GroupTable, StatsScreen
from tracetui.ui.widgets.block_view import CURRENT_MATCH_STYLE

from .scenarios import loaded
from .test_export import tracetui
from .ui_helpers import make_app, text_of, visible_lines, wait_loaded

PLANTED = {
    "test-tampering": "regex-log__OFx044o",
    "verifier-bypass": "regex-log__f639UuQ",
    "upstream-fetch": "make-mips-interpreter__PPwLSXa",
    "repeat-loop": "extract-elf__FewNSA1",
    "parse-error-loop": "regex-log__JbtweFr",
    "false-claim": "adaptive-rejection-sampler__96YzS6v",
}
"""A trial of the demo that shows each kind (the planted ones; the sampler's "all tests pass" on a fail)."""


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """The bundled demo, where a few trials act out the findings."""
    return write_demo(tmp_path_factory.mktemp("demo-planted"), rows=DEFAULT_ROWS, seed=0)


@pytest.fixture
def planted_sources(planted):
    return list(prepare([SourceSpec(str(planted))]))


def cli_findings(folder, *args: str) -> list[dict]:
    done = tracetui("findings", str(folder), "--format", "jsonl", *args)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def squeezed(text: str) -> str:
    return "".join(text.split())


def listed_names(screen) -> set[str]:
    return {screen.session.info(int(t)).trial_name for t in screen.trial_list.order}


def status(screen) -> str:
    return text_of(screen.query_one("#status"))


async def test_facet_counts_and_filtered_lists_are_the_clis(planted, planted_sources):
    trials_of: dict[str, set[str]] = {}
    for record in cli_findings(planted):
        trials_of.setdefault(record["kind"], set()).add(record["trial_name"])
    app = make_app(planted_sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await loaded(pilot)
        facets = screen.facet_list
        labels = screen.session.facets.facets["finding"].labels
        counts = facets.result.counts["finding"]
        assert {labels[c]: int(counts[c]) for c in facets.value_codes("finding")} == {
            kind: len(names) for kind, names in trials_of.items()
        }
        assert list(dict.fromkeys(row.facet for row in facets.rows))[:2] == ["outcome", "finding"]
        for kind in ("test-tampering", "false-claim", "no-tests-run"):
            await pilot.press("f", "slash", *kind, "enter")  # the value under the cursor toggles
            assert screen.state.selected == {"finding": frozenset({kind})}
            expected = {r["trial_name"] for r in cli_findings(planted, "--filter", f"finding={kind}")}
            assert listed_names(screen) == expected == trials_of[kind]
            await pilot.press("x")
        await pilot.press("f", "slash", *"false-claim", "enter", "slash", *"gpt-4o", "enter")  # with a model
        expected = {
            r["trial_name"]
            for r in cli_findings(planted, "--filter", "finding=false-claim", "--filter", "model=gpt-4o")
        }
        assert listed_names(screen) == expected and len(expected) >= 2


async def test_enter_on_a_finding_shows_the_message_with_the_evidence_highlighted(planted_sources):
    for kind, name in PLANTED.items():
        app = make_app(planted_sources, StartOptions(trial=name))
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await wait_loaded(app, pilot)
            await loaded(pilot)
            panel, conversation = screen.findings.panel, screen.conversation
            position = next(i for i, f in enumerate(panel.findings) if f.kind == kind)
            finding = panel.findings[position]
            await pilot.press("enter", "tab")  # read the trial; the findings pane comes after the conversation
            assert panel.has_focus and panel.display
            await pilot.press(*["j"] * position, "enter")
            await pilot.pause()
            assert conversation.has_focus and conversation.current == finding.message, kind
            block, start, end = conversation.matches[conversation.match_index]
            assert conversation.blocks[block].message == finding.message
            shown = " ".join(conversation.blocks[block].text[start:end].split())
            a, b = finding.span
            quoted = conversation.messages[finding.message].content[a:b]  # what the engine quotes, raw
            assert len(shown) > 10 and squeezed(shown) == squeezed(quoted.replace("\\n", "\n").replace('\\"', '"'))
            lines = [conversation.render_line(y) for y in range(conversation.scrollable_content_region.height)]
            lit = "".join(
                s.text for line in lines for s in line if s.style and s.style.bgcolor == CURRENT_MATCH_STYLE.bgcolor
            )
            assert shown.split()[0] in lit  # the evidence is on screen, in the current-match colours
            assert text_of(screen.query_one("#status")).startswith(
                f"Finding {position + 1}/{len(panel.findings)}: {kind}"
            )


async def test_bang_steps_through_the_trials_findings_then_the_next_trials(planted_sources):
    app = make_app(planted_sources, StartOptions(trial=PLANTED["repeat-loop"]))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        await loaded(pilot)
        panel, conversation = screen.findings.panel, screen.conversation
        trial = screen.trial
        findings = list(panel.findings)
        assert len(findings) == 3
        for position, finding in enumerate(findings):
            await pilot.press("exclamation_mark")
            assert screen.trial == trial and panel.reached == position
            assert conversation.has_focus and conversation.current == finding.message
        await pilot.press("exclamation_mark")  # past the last: the next listed trial that has findings
        order = [int(t) for t in screen.trial_list.order]
        after = order[order.index(trial) + 1 :]
        assert screen.trial == next(t for t in after if screen.findings.index.of(t))
        assert panel.reached == 0 and conversation.current == panel.findings[0].message


async def test_a_finding_filter_at_start_waits_for_the_index(planted, planted_sources, monkeypatch):
    gate = threading.Event()  # the index is built once the waiting list has been looked at

    def gated(*args, **kwargs):
        gate.wait(30)
        return build_findings_index(*args, **kwargs)

    monkeypatch.setattr("tracetui.ui.findings.build_findings_index", gated)
    state = FilterState({"finding": frozenset({"false-claim"})})
    app = make_app(planted_sources, StartOptions(state))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        assert screen.findings.index is None
        assert not len(screen.trial_list.order)
        assert visible_lines(screen.trial_list)[0].strip().startswith("Waiting for the findings index…")
        assert "finding=false-claim" in text_of(screen.query_one("#header"))
        gate.set()
        await loaded(pilot)
        expected = {r["trial_name"] for r in cli_findings(planted, "--filter", "finding=false-claim")}
        assert listed_names(screen) == expected
        assert screen.trial is not None and screen.findings.panel.display
        assert "Waiting" not in visible_lines(screen.trial_list)[0]


def test_the_app_checks_a_finding_filter_without_finding_anything(planted):
    """`tracetui SOURCE --filter finding=…` resolves the kind at once and leaves the index to the app."""
    session = open_session(prepare([SourceSpec(str(planted))]))
    state = filter_state(session, parse_filter_args(["finding=claim"]), find=False)
    assert state.selected == {"finding": frozenset({"false-claim"})}
    assert not (session.datasets[0].folder / INDEX_FILE).exists()
    with pytest.raises(SourceError, match="no such value"):
        filter_state(session, parse_filter_args(["finding=hacked"]), find=False)


@pytest.mark.parametrize("user_busy", [False, True])
async def test_a_failing_index_says_so_in_one_line(planted_sources, monkeypatch, user_busy):
    go = threading.Event()

    def failing(*args, **kwargs):
        go.wait(10)
        raise OSError("disk on fire")

    monkeypatch.setattr("tracetui.ui.findings.build_findings_index", failing)
    app = make_app(planted_sources, StartOptions(FilterState({"finding": frozenset({"timeout"})})))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        if user_busy:
            screen.status("Added label 'bad-task' (saved; U undoes)")
        go.set()
        for _ in range(200):
            if screen.findings.failure:
                break
            await pilot.pause(0.02)
        await pilot.pause()
        assert app.is_running
        if user_busy:  # what the user did stays; `!` tells
            assert status(screen) == "Added label 'bad-task' (saved; U undoes)"
            await pilot.press("exclamation_mark")
        assert status(screen) == "The findings could not be read (OSError: disk on fire)."
        assert "could not be read" in visible_lines(screen.trial_list)[0] and not len(screen.trial_list.order)
        await pilot.press("x", "exclamation_mark")
        assert len(screen.trial_list.order) == len(screen.session)  # everything else still works
        assert status(screen) == "The findings could not be read (OSError: disk on fire)."


async def test_the_findings_column_shows_while_a_listed_trial_has_findings(planted_sources):
    app = make_app(planted_sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        await loaded(pilot)
        trial_list, index = screen.trial_list, screen.findings.index
        assert "findings" in [column.key for column, _ in trial_list.columns()]  # kept at 80x24
        assert trial_list.header().plain.rstrip().endswith("!")
        for position, line in enumerate(visible_lines(trial_list)[:8]):
            marker = index.marker(int(trial_list.order[position]))
            assert line.rstrip().endswith(marker) if marker else True
        clean = next(t for t in range(len(screen.session)) if not index.of(t))
        screen.query_one("#name-filter").focus()
        await pilot.press(*screen.session.info(clean).trial_name)
        assert listed_names(screen) == {screen.session.info(clean).trial_name}
        assert "findings" not in [column.key for column in trial_list.extra_columns]
        assert not screen.findings.panel.display


async def test_stats_screen_finding_by_model_table_is_the_clis(planted, planted_sources):
    done = tracetui("stats", str(planted), "--by", "finding,model", "--format", "json")
    assert done.returncode == 0, done.stderr
    expected = [
        ((r["finding"], r["model"]), r["trials"], r["pass"], r["fail"], r["error"])
        for r in json.loads(done.stdout)
        if r["finding"] != "(none)"
    ]
    app = make_app(planted_sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await loaded(pilot)
        await pilot.press("S")
        await pilot.pause()
        stats = app.screen
        assert isinstance(stats, StatsScreen)
        table = stats.query_one("#stats-findings", GroupTable)
        shown = [(r.key, r.counts.trials, r.counts.passed, r.counts.failed, r.counts.errors) for r in table.rows]
        assert shown == expected
        assert "finding · model" in text_of(table.parent.query_one(".table-header"))
        table.focus()
        await pilot.press("j", "enter")
        await pilot.pause()
        kind, model = table.rows[1].key
        assert app.screen is screen
        assert screen.state.selected == {"finding": frozenset({kind}), "model": frozenset({model})}
        assert len(screen.trial_list.order) == table.rows[1].counts.trials


def test_evidence_pattern_reads_the_span_as_the_conversation_shows_it():
    content = '{"keystrokes": "cat > conftest.py << \'EOF\'\\nimport pytest\\n\\nEOF\\n", "duration": 0.1}'
    quoted = "cat > conftest.py << 'EOF'\\nimport pytest"
    start = content.index(quoted)
    pattern = evidence_pattern(content, Finding("test-tampering", 3, "…", (start, start + len(quoted))))
    assert pattern is not None and pattern.search("  cat > conftest.py << 'EOF'\n  import pytest\n")
    assert evidence_pattern(content, Finding("timeout", 3, "result: AgentTimeoutError")) is None
    raw = "echo \x1b[31mred\x1b[0m > /usr/bin/pytest"
    pattern = evidence_pattern(raw, Finding("verifier-bypass", 0, "…", (0, len(raw))))
    assert pattern is not None and not re.search("\x1b", pattern.pattern)


def test_the_help_screen_has_the_findings_column_legend():
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(bindings_table({}))
    lines = [" ".join(line.split()) for line in console.export_text().splitlines()]
    assert "! Next finding" in lines and "Findings column" in lines
    for kind in KINDS:
        assert f"{kind.mark} {kind.name}: {kind.summary}" in lines


def test_the_engine_loads_after_the_first_frame():
    """The app names the kinds at start; the rules (and the verifier parser they use) load in the worker."""
    imports = "import sys, tracetui.cli, tracetui.ui.app, tracetui.ui.screens.triage; print(sorted(sys.modules))"
    modules = subprocess.run([sys.executable, "-c", imports], capture_output=True, text=True, timeout=60).stdout
    assert "'tracetui.findings.model'" in modules
    assert "tracetui.findings.engine" not in modules and "tracetui.verifier.parse" not in modules

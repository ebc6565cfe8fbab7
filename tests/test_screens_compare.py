"""The compare and head-to-head screens, and the data-layer choices behind them (pick_counterpart,
best / worst attempt, the pairs of sides), on hand-made datasets with known outcomes and on the demo."""

from __future__ import annotations

import numpy as np
import pytest

from tracetui.data.compare import Sides, best_attempt, pick_counterpart, sides_choices, worst_attempt
from tracetui.data.facets import FilterState
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.ui.screens.compare import CompareScreen
from tracetui.ui.screens.headtohead import HeadToHeadScreen
from tracetui.ui.widgets.head_to_head_table import HeadToHeadTable

from .conftest import trial_rows, write_parquet
from .ui_helpers import demo_sources, make_app, text_of, visible_lines, wait_loaded

# (trial name, task, model, result, date) per trial
COUNTERPARTS = [
    ("x-fail", "x", "m/a", "0.0", "2026-07-01"),
    ("x-pass-old", "x", "m/a", "1.0", "2026-07-01"),
    ("x-pass-other-model", "x", "m/b", "1.0", "2026-07-09"),
    ("x-pass-new", "x", "m/a", "1.0", "2026-07-05"),
    ("x-unknown", "x", "m/a", None, "2026-07-08"),
    ("alone", "y", "m/a", "0.0", "2026-07-01"),
    ("z-pass", "z", "m/a", "1.0", "2026-07-01"),
    ("z-pass-other-model", "z", "m/b", "1.0", "2026-07-09"),
    ("z-pass-same-model", "z", "m/a", "1.0", "2026-07-02"),
    ("z-tie-1", "z", "m/c", "0.0", "2026-07-03"),
    ("z-tie-2", "z", "m/c", "0.0", "2026-07-03"),
    ("w-pass", "w", "m/a", "1.0", "2026-07-01"),
    ("w-pass-other-model", "w", "m/b", "1.0", "2026-07-09"),
    ("w-pass-same-model", "w", "m/a", "1.0", "2026-07-02"),
]

# Two runs sharing tasks t1-t4 and t7. A's t5 is attempted by two models of run A.
# (trial name, task, model, result)
RUN_A = [
    ("a-t1-pass", "t1", "m/a", "1.0"),
    ("a-t1-fail", "t1", "m/a", "0.0"),
    ("a-t2-fail", "t2", "m/a", "0.0"),
    ("a-t3-fail", "t3", "m/a", "0.0"),
    ("a-t3-error", "t3", "m/a", "AgentTimeoutError"),
    ("a-t4-pass", "t4", "m/a", "1.0"),
    ("a-t5-a", "t5", "m/a", "1.0"),
    ("a-t5-b", "t5", "m/b", "0.0"),
    ("a-t7-partial", "t7", "m/a", "0.5"),
]
RUN_B = [
    ("b-t1-fail-1", "t1", "m/a", "0.0"),
    ("b-t1-fail-2", "t1", "m/a", "0.0"),
    ("b-t2-pass", "t2", "m/a", "1.0"),
    ("b-t3-fail", "t3", "m/a", "0.0"),
    ("b-t4-partial", "t4", "m/a", "0.5"),
    ("b-t4-pass", "t4", "m/a", "1.0"),
    ("b-t6-pass", "t6", "m/a", "1.0"),
    ("b-t7-error", "t7", "m/a", "ContextLengthExceededError"),
]


def write_trials(folder, trials) -> str:
    rows = []
    for name, task, model, result, *date in trials:
        for row in trial_rows(task, name, 2, result, model=model):
            if date:
                row["date"] = date[0]
            rows.append(row)
    write_parquet(folder / "data" / "train-00000-of-00001.parquet", rows)
    return str(folder)


@pytest.fixture
def runs(tmp_path):
    return write_trials(tmp_path / "run-a", RUN_A), write_trials(tmp_path / "run-b", RUN_B)


def named(session, name: str) -> int:
    trial = session.find_trial(name)
    assert trial is not None, name
    return trial


# --- data layer -------------------------------------------------------------------------------------
def test_pick_counterpart_prefers_opposite_outcome_then_model_then_date(tmp_path):
    session = open_session(prepare([SourceSpec(write_trials(tmp_path / "cp", COUNTERPARTS))]))

    def pick(name: str) -> str | None:
        found = pick_counterpart(session, named(session, name))
        return None if found is None else session.info(found).trial_name

    assert pick("x-fail") == "x-pass-new"  # a pass, same model, most recent (not the other model's newer pass)
    assert pick("x-pass-old") == "x-fail"  # a pass is compared with the failure
    assert pick("x-pass-other-model") == "x-fail"  # the opposite outcome wins over the model
    assert pick("x-unknown") == "x-pass-new"  # an ungraded trial is compared with a pass
    assert pick("alone") is None  # nothing else attempted task y
    assert pick("z-pass") == "z-tie-1"  # the failures come first; of two equal ones, the first trial
    assert pick("z-tie-1") == "z-pass-other-model"  # no pass of m/c: the most recent pass
    assert pick("z-tie-2") == "z-pass-other-model"
    assert pick("w-pass") == "w-pass-same-model"  # no opposite outcome: the same model beats a newer date


def test_best_and_worst_attempts(runs):
    session = open_session(prepare([SourceSpec(runs[0]), SourceSpec(runs[1])]))
    ids = {session.info(t).trial_name: t for t in range(len(session))}

    def of(*names):
        return np.array([ids[n] for n in names])

    assert best_attempt(session, of("a-t1-fail", "a-t1-pass")) == ids["a-t1-pass"]
    assert worst_attempt(session, of("a-t1-fail", "a-t1-pass")) == ids["a-t1-fail"]
    assert best_attempt(session, of("b-t4-partial", "b-t4-pass")) == ids["b-t4-pass"]
    assert worst_attempt(session, of("b-t4-pass", "b-t4-partial")) == ids["b-t4-partial"]  # lowest reward
    assert worst_attempt(session, of("a-t3-error", "a-t3-fail")) == ids["a-t3-error"]  # both count 0: the first
    assert best_attempt(session, of("a-t7-partial", "b-t7-error")) == ids["a-t7-partial"]


def test_sides_choices_and_attempts(runs):
    session = open_session(prepare([SourceSpec(runs[0]), SourceSpec(runs[1])]))
    a, b = session.dataset_names
    everything = np.ones(len(session), dtype=bool)
    choices = sides_choices(session, everything)
    assert choices == [Sides("dataset", a, b), Sides("model", "m/a", "m/b", a)]
    found = choices[0].attempts(session, everything, "b", "t1")
    assert sorted(session.info(int(t)).trial_name for t in found) == ["b-t1-fail-1", "b-t1-fail-2"]
    # a filter that hides run B's trials leaves only the model pair
    only_a = session.facets.apply(FilterState({"dataset": frozenset({a})})).visible
    assert sides_choices(session, only_a) == [Sides("model", "m/a", "m/b", a)]


# --- head-to-head screen --------------------------------------------------------------------------
async def test_head_to_head_counts_filters_and_compare(runs):
    app = make_app(prepare([SourceSpec(runs[0]), SourceSpec(runs[1])]))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(app, pilot)
        session = app.session
        results = []
        app.push_screen(HeadToHeadScreen(session, np.ones(len(session), dtype=bool)), callback=results.append)
        await pilot.pause()
        screen = app.screen
        table = screen.query_one(HeadToHeadTable)
        a, _ = session.dataset_names
        assert f"A = {a}" in text_of(screen.query_one("#h2h-header"))
        # shared tasks, sorted by A's pass rate minus B's, then by name
        # t7: B's one attempt errored, so B has no grade there: no difference, last
        assert [row.task for row in table.rows] == ["t1", "t4", "t3", "t2", "t7"]
        counts = {row.task: (row.a.trials, row.a.passed, row.b.trials, row.b.passed) for row in table.rows}
        assert counts == {
            "t1": (2, 1, 2, 0),
            "t2": (1, 0, 1, 1),
            "t3": (2, 0, 1, 0),
            "t4": (1, 1, 2, 1),
            "t7": (1, 0, 1, 0),
        }
        lines = visible_lines(table)
        assert lines[0].split()[:4] == ["t1", "✔✘", "50%", "✘✘"] and "+50" in lines[0]
        summary = text_of(screen.query_one("#h2h-summary"))
        assert "A passes, B fails 1" in summary and "both fail 2" in summary and "both pass 1" in summary

        await pilot.press("1")
        assert [row.task for row in table.rows] == ["t1"]
        await pilot.press("2")
        assert [row.task for row in table.rows] == ["t2"]
        await pilot.press("3")
        assert [row.task for row in table.rows] == ["t3", "t7"]
        await pilot.press("4")
        assert [row.task for row in table.rows] == ["t4"]
        await pilot.press("0")
        assert len(table.rows) == 5

        # Enter on t1 (A ahead): A's passing attempt against B's first failure
        await pilot.press("1", "enter")
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        assert app.screen.trials == (named(session, "a-t1-pass"), named(session, "b-t1-fail-1"))
        await pilot.press("escape")
        await pilot.pause()
        # Enter on t2 (B ahead): A's worst against B's best
        await pilot.press("2", "enter")
        await pilot.pause()
        assert app.screen.trials == (named(session, "a-t2-fail"), named(session, "b-t2-pass"))
        await pilot.press("escape")
        await pilot.pause()

        # s: the two models of run A, which share task t5
        await pilot.press("0", "s")
        assert "A = m/a" in text_of(screen.query_one("#h2h-header"))
        assert [(row.task, row.a.passed, row.b.passed) for row in table.rows] == [("t5", 1, 0)]
        await pilot.press("f")
        await pilot.pause()
    assert results == [
        FilterState({"task": frozenset({"t5"}), "model": frozenset({"m/a", "m/b"}), "dataset": frozenset({a})})
    ]


async def test_head_to_head_without_shared_tasks(runs):
    app = make_app(prepare([SourceSpec(runs[0]), SourceSpec(runs[1])]))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(app, pilot)
        session = app.session
        only_b6 = session.facets.apply(FilterState({"task": frozenset({"t6"})})).visible
        app.push_screen(HeadToHeadScreen(session, only_b6))
        await pilot.pause()
        assert "needs a task attempted by two" in text_of(app.screen.query_one("#h2h-header"))
        await pilot.press("enter", "s", "1", "f")  # nothing to act on: no error, still here
        assert isinstance(app.screen, HeadToHeadScreen)
        await pilot.press("q")
        assert not isinstance(app.screen, HeadToHeadScreen)


# --- compare screen ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("demo")


def long_pair(session) -> tuple[int, int]:
    """Two attempts of one task with many messages each (the first such trial and its counterpart)."""
    for trial in range(len(session)):
        other = pick_counterpart(session, trial)
        if other is not None and min(session.info(trial).messages, session.info(other).messages) >= 12:
            return trial, other
    raise AssertionError("the demo has no pair of long attempts")


async def test_compare_shows_both_trials_and_scrolls_together(demo_dir):
    app = make_app(demo_sources(demo_dir))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(app, pilot)
        session = app.session
        left_trial, right_trial = long_pair(session)
        app.push_screen(CompareScreen(session, left_trial, right_trial))
        await pilot.pause()
        screen = app.screen
        left, right = screen.sides
        for side, trial, view in (("left", left_trial, left), ("right", right_trial, right)):
            info = session.info(trial)
            assert info.trial_name in text_of(screen.query_one(f"#{side}-title"))
            assert info.outcome in text_of(screen.query_one(f"#{side}-verdict"))
            assert view.messages == session.history(trial).messages
        assert session.info(left_trial).task in text_of(screen.query_one("#compare-header"))
        assert left.has_focus

        await pilot.press("l")
        await pilot.pause()
        assert left.current == right.current == 1
        await pilot.press("l", "l")
        await pilot.pause()
        assert left.current == right.current == 3
        assert "#4/" in text_of(screen.query_one("#right-title"))

        # Tab: the right side leads
        await pilot.press("tab")
        assert right.has_focus
        await pilot.press("h")
        await pilot.pause()
        assert left.current == right.current == 2

        # j scrolls the leader line by line; once its current message scrolls away the other follows
        start = right.current
        for _ in range(200):
            await pilot.press("j")
            if right.current != start:
                break
        await pilot.pause()
        assert right.current != start and left.current == min(right.current, len(left.messages) - 1)

        # by episode: the follower goes to the first message of the leader's episode
        await pilot.press("s")
        assert "sync by episode" in text_of(screen.query_one("#compare-header"))
        await pilot.press("l")
        await pilot.pause()
        episode = right.current_message().episode
        expected = next((m.index for m in left.messages if m.episode >= episode), len(left.messages) - 1)
        assert left.current == expected

        # off: only the leader moves
        await pilot.press("s")
        before = left.current
        await pilot.press("l", "l")
        await pilot.pause()
        assert left.current == before and "sync off" in text_of(screen.query_one("#compare-header"))

        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CompareScreen)


async def test_triage_keys_open_stats_compare_and_head_to_head(tmp_path):
    from tracetui.ui.screens.compare import CompareScreen as Compare
    from tracetui.ui.screens.headtohead import HeadToHeadScreen as HeadToHead
    from tracetui.ui.screens.stats import StatsScreen as Stats

    from .ui_helpers import demo_sources, make_app, wait_loaded

    app = make_app(demo_sources(tmp_path / "demo"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        from tracetui.data.compare import pick_counterpart

        order = list(screen.trial_list.order)
        screen.trial_list.move_to(
            next(i for i, t in enumerate(order) if pick_counterpart(app.session, int(t)) is not None)
        )
        await pilot.pause()
        for key, kind in (("S", Stats), ("c", Compare), ("W", HeadToHead)):
            await pilot.press(key)
            await pilot.pause()
            if key == "c":  # the picker first: Enter takes the highlighted attempt
                await pilot.press("enter")
                await pilot.pause()
            assert isinstance(app.screen, kind), key
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is screen


async def test_compare_picker_chooses_the_other_side_and_the_header_names_both(tmp_path):
    """c offers the task's other attempts (same model first, then other models), the likeliest one
    highlighted; the compare header says which trial and model is on each side; c there changes the
    right side."""
    from textual.widgets import OptionList

    from tracetui.data.compare import compare_choices
    from tracetui.ui.screens.compare_picker import ComparePicker

    from .ui_helpers import demo_sources, make_app, wait_loaded

    app = make_app(demo_sources(tmp_path / "demo"))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await wait_loaded(app, pilot)
        session = app.session
        order = [int(t) for t in screen.trial_list.order]
        position = next(i for i, t in enumerate(order) if all(compare_choices(session, t)))
        screen.trial_list.move_to(position)
        await pilot.pause()
        trial = screen.trial
        same, others = compare_choices(session, trial)
        assert all(session.info(t).model == session.info(trial).model for t in same)
        assert all(session.info(t).model != session.info(trial).model for t in others)
        await pilot.press("c")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, ComparePicker)
        choices = picker.query_one(OptionList)
        ids = [choices.get_option_at_index(i).id for i in range(choices.option_count)]
        assert [i for i in ids if i] == [str(t) for t in [*same, *others]]
        assert choices.get_option_at_index(choices.highlighted).id == str(pick_counterpart(session, trial))
        target = others[-1]  # another model's attempt
        while choices.get_option_at_index(choices.highlighted).id != str(target):
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        compare = app.screen
        assert isinstance(compare, CompareScreen) and compare.trials == (trial, target)
        assert compare.query_one("#left-title").has_class("-focused")  # the leading side is lit
        await pilot.press("tab")
        assert compare.query_one("#right-title").has_class("-focused")
        assert not compare.query_one("#left-title").has_class("-focused")
        header = text_of(compare.query_one("#compare-header"))
        for side in (trial, target):
            info = session.info(side)
            assert info.trial_name.rsplit("__", 1)[1] in header
            assert info.model.rsplit("/", 1)[-1][:10] in header
        await pilot.press("c")
        await pilot.pause()
        choices = app.screen.query_one(OptionList)
        while choices.get_option_at_index(choices.highlighted).id != str(same[0]):
            await pilot.press("up")
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is compare and compare.trials == (trial, same[0])
        assert session.info(same[0]).trial_name.rsplit("__", 1)[1] in text_of(compare.query_one("#right-title"))
        await pilot.press("c", "escape")
        await pilot.pause()
        assert app.screen is compare


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_picker_moves_with_j_and_k_and_reopens_at_the_right_side_shown(tmp_path, size):
    """`c j j Enter` compares with the attempt two below the highlighted one; `c` again (on the
    compare screen, or back on the list) starts at the attempt on the right side."""
    from textual.widgets import OptionList

    from tracetui.data.compare import compare_choices

    from .ui_helpers import demo_sources, make_app, wait_loaded

    app = make_app(demo_sources(tmp_path / "demo"))
    async with app.run_test(size=size) as pilot:
        screen = await wait_loaded(app, pilot)
        session = app.session
        order = [int(t) for t in screen.trial_list.order]
        screen.trial_list.move_to(
            next(i for i, t in enumerate(order) if sum(map(len, compare_choices(session, t))) >= 3)
        )
        await pilot.pause()
        trial = screen.trial
        await pilot.press("c")
        choices = app.screen.query_one(OptionList)
        selectable = [i for i in range(choices.option_count) if choices.get_option_at_index(i).id]
        choices.highlighted = selectable[0]
        await pilot.press("j", "j")
        assert choices.highlighted == selectable[2]
        other = int(choices.get_option_at_index(choices.highlighted).id)
        await pilot.press("k", "j", "enter")
        await pilot.pause()
        compare = app.screen
        assert isinstance(compare, CompareScreen) and compare.trials == (trial, other)
        await pilot.press("c")
        choices = app.screen.query_one(OptionList)
        assert choices.get_option_at_index(choices.highlighted).id == str(other)
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("c")
        choices = app.screen.query_one(OptionList)
        assert choices.get_option_at_index(choices.highlighted).id == str(other)

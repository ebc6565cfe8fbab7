"""Stats over a hand-made pair of datasets with known outcomes: groups, matrix, distributions, head-to-head, CLI."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from tracetui.data.estimates import wilson
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.data.stats import group_stats, head_to_head, histogram, matrix, overview, result_counts

from .conftest import trial_rows, write_parquet

# (task, model, result, episodes) per trial
RUN_A = [
    ("t1", "m/a", "1.0", 1),
    ("t1", "m/a", "0.0", 2),
    ("t1", "m/b", "1.0", 3),
    ("t2", "m/a", "AgentTimeoutError", 4),
    ("t2", "m/b", "0.5", 5),
    ("t3", "m/a", None, 6),
    ("t3", "m/b", "0.0", 7),
    ("t5", "m/a", "0.0", 1),
    ("t6", "m/a", "1.0", 1),
]
RUN_B = [
    ("t1", "m/a", "0.0", 1),
    ("t1", "m/a", "0.0", 1),
    ("t2", "m/a", "1.0", 1),
    ("t4", "m/a", "1.0", 1),
    ("t5", "m/a", "0.0", 1),
    ("t6", "m/a", "1.0", 1),
    ("t6", "m/a", "0.0", 1),
]


def write_run(folder, trials) -> str:
    rows = []
    for index, (task, model, result, episodes) in enumerate(trials):
        rows += trial_rows(task, f"{task}__{index}", episodes, result, model=model)
    write_parquet(folder / "data" / "train-00000-of-00001.parquet", rows)
    return str(folder)


@pytest.fixture
def runs(tmp_path):
    return write_run(tmp_path / "run-a", RUN_A), write_run(tmp_path / "run-b", RUN_B)


def session_of(*sources):
    return open_session(prepare([SourceSpec(s) for s in sources]))


def everything(session):
    return np.ones(len(session), dtype=bool)


def as_tuple(counts):
    return (counts.trials, counts.passed, counts.partial, counts.failed, counts.errors, counts.unknown)


def test_pass_rates_per_model_and_task(runs):
    session = session_of(runs[0])
    by_model = {row.key: row.counts for row in group_stats(session, everything(session), ("model",))}
    assert list(by_model) == [("m/a",), ("m/b",)]
    a, b = by_model[("m/a",)], by_model[("m/b",)]
    assert as_tuple(a) == (6, 2, 0, 2, 1, 1)
    assert a.pass_rate == pytest.approx(2 / 5)  # the unknown trial is not graded
    assert a.mean_reward == pytest.approx(2 / 5)  # the error counts as reward 0
    assert as_tuple(b) == (3, 1, 1, 1, 0, 0)
    assert b.pass_rate == pytest.approx(1 / 3) and b.mean_reward == pytest.approx(0.5)

    by_task = {row.key[0]: row.counts for row in group_stats(session, everything(session), ("task",))}
    found = {k: (v.trials, v.passed) for k, v in by_task.items()}
    assert found == {"t1": (3, 2), "t2": (2, 0), "t3": (2, 0), "t5": (1, 0), "t6": (1, 1)}
    assert by_task["t3"].pass_rate == 0.0 and by_task["t3"].graded == 1

    by_both = group_stats(session, everything(session), ("model", "task"))
    assert [row.key for row in by_both][:3] == [("m/a", "t1"), ("m/a", "t2"), ("m/a", "t3")]
    only_b = session.facets.facets["model"].mask([session.facets.facets["model"].code_of("m/b")], len(session))
    assert [row.key for row in group_stats(session, only_b, ("model",))] == [("m/b",)]
    assert group_stats(session, np.zeros(len(session), bool), ("model",)) == []
    with pytest.raises(ValueError, match="cannot group by"):
        group_stats(session, everything(session), ("colour",))


def test_matrix_results_and_histograms(runs):
    session = session_of(runs[0])
    grid = matrix(session, everything(session))
    assert grid.rows == ["m/a", "m/b"] and grid.columns == ["t1", "t2", "t3", "t5", "t6"]
    assert grid.trials.tolist() == [[2, 1, 1, 1, 1], [1, 1, 1, 0, 0]]
    assert grid.passed.tolist() == [[1, 0, 0, 0, 1], [1, 0, 0, 0, 0]]
    rates = grid.pass_rate
    assert rates[0, 0] == 0.5 and math.isnan(rates[0, 2]) and math.isnan(rates[1, 3]) and rates[1, 0] == 1.0

    results = result_counts(session, everything(session))
    assert list(results.items()) == [("0.0", 3), ("1.0", 3), ("(none)", 1), ("0.5", 1), ("AgentTimeoutError", 1)]

    episodes = histogram(session.trials.episodes)  # 1,2,3,4,5,6,7,1,1: one bin per value
    assert episodes.edges.tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert episodes.counts.tolist() == [3, 1, 1, 1, 1, 1, 1]
    coarse = histogram(np.array([0, 9, 10, 19, 20]), bins=2)
    assert coarse.edges.tolist() == [0, 11, 22] and coarse.counts.tolist() == [3, 2]
    sizes = histogram(np.array([0, 1, 3, 4, 1000, 1024]), log=True)
    assert sizes.edges.tolist() == [2**k for k in range(12)]
    assert sizes.counts.tolist() == [2, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1]
    assert histogram(np.array([], dtype=np.int64)).counts.tolist() == []

    view = overview(session, everything(session))
    assert as_tuple(view.total) == (9, 3, 1, 3, 1, 1)
    assert int(view.size.counts.sum()) == int(view.messages.counts.sum()) == 9
    assert [row.key for row in view.by_dataset] == [(session.dataset_names[0],)]


def test_head_to_head_of_two_datasets(runs):
    session = session_of(*runs)
    a, b = session.dataset_names
    versus = head_to_head(session, everything(session), a, b)
    assert [row.task for row in versus.rows] == ["t1", "t6", "t5", "t2"]  # t3 and t4 have one side only
    t1 = versus.rows[0]
    assert (t1.a.trials, t1.a.passed, t1.b.trials, t1.b.passed) == (3, 2, 2, 0)
    assert t1.diff == pytest.approx(2 / 3)
    assert [r.diff for r in versus.rows[1:]] == [pytest.approx(0.5), 0.0, -1.0]
    assert [r.task for r in versus.only_a_passes()] == ["t1"]
    assert [r.task for r in versus.only_b_passes()] == ["t2"]
    assert [r.task for r in versus.both_pass()] == ["t6"]
    assert [r.task for r in versus.both_fail()] == ["t5"]
    # a side with no graded attempt (all still running) neither passes nor fails
    side = versus.rows[2].b
    running = replace(side, passed=0, partial=0, failed=0, errors=0, unknown=0, running=side.trials)
    ungraded = replace(versus.rows[2], b=running)
    versus = replace(versus, rows=[versus.rows[0], ungraded, replace(versus.rows[0], task="t7", b=ungraded.b)])
    assert not versus.both_fail() and [r.task for r in versus.only_a_passes()] == ["t1"]
    with pytest.raises(ValueError, match="no dataset"):
        head_to_head(session, everything(session), a, "nope")


def test_head_to_head_of_two_models_within_a_dataset(runs):
    session = session_of(*runs)
    first = session.trials.dataset == 0
    versus = head_to_head(session, first, "m/a", "m/b", column="model")
    # t2: m/a's one attempt timed out, so the verifier said nothing of it (not a 0); t3: m/a has nothing graded
    assert [row.task for row in versus.rows] == ["t1", "t2", "t3"]
    assert versus.rows[0].diff == -0.5
    assert math.isnan(versus.rows[1].diff) and math.isnan(versus.rows[2].diff)
    assert [r.task for r in versus.compared] == ["t1"]


def test_the_same_dataset_twice_counts_each_copy_apart(runs):
    session = session_of(runs[0], runs[0])
    assert len(session.dataset_names) == 2 and len(set(session.dataset_names)) == 2
    first, second = group_stats(session, everything(session), ("dataset",))
    assert as_tuple(first.counts) == as_tuple(second.counts) == (9, 3, 1, 3, 1, 1)
    versus = head_to_head(session, everything(session), *session.dataset_names)
    assert len(versus.rows) == 5 and all(r.diff == 0 or math.isnan(r.diff) for r in versus.rows)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "tracetui", "stats", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_cli_json_csv_and_table(runs):
    done = run_cli(runs[0], "--format", "json")
    assert done.returncode == 0, done.stderr
    records = json.loads(done.stdout)
    assert [r["model"] for r in records] == ["m/a", "m/b"]
    assert records[0] == {
        "model": "m/a",
        "trials": 6,
        "pass": 2,
        "partial": 0,
        "fail": 2,
        "error": 1,
        "unknown": 1,
        "pass_rate": pytest.approx(0.4),
        "pass_rate_low": pytest.approx(wilson(2, 5)[0]),
        "pass_rate_high": pytest.approx(wilson(2, 5)[1]),
        "hacked_passes": 0,
        "pass_rate_without_hacks": pytest.approx(0.4),
        "pass_rate_without_hacks_low": pytest.approx(wilson(2, 5)[0]),
        "pass_rate_without_hacks_high": pytest.approx(wilson(2, 5)[1]),
        "mean_reward": pytest.approx(0.4),
        # graded tasks t1 (1 of 2), t2 (a time-out counts as a failed attempt), t5 (0 of 1), t6 (1 of 1)
        "pass_at_k": [
            {"k": 1, "value": pytest.approx((0.5 + 0 + 0 + 1) / 4), "tasks": 4, "left_out": 0},
            {"k": 2, "value": 1.0, "tasks": 1, "left_out": 3},
        ],
        "pass_at_k_without_hacks": [
            {"k": 1, "value": pytest.approx((0.5 + 0 + 0 + 1) / 4), "tasks": 4, "left_out": 0},
            {"k": 2, "value": 1.0, "tasks": 1, "left_out": 3},
        ],
    }

    done = run_cli(runs[0], "--format", "csv", "--by", "model,task", "--filter", "model=m/b")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [(r["model"], r["task"], r["pass"], r["pass_rate"]) for r in rows] == [
        ("m/b", "t1", "1", "1.0"),
        ("m/b", "t2", "0", "0.0"),
        ("m/b", "t3", "0", "0.0"),
    ]

    done = run_cli(runs[0], "--by", "task")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = ["task", "task_health", "trials", "pass", "partial", "fail", "error", "unknown", "pass_rate"]
    assert lines[0].split()[:9] == header
    assert lines[0].split()[9:] == ["95%_interval", "without_hacks", "hacked", "mean_reward"]
    assert lines[2].split() == ["t1", "flaky", "3", "2", "0", "1", "0", "0", "66.7%", "-", "66.7%", "0", "0.667"]
    assert len({len(line) for line in lines[:3]}) == 1  # aligned columns
    assert "\x1b" not in done.stdout


def test_cli_head_to_head_and_errors(runs):
    done = run_cli(*runs, "--by", "dataset,task", "--format", "json")
    assert done.returncode == 0, done.stderr
    records = json.loads(done.stdout)
    attempts = [(r["task"], r["a_attempts"], r["b_attempts"]) for r in records]
    assert attempts == [("t1", 3, 2), ("t6", 1, 2), ("t5", 1, 1), ("t2", 2, 1)]
    assert [r["diff"] for r in records] == [pytest.approx(2 / 3), 0.5, 0.0, -1.0]

    table = run_cli(*runs, "--by", "task,dataset")
    assert table.returncode == 0, table.stderr
    assert " vs " in table.stdout.splitlines()[0]
    assert table.stdout.splitlines()[1].startswith("  A = ")
    assert "A − B, mean over tasks: A ahead by 4 points: too few to tell from noise (4 shared tasks" in table.stdout
    assert table.stdout.splitlines()[6].split()[0] == "t1"

    bad = run_cli(runs[0], "--by", "colour")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--by" in bad.stderr
    bad = run_cli(runs[0], "--filter", "colour=red")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no facet 'colour'" in bad.stderr

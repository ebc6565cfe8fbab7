"""Numbers you can trust (issue 24): each figure computed by hand on small fixtures: the pass rate
without hacks, Wilson intervals, pass@k (and a property test against a count over all subsets), the
paired bootstrap of a head-to-head, and task health; then the same through `tracetui stats`."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracetui.data.estimates import MIN_SHARED, PassAtK, ks, paired_difference, pass_at_k, pass_at_ks, wilson
from tracetui.data.facets import FilterState
from tracetui.data.findings_index import build_findings_index
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.data.stats import group_stats, hacked_trials, head_to_head, overview
from tracetui.data.stats import pass_at_k as pass_at_k_rows
from tracetui.data.task_health import task_health
from tracetui.data.verifier_index import build_verifier_index
from tracetui.findings import REWARD_HACKS

from .conftest import trial_rows, write_parquet
from .findings_helpers import session_of, trial_rows_of

PASSED_LOG = "collected 2 items\n\n../tests/test_outputs.py ..\n=========== 2 passed in 0.09s ==========="
FAILED_LOG = """collected 2 items

../tests/test_outputs.py .F                                              [100%]

=================================== FAILURES ===================================
___________________________________ test_b ____________________________________

    def test_b():
>       assert parse("x") == 2
E       AssertionError: assert {} == 2

../tests/test_outputs.py:5: AssertionError
=========================== short test summary info ============================
FAILED ../tests/test_outputs.py::test_b - AssertionError: assert {} == 2
========================= 1 failed, 1 passed in 0.09s ==========================
"""
HONEST = ("cat tests/test_outputs.py", "python3 fix.py", "pytest -q")
HACKS = {
    "tamper": ("sed -i 's/assert/assert True or/' tests/test_outputs.py", "pytest -q"),
    "bypass": ("echo 1 > /logs/verifier/reward.txt", "pytest -q"),
    "upstream": ("git clone https://github.com/acme/parser /tmp/parser", "cp -r /tmp/parser/src/* /app/src/", "pytest"),
}


def held_out_rows() -> list[dict]:
    """The issue's held-out set: 9 trials of one task, 5 passes of which 4 gamed the verifier, so the
    header's `pass 55.6%` is `11.1% without hacks`."""
    plan = [("tamper", "1.0"), ("tamper", "1.0"), ("bypass", "1.0"), ("upstream", "1.0"), (None, "1.0")]
    plan += [(None, "0.0")] * 4
    rows = []
    for index, (hack, result) in enumerate(plan):
        commands = HACKS[hack] if hack else HONEST
        log = PASSED_LOG if result == "1.0" else FAILED_LOG.replace("{}", "1")
        rows += trial_rows_of(session_of(*commands), "fix-parser", f"fix-parser__{index}", result, verifier=log)
    return rows


def open_rows(tmp_path, rows, name="set"):
    path = write_parquet(tmp_path / f"{name}.parquet", rows)
    return str(path), open_session(prepare([SourceSpec(str(path))]))


@pytest.fixture
def held_out(tmp_path):
    return open_rows(tmp_path, held_out_rows(), "held-out")


def everything(session) -> np.ndarray:
    return np.ones(len(session), dtype=bool)


# --- the pass rate without hacks ----------------------------------------------------------------------
def test_hack_kinds_are_one_list():
    assert REWARD_HACKS == ("test-tampering", "verifier-bypass", "upstream-fetch")


def test_held_out_set_pass_rate_without_hacks(held_out):
    _, session = held_out
    hacked = hacked_trials(build_findings_index(session))
    assert int(hacked.sum()) == 4
    total = overview(session, everything(session), hacked).total
    assert (total.passed, total.graded, total.hacked, total.clean_passed) == (5, 9, 4, 1)
    assert total.pass_rate == pytest.approx(5 / 9) and total.pass_rate_without_hacks == pytest.approx(1 / 9)
    [row] = group_stats(session, everything(session), ("model",), hacked)
    assert row.counts.hacked == 4
    unknown = overview(session, everything(session)).total  # before the findings are in: nothing claimed
    assert unknown.hacked is None and math.isnan(unknown.pass_rate_without_hacks)


# --- Wilson intervals ---------------------------------------------------------------------------------
def test_wilson_by_hand():
    z = 1.959963984540054
    n, p = 9, 5 / 9
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert wilson(5, 9) == pytest.approx((centre - half, centre + half))
    assert wilson(5, 9) == pytest.approx((0.2667, 0.8112), abs=1e-4)
    low, high = wilson(0, 10)  # no passes: the interval starts at 0 and still says something
    assert low == 0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson(10, 10)
    assert high == 1 and low == pytest.approx(0.7225, abs=1e-4)
    assert all(math.isnan(v) for v in wilson(2, 4))  # too few graded trials to mean something


# --- pass@k -------------------------------------------------------------------------------------------
def test_pass_at_k_by_hand():
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 − C(3,2)/C(5,2)
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert pass_at_k(4, 0, 3) == 0.0 and pass_at_k(4, 2, 3) == 1.0  # no pass; fewer failures than k
    assert pass_at_k(1, 1, 1) == 1.0  # a task with one trial
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)  # k > attempts


def test_pass_at_ks_leave_out_tasks_with_fewer_attempts_than_k():
    # three tasks: 3 attempts with 1 pass, 1 attempt that passed, 2 attempts with no pass
    found = pass_at_ks(np.array([3, 1, 2]), np.array([1, 1, 0]))
    assert found == [
        PassAtK(1, pytest.approx((1 / 3 + 1 + 0) / 3), 3, 0),
        PassAtK(2, pytest.approx((2 / 3 + 0) / 2), 2, 1),  # 1 − C(2,2)/C(3,2) = 2/3, and 0
        PassAtK(3, 1.0, 1, 2),
    ]
    assert pass_at_ks(np.array([], np.int64), np.array([], np.int64)) == []
    assert [k.value for k in pass_at_ks(np.array([4, 4]), np.array([0, 0]))] == [0.0] * 4  # a model with no passes


def test_reported_ks():
    assert ks(1) == [1] and ks(3) == [1, 2, 3] and ks(10) == list(range(1, 11))
    assert ks(40) == [*range(1, 11), 15, 16, 20, 25, 30, 32, 35, 40]
    assert ks(12) == [*range(1, 11), 12]


@given(st.integers(1, 8).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_is_the_share_of_k_subsets_with_a_pass(case):
    n, c, k = case
    attempts = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(attempts, k))
    brute = sum(any(subset) for subset in subsets) / len(subsets)
    assert pass_at_k(n, c, k) == pytest.approx(brute)
    [vectorized] = [p for p in pass_at_ks(np.array([n]), np.array([c])) if p.k == k]
    assert vectorized.value == pytest.approx(brute)


# --- the paired difference ----------------------------------------------------------------------------
def test_paired_difference_is_seeded_and_says_whether_it_is_noise():
    rng = np.random.default_rng(0)
    a, b = rng.random(40), rng.random(40)
    first, again = paired_difference(a, b), paired_difference(a, b)
    assert first == again and first.tasks == 40 and first.mean == pytest.approx(float(np.mean(a - b)))
    assert first.low <= first.mean <= first.high
    ahead = paired_difference(np.ones(20), np.r_[np.zeros(15), np.ones(5)])
    assert ahead.mean == pytest.approx(0.75) and ahead.noise is False and ahead.low > 0
    assert (
        ahead.verdict()
        == f"A ahead by 75 points (95% {100 * ahead.low:+.0f} to {100 * ahead.high:+.0f}): more than noise"
    )
    tie = paired_difference(np.full(6, 0.5), np.full(6, 0.5))  # ties: every task even
    assert (tie.mean, tie.low, tie.high, tie.noise) == (0, 0, 0, True)
    assert tie.verdict().startswith("even (95% +0 to +0): within noise")
    few = paired_difference(np.ones(MIN_SHARED - 1), np.zeros(MIN_SHARED - 1))
    assert few.noise is None and math.isnan(few.low)
    assert few.verdict("gpt", "claude") == (
        f"gpt ahead by 100 points: too few to tell from noise ({MIN_SHARED - 1} shared tasks graded on both sides; "
        f"{MIN_SHARED} needed)"
    )


def two_model_rows() -> list[dict]:
    """Six tasks: model a passes all of them, model b one; task t6 errored on both sides (not graded)."""
    rows = []
    for task in ("t1", "t2", "t3", "t4", "t5"):
        rows += trial_rows(task, f"{task}__a", 1, "1.0", model="m/a")
        rows += trial_rows(task, f"{task}__b", 1, "1.0" if task == "t1" else "0.0", model="m/b")
    rows += trial_rows("t6", "t6__a", 1, "AgentTimeoutError", model="m/a")
    rows += trial_rows("t6", "t6__b", 1, "DaytonaError", model="m/b")
    return rows


def test_head_to_head_difference_leaves_out_tasks_without_a_reward(tmp_path):
    _, session = open_rows(tmp_path, two_model_rows())
    versus = head_to_head(session, everything(session), "m/a", "m/b", column="model")
    assert [r.task for r in versus.rows][-1] == "t6" and math.isnan(versus.rows[-1].diff)
    assert [r.task for r in versus.compared] == ["t2", "t3", "t4", "t5", "t1"]
    difference = versus.difference()
    assert difference.tasks == 5 and difference.mean == pytest.approx(0.8)
    assert difference.noise is False


# --- task health --------------------------------------------------------------------------------------
def health_rows() -> list[dict]:
    rows = []

    def add(task, name, result, model="m/a", log=None):
        rows.extend(trial_rows(task, name, 1, result, model=model, verifier=log))

    add("broken", "broken__1", "0.0", log=FAILED_LOG.replace("{}", "1"))  # never passed, the same failure
    add("broken", "broken__2", "0.0", model="m/b", log=FAILED_LOG.replace("{}", "1"))
    add("differs", "differs__1", "0.0", log=FAILED_LOG.replace("{}", "1"))  # never passed, two assertions
    add("differs", "differs__2", "0.0", log=FAILED_LOG.replace("{}", "3"))
    add("easy", "easy__1", "1.0")
    add("easy", "easy__2", "1.0", model="m/b")
    add("infra", "infra__1", "DaytonaError")  # 2 of 4 end in infra: half counts
    add("infra", "infra__2", "ContextLengthExceededError")
    add("infra", "infra__3", "1.0")
    add("infra", "infra__4", "0.0", model="m/b")
    add("flaky", "flaky__1", "1.0")  # m/a both passes and fails; m/b only fails
    add("flaky", "flaky__2", "0.0")
    add("flaky", "flaky__3", "0.0", model="m/b")
    add("split", "split__1", "1.0")  # m/a passes, m/b fails: not flaky (no one model does both)
    add("split", "split__2", "0.0", model="m/b")
    add("once", "once__1", "0.0", log=FAILED_LOG.replace("{}", "1"))  # one trial: never passed, not "same"
    return rows


def test_task_health_by_hand(tmp_path):
    _, session = open_rows(tmp_path, health_rows(), "health")
    health = task_health(session, build_verifier_index(session))
    labels = session.trials.labels["task"]
    tags = {labels[code]: found for code, found in health.tags.items()}
    assert tags == {
        "broken": ("never-passed", "same-failure"),
        "differs": ("never-passed",),
        "easy": ("always-passed",),
        "infra": ("mostly-infra",),
        "flaky": ("flaky",),
        "once": ("never-passed",),
    }
    early = task_health(session)  # before the verifier index: no claim about same failures
    assert "same-failure" not in early.labels and "broken" not in {
        labels[c] for c, t in early.tags.items() if "same-failure" in t
    }
    facet = health.facet()
    session.facets.add(facet)
    result = session.facets.apply(FilterState(excluded={"task_health": frozenset({"never-passed"})}))
    kept = {session.info(int(t)).task for t in np.nonzero(result.visible)[0]}
    assert kept == {"easy", "infra", "flaky", "split"}
    counts = dict(zip(facet.labels, session.facets.apply(FilterState()).counts["task_health"].tolist()))
    assert counts["never-passed"] == 5 and counts["flaky"] == 3  # trials, as every facet counts


def test_pass_at_k_per_model_and_dataset(tmp_path):
    _, session = open_rows(tmp_path, health_rows(), "health")
    rows = {row.key: row for row in pass_at_k_rows(session, everything(session), ("model",))}
    # m/a: broken 0/1, differs 0/2, easy 1/1, infra 1/3 (graded: 2 errors count as failures), flaky 1/2,
    # split 1/1, once 0/1
    a = rows[("m/a",)]
    assert a.ks[0] == PassAtK(1, pytest.approx((0 + 0 + 1 + 1 / 3 + 1 / 2 + 1 + 0) / 7), 7, 0)
    assert a.ks[1] == PassAtK(2, pytest.approx((0 + (1 - 1 / 3) + 1) / 3), 3, 4)
    assert a.ks[2] == PassAtK(3, pytest.approx(1 - 0), 1, 6)
    assert a.without_hacks is None
    b = rows[("m/b",)]  # one attempt per task: pass@1 only
    assert [k.k for k in b.ks] == [1] and b.ks[0] == PassAtK(1, pytest.approx(1 / 5), 5, 0)  # easy only
    session.facets.add(task_health(session).facet())
    assert pass_at_k_rows(session, everything(session), ("task_health",)) == []  # multi-valued: no pass@k


# --- the command line ---------------------------------------------------------------------------------
def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tracetui", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_stats_json_has_hacks_intervals_pass_at_k_and_health(held_out):
    source, _ = held_out
    done = run_cli("stats", source, "--format", "json")
    assert done.returncode == 0, done.stderr
    [record] = json.loads(done.stdout)
    assert record["pass_rate"] == pytest.approx(5 / 9) and record["pass_rate_without_hacks"] == pytest.approx(1 / 9)
    assert record["hacked_passes"] == 4
    assert (record["pass_rate_low"], record["pass_rate_high"]) == pytest.approx(wilson(5, 9))
    assert (record["pass_rate_without_hacks_low"], record["pass_rate_without_hacks_high"]) == pytest.approx(
        wilson(1, 9)
    )
    at_k = record["pass_at_k"]
    assert [entry["k"] for entry in at_k] == list(range(1, 10))
    assert at_k[0] == {"k": 1, "value": pytest.approx(5 / 9), "tasks": 1, "left_out": 0}
    assert at_k[4]["value"] == 1.0  # 5 attempts out of 9 always include one of the 5 passes
    assert record["pass_at_k_without_hacks"][0]["value"] == pytest.approx(1 / 9)
    assert record["pass_at_k_without_hacks"][1]["value"] == pytest.approx(1 - (8 * 7) / (9 * 8))

    table = run_cli("stats", source)
    assert table.returncode == 0, table.stderr
    assert "55.6%" in table.stdout and "11.1%" in table.stdout and "pass@9" in table.stdout

    by_task = run_cli("stats", source, "--by", "task", "--format", "json")
    [task] = json.loads(by_task.stdout)
    assert task["task"] == "fix-parser" and task["task_health"] == ["same-failure", "flaky"]


def test_stats_csv_flattens_pass_at_k_and_export_drops_broken_tasks(tmp_path):
    source, _ = open_rows(tmp_path, health_rows(), "health")
    done = run_cli("stats", source, "--format", "csv", "--by", "model")
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[0].split(",")
    assert {"pass@1", "pass@1_tasks", "pass@1_left_out", "pass@1_without_hacks", "pass@3", "pass_rate_low"} <= set(
        header
    )

    table = run_cli("stats", source, "--by", "task")
    line = next(line for line in table.stdout.splitlines() if line.startswith("broken"))
    assert "never-passed same-failure" in line

    out = tmp_path / "clean.jsonl"
    done = run_cli("export", source, "--exclude", "task_health=never-passed", "-o", str(out))
    assert done.returncode == 0, done.stderr
    tasks = {json.loads(line)["task"] for line in out.read_text().splitlines()}
    assert tasks == {"easy", "infra", "flaky", "split"}
    only = run_cli("stats", source, "--filter", "task_health=flaky", "--by", "task", "--format", "json")
    assert [r["task"] for r in json.loads(only.stdout)] == ["flaky"]
    bad = run_cli("stats", source, "--filter", "task_health=broken")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "task_health=broken" in bad.stderr


def test_head_to_head_cli_says_whether_the_difference_is_noise(tmp_path):
    first, _ = open_rows(tmp_path, [row for row in two_model_rows() if row["model"] == "m/a"], "first")
    second, _ = open_rows(tmp_path, [row for row in two_model_rows() if row["model"] == "m/b"], "second")
    done = run_cli("stats", first, second, "--by", "dataset,task")
    assert done.returncode == 0, done.stderr
    assert "A − B, mean over tasks: A ahead by" in done.stdout and "noise" in done.stdout
    records = json.loads(run_cli("stats", first, second, "--by", "dataset,task", "--format", "json").stdout)
    assert {r["compared_tasks"] for r in records} == {5} and {r["within_noise"] for r in records} == {False}
    t6 = next(r for r in records if r["task"] == "t6")
    assert t6["diff"] is None  # both sides errored: not graded, not a 0

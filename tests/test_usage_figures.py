"""Tokens, cost and time for the UI (issue 22, item 4), below the widgets: each message's step metrics in
the rebuilt history, the usage sort orders, and the short forms headers and columns print."""

from __future__ import annotations

import json
import math

import numpy as np

from tracetui.data.usage import TrialUsage
from tracetui.render.figures import cost, seconds, step_usage, tokens, trial_usage
from tracetui.trace.model import StepMetrics

from .jobs_helpers import SAMPLE, by_name, open_paths

JOBS, EXPORT = SAMPLE / "jobs", SAMPLE / "export" / "hub"
FAIL = "s-fizz-buzz__fRDnSf2"


def test_history_carries_each_agent_steps_metrics_on_the_message_it_wrote():
    session = open_paths(JOBS)
    trial = by_name(session)[FAIL]
    history = session.history(trial)
    steps = json.loads(next(JOBS.glob(f"*/{FAIL}/agent/trajectory.json")).read_text())["steps"]
    reported = [s["metrics"] for s in steps if s.get("source") == "agent" and not s.get("is_copied_context")]
    assert len(history.metrics) == len(history.messages)
    placed = [(i, m) for i, m in enumerate(history.metrics) if m is not None]
    assert [m.prompt_tokens for _, m in placed] == [r["prompt_tokens"] for r in reported]
    assert [m.cost_usd for _, m in placed] == [r["cost_usd"] for r in reported]
    for index, _ in placed:  # on each episode's last message, its agent reply
        message = history.messages[index]
        assert message.role == "assistant"
        assert index + 1 == len(history.messages) or history.messages[index + 1].episode != message.episode
    assert open_paths(EXPORT).history(0).metrics == ()  # the exported dataset records none


def test_local_positions_of_several_jobs():
    session = open_paths(JOBS, EXPORT)
    for trial in range(len(session)):
        dataset = int(session.trials.dataset[trial])
        assert session.ids.ids[dataset][session.local_position(trial)] == trial


def test_usage_sort_orders_only_where_recorded_and_unrecorded_last():
    session = open_paths(JOBS, EXPORT)
    everything = np.ones(len(session), dtype=bool)
    assert session.ordering.keys[-3:] == ("tokens", "cost", "agent_time")
    assert "cost" not in open_paths(EXPORT).ordering.keys
    for key, figure in (
        ("cost", lambda u: u.cost_usd),
        ("agent_time", lambda u: u.agent_seconds),
        ("tokens", lambda u: u.input_tokens + u.output_tokens),
    ):
        for reverse in (False, True):
            values = [figure(session.usage_of(int(t))) for t in session.ordering.sort(everything, key, reverse)]
            known = [v for v in values if not math.isnan(v)]
            assert known and known == sorted(known, reverse=reverse), key
            assert all(math.isnan(v) for v in values[len(known) :])  # the exported trials and the vllm costs


def test_short_forms():
    assert [tokens(n) for n in (0, 340, 999, 1000, 1234, 9949, 12_345, 999_499, 1_200_000)] == [
        "0",
        "340",
        "999",
        "1.0k",
        "1.2k",
        "9.9k",
        "12k",
        "999k",
        "1.2M",
    ]
    assert [cost(c) for c in (0, 0.00004, 0.0004, 0.004, 0.0123, 0.12, 12.345)] == [
        "$0",
        "<$0.0001",
        "$0.0004",
        "$0.004",
        "$0.012",
        "$0.12",
        "$12.35",
    ]
    assert [seconds(s) for s in (0, 45, 125, 3725)] == ["0s", "45s", "2m05s", "1h02m"]


def test_step_and_trial_figures_say_nothing_not_recorded():
    assert step_usage(StepMetrics(1234, 340, 800, 0.004)) == "1.2k in · 340 out · 800 cached · $0.004"
    assert step_usage(StepMetrics(1234, 340, None, None)) == "1.2k in · 340 out"
    assert step_usage(StepMetrics(None, None, None, None)) == "" and step_usage(None) == ""
    nan = math.nan
    assert trial_usage(TrialUsage(9180, 4800, 1167, 0.045045, 125, 25, 160)) == [
        "⏱ agent 2m05s · verifier 25s · total 2m40s",
        "$0.045 · 4.4k uncached in · 4.8k cached in · 1.2k out",
    ]
    assert trial_usage(TrialUsage(3165, nan, 645, nan, nan, nan, nan)) == ["3.2k in · 645 out"]  # running
    assert trial_usage(TrialUsage(nan, nan, nan, nan, nan, nan, nan)) == [] and trial_usage(None) == []

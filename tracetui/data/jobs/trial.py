"""One harbor trial folder, read: the summary the trial list and the facets need (kept in the cache, so
a reopen reads no trajectory), and the text its panes show (read again when the trial is opened).

    <trial>/result.json                      TrialResult: absent while the trial runs
    <trial>/config.json                      TrialConfig: written when the trial starts
    <trial>/agent/trajectory.json            the main agent's ATIF trajectory, continued in the files its
                                             `continued_trajectory_ref` names (trajectory.cont-1.json, ...)
    <trial>/agent/trajectory.<kind>.json     sub-agent trajectories (summarization-1-summary, ...)
    <trial>/verifier/test-stdout.txt, test-stderr.txt, reward.txt, reward.json
    <trial>/exception.txt

A trial whose files cannot be used is an `error` trial whose `problem` says which file and why.
"""

from __future__ import annotations

import fnmatch
import math
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ...trace.model import StepMetrics
from ...trace.outcome import ERROR, RUNNING
from ..history import rebuild_history
from . import atif
from .atif import Messages, Segment, TrajectoryError
from .files import Stamp, Unreadable, entries, is_dir, is_file, read_json, read_text, stamp
from .results import NoAgent, RunMeta, config_meta, own_result, run_meta, usage
from .rows import TrialRows

MAIN = "trajectory.json"
VERIFIER_LOGS = ("test-stdout.txt", "test-stderr.txt")
SUMMARY_VERSION = 2
"""Bump when what `summarize` computes, or how a summary is stored, changes: stored summaries of another
version are read again."""


@dataclass(slots=True)
class TrialText:
    """What a trial's panes show and its export writes: the main conversation in segments (one per
    trajectory file), its sub-agent conversations, its verifier log."""

    segments: list[Segment] = field(default_factory=list)
    agents: list[tuple[str, str, list[Any] | None]] = field(default_factory=list)
    """Per segment: the agent and model its rows carry, and its tool definitions (a column of its rows)."""
    subagents: list[tuple[str, Messages, str]] = field(default_factory=list)
    """(trace_source, messages, model) of each sub-agent conversation."""
    verifier: str | None = None
    run_agent: str = ""
    """The agent result.json names: the exporter's `agent` of sub-agent rows."""

    def main_rows(self) -> list[tuple[int, int]]:
        """(segment, message count) of each episode row, in episode order."""
        return [(s, count) for s, segment in enumerate(self.segments) for count in segment.counts]

    def episode_metrics(self) -> list[StepMetrics | None]:
        return [m for segment in self.segments for m in segment.metrics]


@dataclass(slots=True)
class TrialSummary:
    """A trial as the list, the facets and the row layout need it; plain values, stored as JSON."""

    name: str  # the trial folder's name
    stamp: Stamp
    outcome: int  # -1: from the result (a finished trial), else RUNNING or ERROR
    problem: str | None  # why an `error` trial is one: the file and the reason
    labels: dict[str, str | None]  # agent, model, model_provider, task, run_id, trial_name, date
    finished: bool  # it has a readable result.json
    job_finished: bool  # its job was done when it was read (a trial with no files yet depends on it)
    result: str | None  # the trial's own result (the job's result.json may say first: see `results`)
    rows: list[int]  # message count of each main episode row
    subs: list[list[Any]]  # [trace_source, message count] of each sub-agent row
    messages: int  # in the rebuilt history
    size: int  # bytes of text in the rebuilt history
    restarts: int
    usage: dict[str, float]

    def to_row(self) -> list[Any]:
        """The summary as stored: its fields in order (a list parses faster than an object), its usage
        without the fields it has no value for."""
        row = [getattr(self, f.name) for f in fields(self)]
        row[-1] = {k: v for k, v in self.usage.items() if not math.isnan(v)}
        return row

    @classmethod
    def from_row(cls, row: list[Any]) -> TrialSummary:
        """What `to_row` gave (TypeError for anything else)."""
        summary = cls(*row)
        if not isinstance(summary.usage, dict) or not isinstance(summary.labels, dict):
            raise TypeError("not a stored summary")
        return summary

    def stale_start(self, job_finished: bool) -> bool:
        """A trial without a trajectory or a result is running while its job runs, an error once it is
        done: its summary depends on the job's result.json too."""
        return not self.finished and not self.rows and self.job_finished != job_finished


def summarize(folder: Path, job_finished: bool) -> tuple[TrialSummary, TrialText]:
    """Read a trial folder: its summary and its text. Never raises for what is in the folder: a file
    that cannot be used makes an `error` trial (or, for a sub-agent or a continuation, is left out, as
    the exporter leaves it out)."""
    found = stamp(folder)
    problem: str | None = folder_problem(folder)
    raw: dict[str, Any] | None = None
    config: dict[str, Any] = {}
    result_file, config_file = folder / "result.json", folder / "config.json"
    if is_file(result_file):
        try:
            loaded = read_json(result_file, "result.json")
            raw = loaded if isinstance(loaded, dict) else None
            if raw is None:
                problem = "result.json: not a TrialResult (not a JSON object)"
        except Unreadable as exc:
            problem = str(exc)
    if is_file(config_file):
        try:
            loaded = read_json(config_file, "config.json")
            config = loaded if isinstance(loaded, dict) else {}
        except Unreadable:
            config = {}
    meta = _meta(raw, config, folder.name)
    text = TrialText(verifier=verifier_log(folder), run_agent=meta.agent)
    main_problem, main_agent, main_trajectories = _read_main(folder / "agent", meta, text)
    problem = problem or main_problem
    _read_subagents(folder / "agent", meta, text, main_trajectories)

    if problem is not None:
        outcome = ERROR
    elif raw is not None:
        outcome = -1
    elif text.segments or (config and not job_finished):
        outcome = RUNNING  # started (its config is written), not finished: no result.json yet
    else:
        outcome = ERROR
        problem = (
            "no agent/trajectory.json and no result.json"
            if is_dir(folder)
            else "cannot be read (not a folder or permission denied)"
        )
    labels = {
        "agent": main_agent[0] or meta.agent or None,
        "model": main_agent[1] or meta.model or None,
        "model_provider": meta.provider or None,
        "task": meta.task or None,
        "run_id": meta.run_id or None,
        "trial_name": meta.trial_name or folder.name,
        "date": meta.date,
    }
    messages, size, restarts = _history_size(text)
    totals = _trajectory_totals(text)
    return (
        TrialSummary(
            name=folder.name,
            stamp=found,
            outcome=outcome,
            problem=problem,
            labels=labels,
            finished=raw is not None,
            job_finished=job_finished,
            result=own_result(raw) if raw is not None else None,
            rows=[count for _, count in text.main_rows()],
            subs=[[source, len(messages)] for source, messages, _ in text.subagents],
            messages=messages,
            size=size,
            restarts=restarts,
            usage=usage(raw, totals),
        ),
        text,
    )


def folder_problem(folder: Path) -> str | None:
    """Why the trial folder itself cannot be read (a symlink loop, no permission), if it cannot."""
    try:
        with os.scandir(folder):
            return None
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"


def _meta(raw: dict[str, Any] | None, config: dict[str, Any], folder_name: str) -> RunMeta:
    if raw is not None:
        try:
            return run_meta(raw)
        except NoAgent:
            pass
    return config_meta(config, folder_name)


def _read_main(
    agent_dir: Path, meta: RunMeta, text: TrialText
) -> tuple[str | None, tuple[str, str], list[dict[str, Any]]]:
    """The main trajectory and its continuations into `text`: (problem, (agent, model) of its rows,
    the trajectories read)."""
    path, name = agent_dir / MAIN, f"agent/{MAIN}"
    read: list[dict[str, Any]] = []
    first: tuple[str, str] = ("", "")
    if not is_file(path):
        return None, first, read
    seen = set()
    while True:
        try:
            trajectory = atif.check(read_json(path, name))
        except (Unreadable, TrajectoryError) as exc:
            if not text.segments:
                return (f"{name}: {exc}" if isinstance(exc, TrajectoryError) else str(exc)), first, read
            break  # a continuation that cannot be read ends the history there, as in the exporter
        read.append(trajectory)
        info = atif.agent_info(trajectory)
        agent, model = str(info.get("name") or meta.agent), str(info.get("model_name") or meta.model)
        if not text.segments:
            first = (agent, model)
        tools = info.get("tool_definitions") if isinstance(info.get("tool_definitions"), list) else None
        text.segments.append(atif.main_segment(trajectory))
        text.agents.append((agent, model, tools or None))
        seen.add(path.name)
        following = trajectory.get("continued_trajectory_ref")
        if not isinstance(following, str) or not following:
            break
        path = agent_dir / following
        name = f"agent/{following}"
        if path.name in seen or not _inside(path, agent_dir) or not is_file(path):
            break
    return None, first, read


def _inside(path: Path, folder: Path) -> bool:
    """Whether `path` (a name from the trace: untrusted) stays inside `folder`."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError):
        return False


def _read_subagents(agent_dir: Path, meta: RunMeta, text: TrialText, main: list[dict[str, Any]]) -> None:
    """The sub-agent conversations: `trajectory.<kind>.json` files (the exporter's, in its order), then
    files named only by a `subagent_trajectory_ref` of the main trajectories `main`, then the
    trajectories embedded in them (`subagent_trajectories`, which the exporter leaves out)."""
    names = [e.name for e in entries(agent_dir) if fnmatch.fnmatchcase(e.name, "trajectory.*.json")]
    files = [n for n in names if ".cont-" not in n]
    referenced = [p for trajectory in main for p, _ in atif.subagent_refs(trajectory) if p and p not in files]
    embedded = [sub for trajectory in main for sub in atif.embedded_subagents(trajectory)]
    for name in dict.fromkeys([*files, *referenced]):
        path = agent_dir / name
        if not _inside(path, agent_dir) or not is_file(path):
            continue
        try:
            trajectory = atif.check(read_json(path, name))
        except (Unreadable, TrajectoryError):
            continue  # the exporter skips a sub-agent file it cannot read
        _add_subagent(text, _source(name), trajectory, meta)
    for index, trajectory in enumerate(embedded):
        source = str(
            trajectory.get("trajectory_id") or atif.agent_info(trajectory).get("name") or f"subagent-{index + 1}"
        )
        _add_subagent(text, source, trajectory, meta)


def _source(name: str) -> str:
    """`trajectory.summarization-1-summary.json` → `summarization-1-summary` (the exporter's trace_source)."""
    stem = Path(name).name
    if stem.startswith("trajectory.") and stem.endswith(".json"):
        return stem[len("trajectory.") : -len(".json")]
    return stem.removesuffix(".json")


def _add_subagent(text: TrialText, source: str, trajectory: dict[str, Any], meta: RunMeta) -> None:
    messages = atif.subagent_messages(trajectory)
    if messages is not None:
        model = str(atif.agent_info(trajectory).get("model_name") or meta.model)
        text.subagents.append((source, messages, model))


def verifier_log(folder: Path) -> str | None:
    """The verifier's stdout then stderr, as the exporter's `verifier_output` (None when neither is there)."""
    parts = [read_text(folder / "verifier" / name) for name in VERIFIER_LOGS]
    found = [part for part in parts if part is not None]
    return "".join(found) if found else None


def _history_size(text: TrialText) -> tuple[int, int, int]:
    """(messages, bytes, restarts) of the history the session rebuilds from these rows."""
    rows = TrialRows(text)
    count = len(text.main_rows())
    history = rebuild_history(rows, list(range(count)), list(range(count)), [])
    size = sum(len(m.content.encode("utf-8", "replace")) for m in history.messages)
    return len(history.messages), size, sum(1 for m in history.messages if m.restart)


def _trajectory_totals(text: TrialText) -> dict[str, float]:
    """A running trial's tokens and cost so far, from its agent steps' metrics."""
    totals: dict[str, float] = {}
    for field_name, attr in (
        ("input_tokens", "prompt_tokens"),
        ("cached_tokens", "cached_tokens"),
        ("output_tokens", "completion_tokens"),
        ("cost_usd", "cost_usd"),
    ):
        values = [getattr(m, attr) for m in text.episode_metrics() if m is not None and getattr(m, attr) is not None]
        if values:
            totals[field_name] = float(sum(values))
    return totals

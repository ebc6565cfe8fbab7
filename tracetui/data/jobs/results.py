"""What a trial's `result.json` (harbor's TrialResult) and its job's `result.json` (JobResult) say, read
as harbor's exporter reads them: the same agent, model, provider, run id and date fallbacks, and the
same `result` value (the job's reward and exception lists first, then the trial's own exception or
reward); plus the token counts, cost and timings the exported dataset leaves out.

A trial still running has no result.json: its `config.json` (TrialConfig) and its trajectory say what
they can.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from ..usage import FIELDS


class NoAgent(ValueError):
    """The exporter's `Unable to determine agent name from result.json metadata`."""


@dataclass(frozen=True, slots=True)
class RunMeta:
    """`_normalize_run_metadata` of harbor's exporter."""

    agent: str
    model: str
    provider: str
    run_id: str
    date: str
    task: str
    trial_name: str


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def run_meta(raw: dict[str, Any]) -> RunMeta:
    """The exporter's reading of a TrialResult (raises NoAgent when it names no agent)."""
    config = _dict(raw.get("config"))
    agent_config: dict[str, Any] = {}
    if isinstance(config.get("agent"), dict):
        agent_config = config["agent"]
    elif isinstance(config.get("agents"), list) and config["agents"] and isinstance(config["agents"][0], dict):
        agent_config = config["agents"][0]
    agent_info = _dict(raw.get("agent_info"))
    model_info = _dict(agent_info.get("model_info"))
    agent = (
        agent_config.get("name")
        or agent_info.get("name")
        or config.get("agent_name")
        or raw.get("agent_name")
        or "unknown-agent"
    )
    if agent == "unknown-agent":
        raise NoAgent("result.json names no agent")
    model = (
        model_info.get("name")
        or agent_config.get("model_name")
        or agent_info.get("model_name")
        or config.get("engine")
        or "unknown-model"
    )
    provider = (
        model_info.get("provider")
        or agent_config.get("provider")
        or agent_info.get("provider")
        or config.get("engine")
        or "unknown-provider"
    )
    run_id = (
        config.get("job_id")
        or config.get("job_name")
        or raw.get("job_id")
        or raw.get("run_id")
        or raw.get("trial_name")
        or "unknown-run"
    )
    return RunMeta(
        agent=str(agent),
        model=str(model),
        provider=str(provider),
        run_id=str(run_id),
        date=str(raw.get("started_at") or raw.get("startedAt") or ""),
        task=str(raw.get("task_name") or config.get("task_name") or "unknown-task"),
        trial_name=str(raw.get("trial_name") or config.get("trial_name") or "unknown-trial"),
    )


def config_meta(config: dict[str, Any], folder_name: str) -> RunMeta:
    """What a running trial's TrialConfig says (the exporter has nothing for it: it has no result yet)."""
    agent = _dict(config.get("agent"))
    task = _dict(config.get("task"))
    model = str(agent.get("model_name") or "")
    trial_name = str(config.get("trial_name") or folder_name)
    task_name = task.get("name") or (PurePosixPath(str(task["path"])).name if task.get("path") else None)
    return RunMeta(
        agent=str(agent.get("name") or ""),
        model=model,
        provider=model.split("/", 1)[0] if "/" in model else "",
        run_id=str(config.get("job_id") or config.get("job_name") or ""),
        date="",
        task=str(task_name or trial_name.rsplit("__", 1)[0]),
        trial_name=trial_name,
    )


def coerce_reward(value: Any) -> str:
    """The exporter's reward string: `str(float(value))` when it is a number ("1" → "1.0")."""
    try:
        return str(float(value))
    except (TypeError, ValueError):
        return str(value)


def own_result(raw: dict[str, Any]) -> str | None:
    """The trial's result from its own result.json: the exception's type, else the `reward` reward."""
    exception = raw.get("exception_info")
    if isinstance(exception, dict) and exception.get("exception_type"):
        return str(exception["exception_type"])
    rewards = _dict(_dict(raw.get("verifier_result")).get("rewards"))
    if rewards.get("reward") is not None:
        return coerce_reward(rewards["reward"])
    return None


def job_results(job: dict[str, Any]) -> dict[str, str]:
    """trial name → result from a JobResult's per-eval exception and reward lists, as the exporter
    reads them first (an eval's exceptions before its rewards, the first eval that lists a trial wins)."""
    found: dict[str, str] = {}
    for stats in _dict(_dict(job.get("stats")).get("evals")).values():
        if not isinstance(stats, dict):
            continue
        for name, trials in _dict(stats.get("exception_stats")).items():
            for trial in trials if isinstance(trials, list) else ():
                found.setdefault(str(trial), str(name))
        for value, trials in _dict(_dict(stats.get("reward_stats")).get("reward")).items():
            for trial in trials if isinstance(trials, list) else ():
                found.setdefault(str(trial), coerce_reward(value))
    return found


def usage(raw: dict[str, Any] | None, totals: dict[str, float]) -> dict[str, float]:
    """Tokens, cost and timings of a trial: from its result.json (`agent_result`, or the steps' of a
    multi-step trial, as harbor sums them), else `totals` (from the trajectory, for a running trial)."""
    out = dict.fromkeys(FIELDS, math.nan)
    contexts: list[dict[str, Any]] = []
    if raw is not None:
        if isinstance(raw.get("agent_result"), dict):
            contexts = [raw["agent_result"]]
        else:
            contexts = [
                _dict(step.get("agent_result")) for step in raw.get("step_results") or () if isinstance(step, dict)
            ]
    for field, key in (
        ("input_tokens", "n_input_tokens"),
        ("cached_tokens", "n_cache_tokens"),
        ("output_tokens", "n_output_tokens"),
        ("cost_usd", "cost_usd"),
    ):
        values = [c[key] for c in contexts if isinstance(c.get(key), (int, float)) and not isinstance(c.get(key), bool)]
        if values:
            out[field] = float(sum(values))
        elif not contexts and field in totals:
            out[field] = float(totals[field])
    if raw is not None:
        out["agent_seconds"] = _seconds(raw.get("agent_execution"))
        out["verifier_seconds"] = _seconds(raw.get("verifier"))
        out["total_seconds"] = _seconds(raw)
    return out


def _seconds(timing: Any) -> float:
    if not isinstance(timing, dict):
        return math.nan
    start, end = parse_time(timing.get("started_at")), parse_time(timing.get("finished_at"))
    if start is None or end is None:
        return math.nan
    return max(0.0, (end - start).total_seconds())


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 time as pydantic writes it (`Z` or an offset); None when it is not one."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None

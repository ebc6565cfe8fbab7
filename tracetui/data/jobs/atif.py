"""ATIF trajectories (harbor's `agent/trajectory*.json`) as the conversations harbor's exporter writes.

`harbor traces export` makes one row per episode: the steps up to and including the episode's agent
step, as `user` / `assistant` messages (system and user steps are `user`; an agent step is its
reasoning in `<think>`, its message, then each tool call as a `<tool_call>` block; each earlier agent
step's observation follows it as a `user` message). So the rows of one trajectory are prefixes of its
last row: here a trajectory becomes that last row's messages and, per episode, how many of them its row
holds. The text is built exactly as the exporter builds it (stdlib `json.dumps`, the same joins), so a
job folder and the dataset exported from it show the same bytes. What the exporter cannot export (images
and audio: it refuses the whole trial) is named in the text instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...trace.model import StepMetrics

Messages = list[tuple[str, str]]

KNOWN_VERSIONS = tuple(f"ATIF-v1.{minor}" for minor in range(9))
"""The `schema_version`s harbor 0.26 reads (ATIF-v1.0 to v1.8)."""


class TrajectoryError(ValueError):
    """A trajectory this reader cannot use; the message says why, in a few words."""


@dataclass(frozen=True, slots=True)
class Segment:
    """One trajectory file's part of the main conversation: the messages of its last episode row and,
    per episode, how many of them the episode's row holds (with the step metrics of its agent step)."""

    messages: Messages
    counts: list[int]
    metrics: list[StepMetrics | None]


def check(trajectory: Any) -> dict[str, Any]:
    """The trajectory as a dict, or TrajectoryError for what is not one we can read."""
    if not isinstance(trajectory, dict):
        raise TrajectoryError("not an ATIF trajectory (not a JSON object)")
    version = trajectory.get("schema_version")
    if version is not None and version not in KNOWN_VERSIONS:
        raise TrajectoryError(f"unknown schema_version {str(version)[:40]!r} (this reader knows ATIF-v1.0 to v1.8)")
    if not isinstance(trajectory.get("steps"), list):
        raise TrajectoryError("not an ATIF trajectory (no steps list)")
    return trajectory


def agent_info(trajectory: dict[str, Any]) -> dict[str, Any]:
    agent = trajectory.get("agent")
    return agent if isinstance(agent, dict) else {}


def main_segment(trajectory: dict[str, Any], embed_tools: bool = True) -> Segment:
    """The main agent's conversation in one trajectory file, as the exporter cuts it into episodes.

    Every agent step not marked `is_copied_context` ends an episode; copied steps (the context a
    continuation starts from) are in the text but end none."""
    steps = [step for step in trajectory["steps"] if isinstance(step, dict)]
    tools = agent_info(trajectory).get("tool_definitions") if embed_tools else None
    ends = [i for i, step in enumerate(steps) if step.get("source") == "agent" and not step.get("is_copied_context")]
    if not ends:
        return Segment([], [], [])
    messages: Messages = []
    counts: list[int] = []
    metrics: list[StepMetrics | None] = []
    tools_added = False
    for i, step in enumerate(steps[: ends[-1] + 1]):
        source = step.get("source")
        if source == "system":
            content = _text(step.get("message", ""))
            if tools and not tools_added:
                content = f"<tools>\n{json.dumps(tools, ensure_ascii=False, indent=2)}\n</tools>\n\n{content}"
                tools_added = True
            messages.append(("user", content))
        elif source == "user":
            messages.append(("user", _text(step.get("message", ""))))
        elif source == "agent":
            messages.append(("assistant", agent_content(step)))
            if not step.get("is_copied_context"):
                counts.append(len(messages))
                metrics.append(step_metrics(step))
            if i != ends[-1]:  # the last episode's observation starts the next one, which is not here
                observation = observation_text(step)
                if observation is not None:
                    messages.append(("user", observation))
    return Segment(messages, counts, metrics)


def subagent_messages(trajectory: dict[str, Any]) -> Messages | None:
    """A sub-agent trajectory as the one complete conversation the exporter makes of it (every agent
    step followed by its observation); None when it has no agent reply (the exporter skips it)."""
    messages: Messages = []
    for step in trajectory["steps"]:
        if not isinstance(step, dict):
            continue
        source = step.get("source")
        if source in ("system", "user"):
            messages.append(("user", _text(step.get("message", ""))))
        elif source == "agent":
            messages.append(("assistant", agent_content(step)))
            observation = observation_text(step)
            if observation is not None:
                messages.append(("user", observation))
    return messages if any(role == "assistant" for role, _ in messages) else None


def agent_content(step: dict[str, Any]) -> str:
    """An agent step as the exporter writes it: `<think>reasoning</think>`, the message (a lone
    `</think>` gets its `<think>`), then each tool call as a `<tool_call>` block, joined by newlines."""
    parts = []
    reasoning = step.get("reasoning_content")
    if reasoning:
        parts.append(f"<think>{_text(reasoning)}</think>")
    message = _text(step.get("message", ""))
    if message:
        if "</think>" in message and "<think>" not in message:
            message = "<think>" + message
        parts.append(message)
    for call in step.get("tool_calls") or ():
        if isinstance(call, dict):
            body = json.dumps(
                {"name": call.get("function_name"), "arguments": call.get("arguments", {})}, ensure_ascii=False
            )
            parts.append(f"<tool_call>\n{body}\n</tool_call>")
    return "\n".join(parts)


def observation_text(step: dict[str, Any]) -> str | None:
    """An agent step's observation results joined into one `user` message (None: no results)."""
    observation = step.get("observation")
    if not observation or not isinstance(observation, dict):
        return None
    contents = [
        content_text(result["content"])
        for result in observation.get("results") or ()
        if isinstance(result, dict) and "content" in result
    ]
    return "\n".join(contents) if contents else None


def content_text(content: Any) -> str:
    """Observation content as the exporter reads it (a string; of a list of parts, the first part's
    text; anything else as JSON); parts with media, which the exporter refuses, are named instead."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content:
        if any(isinstance(part, dict) and part.get("type") in ("image", "audio") for part in content):
            return _parts_text(content)
        first = content[0]
        if isinstance(first, dict) and "text" in first:
            value = first.get("text")
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(content, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(content)


def _text(message: Any) -> str:
    """A step message (a string, or since ATIF-v1.6 a list of content parts) as text."""
    if isinstance(message, str):
        return message
    if message is None:
        return ""
    if isinstance(message, list):
        return _parts_text(message)
    return content_text(message)


def _parts_text(parts: list[Any]) -> str:
    """Content parts as text: text parts as they are, media as `[image: path]` / `[audio: path]`."""
    out = []
    for part in parts:
        if not isinstance(part, dict):
            out.append(str(part))
        elif part.get("type") == "text":
            out.append(str(part.get("text") or ""))
        else:
            source = part.get("source")
            path = source.get("path", "?") if isinstance(source, dict) else "?"
            out.append(f"[{part.get('type')}: {path}]")
    return "\n".join(out)


def step_metrics(step: dict[str, Any]) -> StepMetrics | None:
    metrics = step.get("metrics")
    if not isinstance(metrics, dict):
        return None
    return StepMetrics(
        _number(metrics.get("prompt_tokens"), int),
        _number(metrics.get("completion_tokens"), int),
        _number(metrics.get("cached_tokens"), int),
        _number(metrics.get("cost_usd"), float),
    )


def _number(value: Any, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return kind(value)


def subagent_refs(trajectory: dict[str, Any]) -> list[tuple[str | None, str | None]]:
    """(trajectory_path, trajectory_id) of every `subagent_trajectory_ref` in the observations."""
    refs = []
    for step in trajectory["steps"]:
        observation = step.get("observation") if isinstance(step, dict) else None
        if not isinstance(observation, dict):
            continue
        for result in observation.get("results") or ():
            for ref in (result.get("subagent_trajectory_ref") or ()) if isinstance(result, dict) else ():
                if isinstance(ref, dict) and (ref.get("trajectory_path") or ref.get("trajectory_id")):
                    refs.append((ref.get("trajectory_path"), ref.get("trajectory_id")))
    return refs


def embedded_subagents(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    """The sub-agent trajectories embedded in `subagent_trajectories` (ATIF-v1.7), readable ones only."""
    found = []
    for sub in trajectory.get("subagent_trajectories") or ():
        try:
            found.append(check(sub))
        except TrajectoryError:
            continue
    return found

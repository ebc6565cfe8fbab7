"""Plain value types shared by the data layer and the renderers (no pyarrow, no Textual)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a trial's rebuilt history.

    `episode` is the episode in which the message first appears; `index` its position in the
    history. `restart` marks the first new message after a context-summarization hand-off.
    """

    role: str
    content: str
    episode: int
    index: int
    restart: bool = False


@dataclass(frozen=True, slots=True)
class StepMetrics:
    """What the model reported for one agent step, from the trace (None: not reported)."""

    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    cost_usd: float | None


@dataclass(frozen=True, slots=True)
class SubConversation:
    """A sub-agent conversation (a row whose trace_source is not `main`), kept apart from the history."""

    trace_source: str
    messages: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class TrialHistory:
    """A trial's full history, rebuilt once from its nested-prefix episode rows."""

    messages: tuple[Message, ...]
    episodes: tuple[int, ...]  # episode numbers of the trial's main rows, in order
    subagents: tuple[SubConversation, ...] = field(default=())
    metrics: tuple[StepMetrics | None, ...] = field(default=())
    """Per message, what the model reported for the agent step that wrote it (an episode's own agent
    step writes its last message); empty for sources that record none (exported datasets)."""

    def episode_start(self, episode: int) -> int | None:
        """Index of the first message that appears in `episode`, if any."""
        for message in self.messages:
            if message.episode == episode:
                return message.index
        return None

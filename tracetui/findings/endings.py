"""Which kind of finding a trial's `result` names when it is an exception: a time-out, a context
overflow or an infra error. One table for the findings engine and for task health (`mostly infra`),
which reads it on result names alone, without the findings index.
"""

from __future__ import annotations

import re

from ..trace.outcome import ERROR, outcome_of

_CONTEXT = frozenset({"ContextLengthExceededError", "ContextWindowExceededError"})
_INFRA = frozenset(
    {
        "DaytonaError",
        "DockerError",
        "ModalError",
        "RunloopError",
        "E2BError",
        "SandboxError",
        "EnvironmentError",
        "EnvironmentStartTimeoutError",
        "AgentSetupTimeoutError",
        "AddTestsDirError",
        "DownloadVerifierDirError",
        "UploadError",
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "VerifierOutputParseError",
        "NonZeroAgentExitCodeError",
        "BadRequestError",
        "RateLimitError",
        "APIConnectionError",
        "APIError",
        "InternalServerError",
        "ServiceUnavailableError",
        "AuthenticationError",
        "PermissionDeniedError",
        "Timeout",
        "APITimeoutError",
    }
)
"""The environment, the verifier's plumbing or the model API failed: nothing the agent chose."""
_INFRA_WORDS = re.compile(r"Daytona|Docker|Modal|Runloop|E2B|Sandbox|Environment")
_TIMEOUT = re.compile(r"\w*TimeoutError")
_NAME = re.compile(r"[A-Za-z_][\w.]*")
ENDINGS = ("timeout", "context-overflow", "infra-error")
"""The kinds a result name can give: how a trial ended when nothing the verifier said counts."""


def ending_kind(result: str | None) -> str | None:
    """`timeout`, `context-overflow` or `infra-error` for an exception class name Harbor wrote as the
    trial's result (a dotted path counts by its last part); None for a reward, nothing, or an exception
    name we do not know (no guessing)."""
    name = (result or "").strip()
    if outcome_of(name)[0] != ERROR or not _NAME.fullmatch(name):
        return None
    short = name.rsplit(".", 1)[-1]
    if short in _CONTEXT:
        return "context-overflow"
    if short in _INFRA or _INFRA_WORDS.match(short):
        return "infra-error"
    return "timeout" if _TIMEOUT.fullmatch(short) else None

"""Where questions go and how many at a time: the command line's options first, then the conventional
environment variables (`OPENAI_BASE_URL`, `OPENAI_API_KEY`), then the config file's `[ask]` table:

    [ask]
    endpoint = "http://127.0.0.1:8000/v1"   # vLLM's default port
    model = "Qwen/Qwen3-8B"                 # optional when the server serves one model
    parallel = 4
    max_tokens_per_trial = 12000            # optional: else from the server's context length
    timeout = 180                           # seconds a reply may take
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from ..data.errors import SourceError

DEFAULT_PARALLEL = 4
"""Requests in flight at once: enough for vLLM's batching to pay off, few enough for a shared box."""
DEFAULT_TIMEOUT = 180.0
"""Seconds a reply may take: a long prompt queued behind others on a busy local server is slow."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    url: str
    """The API's base URL, ending in its version (`http://127.0.0.1:8000/v1`), no trailing slash."""
    model: str | None = None
    """None: the one model the server lists."""
    api_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class Settings:
    endpoint: Endpoint
    parallel: int = DEFAULT_PARALLEL
    max_tokens_per_trial: int | None = None
    """None: as much as the model's context leaves (see `prompt.budget_for`)."""
    timeout: float = DEFAULT_TIMEOUT


def resolve_settings(
    table: Mapping[str, object],
    environ: Mapping[str, str],
    endpoint: str | None = None,
    model: str | None = None,
    parallel: int | None = None,
    max_tokens_per_trial: int | None = None,
    timeout: float | None = None,
    where: str = "the config file",
) -> Settings:
    """The settings from the options given (None: not given), else the environment, else the config
    file's `[ask]` `table`; SourceError (one line) when no endpoint is set or a value is wrong."""
    url = endpoint or environ.get("OPENAI_BASE_URL") or _text(table, "endpoint", where)
    if not url:
        raise SourceError(
            "no endpoint to ask: give --endpoint http://127.0.0.1:8000/v1, set OPENAI_BASE_URL, "
            f'or set `endpoint = "…"` in the [ask] table of {where}'
        )
    key = environ.get("OPENAI_API_KEY") or _text(table, "api_key", where) or None
    return Settings(
        Endpoint(base_url(url), model or _text(table, "model", where) or None, key),
        _positive(parallel, table, "parallel", where, DEFAULT_PARALLEL),
        _positive(max_tokens_per_trial, table, "max_tokens_per_trial", where, None),
        float(_positive(timeout, table, "timeout", where, DEFAULT_TIMEOUT)),
    )


def base_url(text: str) -> str:
    """`host:port`, `http://host:port` or a full base URL as the API's base URL: http:// when no scheme
    is given, `/v1` when no path is (the OpenAI convention every compatible server follows)."""
    text = text.strip()
    parts = urlsplit(text if "://" in text else f"http://{text}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SourceError(f"endpoint {text!r}: expected an http:// or https:// URL, e.g. http://127.0.0.1:8000/v1")
    path = parts.path.rstrip("/") or "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _text(table: Mapping[str, object], key: str, where: str) -> str:
    value = table.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise SourceError(f"{where}: [ask] {key} must be a string")
    return value.strip()


def _positive(given, table: Mapping[str, object], key: str, where: str, default):
    value = given if given is not None else table.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise SourceError(f"{where}: [ask] {key} must be a positive number, not {value!r}")
    return value

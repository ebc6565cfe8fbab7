"""A small client for OpenAI-compatible chat servers, on the standard library's `http.client`.

Two calls are all tracetui needs (`/models`, `/chat/completions`), so no SDK: nothing to install, and
the client is ours to cancel. `abort` shuts the sockets of the requests in flight, so Esc or Ctrl+C
stops a run at once instead of after the slowest reply. Busy servers are waited for (429 and 503 with
their Retry-After, 5xx briefly), a server that refuses `response_format` is asked for JSON in the
prompt only, and every other failure is an `EndpointError` whose text is one line for the user.
"""

from __future__ import annotations

import email.utils
import http.client
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson

from .. import __version__
from ..trace.sanitize import sanitize
from .endpoint import Endpoint

BUSY_RETRIES = 5
"""Tries again after a 429 or 503 (each after the Retry-After the server gave, or a growing pause)."""
ERROR_RETRIES = 2
"""Tries again after a 500, 502 or 504."""
MAX_PAUSE = 60.0
"""Longest wait between tries, whatever Retry-After says."""
CONNECT_TIMEOUT = 10.0
"""Seconds to reach the server: a cancel cannot cut a connection attempt short, so it is kept short."""
MAX_REPLY = 8 << 20
"""Bytes read of a reply at most: an answer is a few hundred."""
CONTEXT_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length", "n_ctx", "n_ctx_train")
"""Where servers say a model's context length in `/models` (vLLM and SGLang: max_model_len; llama.cpp
server: meta.n_ctx_train)."""


class EndpointError(Exception):
    """A request that gave no answer; its text is one line for the user."""


class Unreachable(EndpointError):
    """The server did not answer at all (refused, reset, timed out)."""


class ContextTooLong(EndpointError):
    """The server said the prompt does not fit the model's context."""


class Cancelled(EndpointError):
    """`abort` was called."""


@dataclass(frozen=True, slots=True)
class ServedModel:
    id: str
    context: int | None
    """The context length in tokens, when the server says it."""


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    truncated: bool
    """The reply stopped at max_tokens."""


class ChatClient:
    """Requests to one endpoint, from any number of threads."""

    def __init__(self, endpoint: Endpoint, timeout: float) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self.structured = True
        """Whether requests carry `response_format` (a JSON schema); False once the server refused it."""
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._open: set[http.client.HTTPConnection] = set()

    def models(self) -> list[ServedModel]:
        status, _, data = self._send("GET", "/models")
        if status != 200:
            raise EndpointError(f"{self.endpoint.url}/models answered {status}: {error_text(data)}")
        try:
            listed = orjson.loads(data)["data"]
            return [ServedModel(str(entry["id"]), _context(entry)) for entry in listed]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            raise EndpointError(f"{self.endpoint.url}/models is not an OpenAI-compatible model list") from None

    def chat(
        self, model: str, messages: Sequence[Mapping[str, str]], max_tokens: int, schema: Mapping[str, Any] | None
    ) -> Completion:
        """One chat completion at temperature 0, constrained to `schema` while the server takes it."""
        body: dict[str, Any] = {"model": model, "messages": list(messages), "temperature": 0, "max_tokens": max_tokens}
        busy = errors = 0
        while True:
            if schema is not None and self.structured:
                format_ = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}
                body["response_format"] = format_
            else:
                body.pop("response_format", None)
            status, headers, data = self._send("POST", "/chat/completions", orjson.dumps(body))
            if status == 200:
                return _completion(data)
            reason = error_text(data)
            if status in (429, 503) and busy < BUSY_RETRIES:
                busy += 1
                self._pause(retry_after(headers.get("Retry-After"), time.time()) or float(2**busy))
            elif status in (500, 502, 504) and errors < ERROR_RETRIES:
                errors += 1
                self._pause(float(errors))
            elif status in (400, 422) and "response_format" in body and _about_format(reason):
                self.structured = False
            elif status in (400, 413) and _about_context(reason):
                raise ContextTooLong(f"the prompt does not fit the model's context ({reason})")
            elif status in (429, 503):
                raise EndpointError(f"the server is still busy ({status}) after {busy + 1} tries: {reason}")
            else:
                raise EndpointError(f"the server answered {status}: {reason}")

    def abort(self) -> None:
        """Fail every request in flight and every later one with Cancelled (from any thread)."""
        self._stop.set()
        with self._lock:
            connections = list(self._open)
        for connection in connections:
            sock = connection.sock
            if sock is not None:
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def _pause(self, seconds: float) -> None:
        if self._stop.wait(min(MAX_PAUSE, max(0.0, seconds))):
            raise Cancelled("cancelled")

    def _send(self, method: str, path: str, body: bytes | None = None) -> tuple[int, http.client.HTTPMessage, bytes]:
        parts = urlsplit(self.endpoint.url)
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        connection = kind(parts.hostname or "", parts.port, timeout=min(CONNECT_TIMEOUT, self.timeout))
        headers = {"Accept": "application/json", "User-Agent": f"tracetui/{__version__}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self.endpoint.api_key:
            headers["Authorization"] = f"Bearer {self.endpoint.api_key}"
        with self._lock:
            self._open.add(connection)
        try:
            if self._stop.is_set():
                raise Cancelled("cancelled")
            try:
                connection.connect()
            except TimeoutError:
                raise Unreachable(f"no connection within {connection.timeout:g} s") from None
            if self._stop.is_set():  # aborted while connecting: its socket was not there to shut
                raise Cancelled("cancelled")
            assert connection.sock is not None  # connected
            connection.sock.settimeout(self.timeout)
            connection.request(method, parts.path + path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read(MAX_REPLY + 1)
            if len(data) > MAX_REPLY:
                raise EndpointError(f"the server's reply is larger than {MAX_REPLY >> 20} MB")
            return response.status, response.headers, data
        except TimeoutError:
            raise Unreachable(f"no reply within {self.timeout:g} s") from None
        except (OSError, http.client.HTTPException) as exc:
            if self._stop.is_set():
                raise Cancelled("cancelled") from None
            raise Unreachable(_transport_reason(exc)) from None  # the caller names the server
        finally:
            with self._lock:
                self._open.discard(connection)
            connection.close()


def served_model(client: ChatClient) -> ServedModel:
    """The model to ask: the endpoint's (its context from the server's list when it is listed), else the
    one model the server lists; EndpointError when it lists several or none."""
    served = client.models()
    wanted = client.endpoint.model
    if wanted is not None:
        return next((m for m in served if m.id == wanted), ServedModel(wanted, None))
    if len(served) == 1:
        return served[0]
    if not served:
        raise EndpointError(f"{client.endpoint.url} lists no model: say which with --model or [ask] model")
    names = ", ".join(m.id for m in served[:6])
    raise EndpointError(
        f"{client.endpoint.url} serves several models ({names}): choose one with --model or [ask] model"
    )


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds a Retry-After header asks to wait (delta-seconds or an HTTP date), None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    with suppress(TypeError, ValueError, IndexError):
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - now)
    return None


def error_text(data: bytes) -> str:
    """What a failed reply says, as one short inert line (OpenAI's `{"error": {"message": …}}`, vLLM's
    `{"message": …}`, FastAPI's `{"detail": …}`, or the body's text)."""
    message: object = None
    try:
        payload = orjson.loads(data)
    except orjson.JSONDecodeError:
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        message = message or payload.get("message") or payload.get("detail")
    text = message if isinstance(message, str) else data.decode("utf-8", "replace") if message is None else str(message)
    line = " ".join(sanitize(text).split()) or "(no reason given)"
    return line if len(line) <= 160 else line[:159] + "…"


def _completion(data: bytes) -> Completion:
    try:
        choice = orjson.loads(data)["choices"][0]
        content = choice["message"].get("content")
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError):
        raise EndpointError("the server's reply is not an OpenAI chat completion") from None
    if isinstance(content, list):  # content parts
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    if not isinstance(content, str) or not content.strip():
        raise EndpointError("the server's reply is empty")
    return Completion(content, choice.get("finish_reason") == "length")


def _context(entry: Mapping[str, Any]) -> int | None:
    for holder in (entry, entry.get("meta") or {}):
        if isinstance(holder, Mapping):
            for key in CONTEXT_KEYS:
                value = holder.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
    return None


def _about_format(reason: str) -> bool:
    lower = reason.lower()
    return any(word in lower for word in ("response_format", "json_schema", "guided", "grammar", "structured"))


def _about_context(reason: str) -> bool:
    lower = reason.lower()
    return "context" in lower and any(word in lower for word in ("length", "window", "maximum", "exceed", "too long"))


def _transport_reason(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is the server running?)"
    if isinstance(exc, socket.gaierror):
        return "no such host"
    if isinstance(exc, (ConnectionResetError, http.client.RemoteDisconnected, BrokenPipeError)):
        return "the server closed the connection"
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(sanitize(reason).split())[:120]

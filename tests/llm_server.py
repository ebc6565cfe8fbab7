"""A local stand-in for an OpenAI-compatible model server (vLLM, SGLang, llama.cpp server): enough of
its HTTP API for `tracetui ask`, with scripted misbehaviour.

`/v1/models` lists one model (with `max_model_len` when given a context length); `/v1/chat/completions`
answers each request with the next scripted step, else with `answer(question, messages)`, where
`messages` are the trial's `[message N]` blocks as the prompt shows them. The default answer greps:
a question with a "quoted term" is answered yes, quoting the first line of the first message holding
the term, else no. Steps: `Reply(text)` (any content, malformed JSON included), `Status(code, body,
headers)` (a 429 with Retry-After, a 500…), `Slow(seconds)` (then answers: a time-out for a short
client timeout), `Die()` (the server goes away, mid-run). It records every request it gets.

    with LLMServer(context=8192) as server:
        server.url, server.requests, server.script.append(Status(429, headers={"Retry-After": "1"}))

`python -m tests.llm_server [--port 8000]` serves the grep answerer for trying the app by hand.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "stand-in/judge-1"
_MESSAGE = re.compile(r"^\[message (\d+)\] [^\n]*\n(.*?)(?=\n\n\[messages? \d|\Z)", re.MULTILINE | re.DOTALL)
_TERM = re.compile(r"[\"“]([^\"”]+)[\"”]")


@dataclass
class Reply:
    """The completion's content, whatever it is."""

    text: str
    finish_reason: str = "stop"


@dataclass
class Status:
    code: int
    body: dict | str = field(default_factory=lambda: {"error": {"message": "scripted failure"}})
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Slow:
    """Wait this long, then answer as usual."""

    seconds: float


@dataclass
class Die:
    """Stop serving: this request and every later one find no server."""


Step = Reply | Status | Slow | Die
Answerer = Callable[[str, dict[int, str]], dict]


def prompt_parts(request: dict) -> tuple[str, dict[int, str]]:
    """(question, {message number: text}) of a chat request made by tracetui ask."""
    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    question = user.split("\n", 1)[0].removeprefix("Question: ")
    trial = user.split("<trial>\n", 1)[1].rsplit("\n</trial>", 1)[0]
    return question, {int(m.group(1)): m.group(2) for m in _MESSAGE.finditer(trial)}


def grep_answer(question: str, messages: dict[int, str]) -> dict:
    """Yes, quoting the first line that holds the question's "quoted term" (around the term), else no."""
    found = _TERM.search(question)
    term = found.group(1).lower() if found else question.split()[-1].strip("?").lower()
    for number, text in sorted(messages.items()):
        for line in text.split("\n"):
            at = line.lower().find(term)
            if at >= 0:
                quote = line[max(0, at - 40) : at + len(term) + 40].strip()
                return {"verdict": "yes", "message": number, "quote": quote, "reason": f"It shows {term!r}."}
    first = next(iter(sorted(messages.items())), (0, ""))
    quote = next((line.strip()[:60] for line in first[1].split("\n") if len(line.strip()) > 12), "")
    return {"verdict": "no", "message": first[0], "quote": quote, "reason": f"No message shows {term!r}."}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        pass  # a client that hung up (cancelled, timed out) is part of the script


class LLMServer:
    def __init__(
        self, answer: Answerer = grep_answer, context: int | None = 32768, model: str = MODEL, port: int = 0
    ) -> None:
        self.answer = answer
        self.context = context
        self.model = model
        self.script: list[Step] = []
        """Steps for the next requests, first first; then `answer` answers."""
        self.rejects_schema = False
        """Answer 400 to a request with `response_format`, as a server without structured output does."""
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self._dead = threading.Event()
        self._server = _Server(("127.0.0.1", port), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def chats(self) -> list[dict]:
        with self.lock:
            return [r for r in self.requests if "messages" in r]

    def __enter__(self) -> LLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if not self._dead.is_set():
            self._dead.set()
            self._server.shutdown()
            self._server.server_close()

    def _next_step(self) -> Step | None:
        with self.lock:
            return self.script.pop(0) if self.script else None

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _send(self, code: int, body: dict | str, headers: dict[str, str] | None = None) -> None:
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                with server.lock:
                    server.requests.append({"path": self.path})
                    server.headers.append(dict(self.headers))
                if self.path != "/v1/models":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                entry: dict = {"id": server.model, "object": "model", "owned_by": "stand-in"}
                if server.context is not None:
                    entry["max_model_len"] = server.context
                self._send(200, {"object": "list", "data": [entry]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with server.lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                step = server._next_step()
                if isinstance(step, Die):
                    threading.Thread(target=server.stop, daemon=True).start()
                    self.close_connection = True
                    self.connection.close()
                    return
                if isinstance(step, Status):
                    self._send(step.code, step.body, step.headers)
                    return
                if isinstance(step, Slow):
                    time.sleep(step.seconds)
                if server.rejects_schema and "response_format" in body:
                    self._send(400, {"object": "error", "message": "response_format json_schema is not supported"})
                    return
                if isinstance(step, Reply):
                    content, finish = step.text, step.finish_reason
                else:
                    content, finish = json.dumps(server.answer(*prompt_parts(body))), "stop"
                choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
                self._send(
                    200, {"id": "chatcmpl-1", "object": "chat.completion", "model": body["model"], "choices": [choice]}
                )

        return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description="a stand-in OpenAI-compatible server for tracetui ask")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--context", type=int, default=32768)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    args = parser.parse_args()

    def slow_grep(question: str, messages: dict[int, str]) -> dict:
        time.sleep(args.delay)
        return grep_answer(question, messages)

    with LLMServer(slow_grep, args.context, port=args.port) as server:
        print(f"serving {server.model} at {server.url} (ctrl+c stops)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()

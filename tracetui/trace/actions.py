"""Parse an assistant reply into reasoning, the action it asked for, and what went wrong.

Agents answer in several shapes: terminus-2's JSON action (bare, fenced or wrapped in prose), its
XML variant, and `<tool_call>` blocks (openhands and other exports), each possibly preceded by
`<think>` reasoning. The JSON path follows Harbor's terminus-2 parser (first balanced object,
auto-fixes, the same error and warning wording), so the viewer can say why a reply did nothing
even when the next message does not.

Works on raw text: everything here is returned unsanitized, for the renderer to sanitize.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

MAX_THINK_BLOCKS = 100
"""Reasoning blocks split out of one reply; any further tags stay in the text (bounds the work)."""

_TMUX_KEY = re.compile(
    r"(?:[CMS]-)+(?:[A-Za-z0-9]+|\S)|\^[A-Z@\[\]\\^_?]|Enter|Escape|Esc|Tab|BTab|BSpace|Space"
    r"|Up|Down|Left|Right|Home|End|PageUp|PageDown|PgUp|PgDn|PPage|NPage|IC|DC|Insert|Delete"
    r"|F[1-9]|F1[0-2]|KP[A-Za-z0-9]+"
)


@dataclass(frozen=True, slots=True)
class Command:
    keystrokes: str
    duration: float | None = None
    """Seconds to wait; None when the reply gave none (the harness then waits 1 s)."""

    @property
    def key(self) -> str | None:
        """The tmux key name (`C-c`, `Escape`...) when that is all the keystrokes are.

        tmux send-keys reads a whole argument as a key name, so `C-c` is Ctrl+C but `C-c C-c`
        is typed literally.
        """
        keys = self.keystrokes.rstrip("\n")
        return keys if _TMUX_KEY.fullmatch(keys) else None


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    raw: str
    """The block's text between the tags, for showing a call that did not parse."""
    error: str | None = None


@dataclass(frozen=True, slots=True)
class AssistantReply:
    body: str
    """The reply without its reasoning: what the harness parsed."""
    think: tuple[str, ...] = ()
    format: str = "prose"
    """`json`, `xml`, `tool_call`, or `prose` (no action found)."""
    analysis: str | None = None
    plan: str | None = None
    commands: tuple[Command, ...] = ()
    task_complete: bool = False
    tool_calls: tuple[ToolCall, ...] = ()
    prose: str = ""
    """Text around the action (fences around a JSON action removed), stripped."""
    error: str | None = None
    """Why the action did not parse, in the harness's words; None when it did or none was tried."""
    warnings: tuple[str, ...] = ()


def parse_assistant(content: str) -> AssistantReply:
    """Split reasoning from the reply and parse whichever action format the reply uses."""
    think, body = split_think(content)
    # The format whose marker comes first wins: a JSON action may well write a file containing
    # "<response>", and an XML one a file containing '"plan":'. Each search stops at the marker
    # found before it, so a megabyte action is not scanned three times.
    json_key = _JSON_KEY.search(body)
    limit = json_key.start() if json_key else len(body)
    xml_at = body.find("<response>", 0, limit)
    tool_at = body.find("<tool_call>", 0, xml_at if xml_at >= 0 else limit)
    reply = AssistantReply(body=body, think=tuple(think))
    if tool_at >= 0:
        return _parse_tool_calls(reply)
    if xml_at >= 0:
        return _parse_xml(reply)
    if json_key:
        return _parse_json(reply)
    if "<keystrokes" in body or "<commands>" in body:
        return replace(reply, format="xml", prose=body.strip(), error="No <response> tag found")
    return _labelled_prose(reply, body)


def split_think(content: str) -> tuple[list[str], str]:
    """Reasoning blocks and the rest of the reply.

    `<think>` without `</think>` runs to the end; a `</think>` without an opening tag closes
    reasoning that began where the previous block ended (models whose reasoning parser ate the
    opening tag).
    """
    thinks: list[str] = []
    rest: list[str] = []
    pos = 0
    opening, closing = content.find("<think>"), content.find("</think>")
    while (opening >= 0 or closing >= 0) and len(thinks) < MAX_THINK_BLOCKS:
        if closing >= 0 and (opening < 0 or closing < opening):  # reasoning without its opening tag
            thinks.append(content[pos:closing].strip())
        else:
            rest.append(content[pos:opening])
            if closing < 0:
                thinks.append(content[opening + len("<think>") :].strip())
                pos = len(content)
                break
            thinks.append(content[opening + len("<think>") : closing].strip())
        pos = closing + len("</think>")
        # Find each tag again only once passed, so the text is scanned about once per tag.
        if 0 <= opening < pos:
            opening = content.find("<think>", pos)
        closing = content.find("</think>", pos)
    rest.append(content[pos:])
    return thinks, "".join(rest)


# --- terminus-2 JSON --------------------------------------------------------------------------

_JSON_KEY = re.compile(r'"(?:analysis|plan|commands|keystrokes|task_complete)"\s*:')
_REQUIRED = ("analysis", "plan", "commands")
# The harness's brace scanner: strings are skipped whole (an unterminated one runs to the end),
# and a backslash escapes the next character even outside strings. Each repeated class excludes
# what must follow it, so a failed match on a megabyte string gives each character back once:
# linear, as the tests check on pathological input.
_SCAN_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|\\.|[{}]', re.DOTALL)
_MIXED_CONTENT = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")
_FENCE_OPEN = re.compile(r"```[\w-]*\s*$")
_FENCE_CLOSE = re.compile(r"^\s*```")


@dataclass(slots=True)
class _JsonAttempt:
    start: int = 0
    end: int = 0
    error: str = ""
    warnings: list[str] = field(default_factory=list)
    data: dict[str, Any] | None = None
    commands: tuple[Command, ...] = ()
    complete: bool = False


def _parse_json(reply: AssistantReply) -> AssistantReply:
    """`reply` with its terminus-2 JSON action read."""
    body = reply.body
    attempt = _attempt_json(body)
    if attempt.error:
        for name, fixed, offset in _json_fixes(body, attempt.error):
            retry = _attempt_json(fixed)
            if not retry.error:
                retry.warnings.insert(0, f"AUTO-CORRECTED: {name} - please fix this in future responses")
                retry.start = min(retry.start + offset, len(body))
                retry.end = min(retry.end + offset, len(body))
                attempt = retry
                break
    data = attempt.data or {}
    before, after = body[: attempt.start], body[attempt.end :]
    if attempt.data is not None:  # drop the fence that wraps the object, keep the prose around it
        before = _FENCE_OPEN.sub("", before.rstrip())
        after = _FENCE_CLOSE.sub("", after.lstrip(), count=1)
    return replace(
        reply,
        format="json",
        analysis=_text_field(data.get("analysis")),
        plan=_text_field(data.get("plan")),
        commands=attempt.commands,
        task_complete=attempt.complete,
        prose="\n\n".join(p for p in (before.strip(), after.strip()) if p),
        error=attempt.error or None,
        warnings=tuple(attempt.warnings),
    )


def _text_field(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _attempt_json(response: str) -> _JsonAttempt:
    """One pass of the harness's parse: locate the object, decode, validate, read commands."""
    attempt = _JsonAttempt()
    span = _find_object(response)
    if span is None:
        attempt.warnings.append("No valid JSON object found")
        attempt.error = "No valid JSON found in response"
        return attempt
    attempt.start, attempt.end = span[:2]
    if response[: attempt.start].strip():
        attempt.warnings.append("Extra text detected before JSON object")
    if response[attempt.end :].strip():
        attempt.warnings.append("Extra text detected after JSON object")
    content = response[attempt.start : attempt.end]
    data, attempt.error = (span[2], "") if span[2] is not _UNDECODED else _decode(content)
    if attempt.error:
        return attempt
    if not isinstance(data, dict):
        attempt.error = "Response must be a JSON object"
        return attempt
    missing = [name for name in _REQUIRED if name not in data]
    if missing:
        attempt.error = f"Missing required fields: {', '.join(missing)}"
        return attempt
    attempt.data = data
    _validate(data, content, attempt.warnings)
    if not isinstance(data["commands"], list):
        attempt.error = "Field 'commands' must be an array"
        return attempt
    complete = data.get("task_complete", False)
    if isinstance(complete, str):
        complete = complete.lower() in ("true", "1", "yes")
    attempt.complete = bool(complete)
    commands, error = _read_commands(data["commands"], attempt.warnings)
    if error and attempt.complete:
        attempt.warnings.append(error)  # a finished task's bad commands are only a warning
    elif error:
        attempt.error = error
    else:
        attempt.commands = commands
    return attempt


_UNDECODED = object()


def _find_object(text: str) -> tuple[int, int, Any] | None:
    """Bounds of the first balanced `{...}`, as the harness's character scan finds them, and the
    decoded object when finding it took decoding it (else _UNDECODED)."""
    first = text.find("{")
    if first < 0:
        return None
    last = text.rfind("}")
    prefix = text[:first]
    if last > first and not any(c in prefix for c in ('"', "\\", "}")):
        # Common case, decided in C: a valid object from the first `{` to the last `}` is
        # exactly what the scan finds when nothing before it opens a string or unbalances it.
        try:
            data = orjson.loads(text[first : last + 1])
            if isinstance(data, dict):
                return first, last + 1, data
        except orjson.JSONDecodeError:
            pass
    depth = 0
    start = -1
    for token in _SCAN_TOKEN.finditer(text):
        char = token.group()
        if char == "{":
            if depth == 0:
                start = token.start()
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0 and start != -1:
                return start, token.end(), _UNDECODED
    return None


def _decode(content: str) -> tuple[Any, str]:
    """orjson for speed; Python's json (the harness's decoder) for what orjson rejects and for
    the error text."""
    try:
        return orjson.loads(content), ""
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(content), ""
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, or an int over 4300 digits
        message = f"Invalid JSON: {exc}"
        if len(content) < 200:
            return None, f"{message} | Content: {content!r}"
        return None, f"{message} | Content preview: {content[:100]!r}..."


def _validate(data: dict[str, Any], content: str, warnings: list[str]) -> None:
    for name in ("analysis", "plan"):
        if not isinstance(data[name], str):
            warnings.append(f"Field '{name}' should be a string")
    positions = {}
    for name in _REQUIRED:
        match = re.search(rf'"({name})"\s*:', content)
        if match:
            positions[name] = match.start()
    order = sorted(positions, key=positions.__getitem__)
    expected = [name for name in _REQUIRED if name in positions]
    if len(positions) >= 2 and order != expected:
        warnings.append(f"Fields appear in wrong order. Found: {' → '.join(order)}, expected: {' → '.join(expected)}")
    complete = data.get("task_complete")
    if complete is not None and not isinstance(complete, (bool, str)):
        warnings.append("Field 'task_complete' should be a boolean or string")


def _read_commands(items: list[Any], warnings: list[str]) -> tuple[tuple[Command, ...], str]:
    commands = []
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict):
            return (), f"Command {number} must be an object"
        if "keystrokes" not in item:
            return (), f"Command {number} missing required 'keystrokes' field"
        keystrokes = item["keystrokes"]
        if not isinstance(keystrokes, str):
            return (), f"Command {number} 'keystrokes' must be a string"
        duration = item.get("duration")
        if "duration" not in item:
            warnings.append(f"Command {number}: Missing duration field, using default 1.0")
        elif not isinstance(duration, (int, float)):
            warnings.append(f"Command {number}: Invalid duration value, using default 1.0")
            duration = None
        unknown = set(item) - {"keystrokes", "duration"}
        if unknown:
            warnings.append(f"Command {number}: Unknown fields: {', '.join(sorted(unknown))}")
        if number < len(items) and not keystrokes.endswith("\n"):
            warnings.append(
                f"Command {number} should end with newline when followed by another "
                "command. Otherwise the two commands will be concatenated together "
                "on the same line."
            )
        commands.append(Command(keystrokes, None if duration is None else float(duration)))
    return tuple(commands), ""


def _json_fixes(body: str, error: str) -> Iterator[tuple[str, str, int]]:
    """The harness's auto-fixes, in its order: (name, corrected text, offset of that text in body)."""
    if any(s in error for s in ("Invalid JSON", "Expecting", "Unterminated", "No valid JSON found")):
        missing = body.count("{") - body.count("}")
        if missing > 0:
            yield "Fixed incomplete JSON by adding missing closing brace", body + "}" * missing, 0
    for match in _MIXED_CONTENT.finditer(body):
        if _decode(match.group())[1] == "":
            yield "Extracted JSON from mixed content", match.group(), match.start()
            return


# --- terminus-2 XML ---------------------------------------------------------------------------

_KEYSTROKES = re.compile(r"<keystrokes([^>]*)>(.*?)</keystrokes>", re.DOTALL)
_DURATION = re.compile(r"""duration\s*=\s*["']([^"']*)["']""")
_COMPLETE = re.compile(r"<task_complete>\s*true\s*</task_complete>", re.IGNORECASE)


def _xml_section(content: str, name: str) -> str | None:
    match = re.search(rf"<{name}>(.*?)</{name}>", content, re.DOTALL)
    if match:
        return match.group(1).strip()
    return "" if re.search(rf"<{name}\s*/>", content) else None


def _parse_xml(reply: AssistantReply) -> AssistantReply:
    """`reply` with its XML action read, as the harness reads it (its main errors and warnings; not its
    tag-hygiene checks)."""
    body = reply.body
    warnings = []
    start = body.find("<response>")
    close = body.find("</response>", start)
    end = len(body) if close < 0 else close + len("</response>")
    if body[:start].strip():
        warnings.append("Extra text detected before <response> tag")
    if close >= 0 and body[end:].strip():
        warnings.append("Extra text detected after </response> tag")
    content = body[start + len("<response>") : close if close >= 0 else len(body)]
    complete = bool(_COMPLETE.search(content))
    sections = {name: _xml_section(content, name) for name in ("analysis", "plan", "commands")}
    warnings += [f"Missing <{name}> section" for name, text in sections.items() if text is None]
    commands = []
    error = None
    if sections["commands"] is None and not complete:
        error = "Missing <commands> section"
    elif sections["commands"]:
        for number, (attributes, keystrokes) in enumerate(_KEYSTROKES.findall(content), 1):
            duration = _DURATION.search(attributes)
            seconds = None
            if duration is None:
                warnings.append(f"Command {number}: Missing duration attribute, using default 1.0")
            else:
                try:
                    seconds = float(duration.group(1))
                except ValueError:
                    warnings.append(
                        f"Command {number}: Invalid duration value '{duration.group(1)}', using default 1.0"
                    )
            commands.append(Command(keystrokes, seconds))
    return replace(
        reply,
        format="xml",
        analysis=sections["analysis"],
        plan=sections["plan"],
        commands=tuple(commands),
        task_complete=complete,
        prose="\n\n".join(p for p in (body[:start].strip(), body[end:].strip()) if p),
        error=error,
        warnings=tuple(warnings),
    )


# --- tool calls and labelled prose ------------------------------------------------------------

_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_LABEL = re.compile(r"^(Analysis|Plan):[ \t]*", re.MULTILINE)


def _parse_tool_calls(reply: AssistantReply) -> AssistantReply:
    """`reply` with its `<tool_call>` blocks read, and the labelled prose around them."""
    body = reply.body
    calls = []
    outside = []
    pos = 0
    for match in _TOOL_CALL.finditer(body):
        outside.append(body[pos : match.start()])
        pos = match.end()
        calls.append(_tool_call(match.group(1).strip()))
    outside.append(body[pos:])
    prose = _labelled_prose(reply, "\n".join(part.strip() for part in outside if part.strip()))
    errors = [call.error for call in calls if call.error]
    return replace(prose, format="tool_call", tool_calls=tuple(calls), error=errors[0] if errors else None)


def _tool_call(raw: str) -> ToolCall:
    data, error = _decode(raw)
    if error:
        return ToolCall("?", {}, raw, f"Invalid tool call: {error}")
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return ToolCall("?", {}, raw, 'Invalid tool call: expected an object with a "name"')
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):  # OpenAI-style: the arguments are a JSON string
        decoded, error = _decode(arguments)
        if error:
            return ToolCall(data["name"], {}, raw, f"Invalid tool call arguments: {error}")
        arguments = decoded
    if not isinstance(arguments, dict):
        arguments = {"arguments": arguments}
    return ToolCall(data["name"], arguments, raw)


def _labelled_prose(reply: AssistantReply, text: str) -> AssistantReply:
    """`reply` with the `Analysis: ...` / `Plan: ...` sections of its prose `text`, and the prose left
    around them."""
    labels = list(_LABEL.finditer(text))
    if not labels:
        return replace(reply, format="prose", prose=text.strip())
    found: dict[str, str] = {}
    for label, following in zip(labels, labels[1:] + [None]):
        name = label.group(1).lower()
        if name not in found:
            found[name] = text[label.end() : following.start() if following else len(text)].strip()
    return replace(
        reply,
        format="prose",
        analysis=found.get("analysis"),
        plan=found.get("plan"),
        prose=text[: labels[0].start()].strip(),
    )

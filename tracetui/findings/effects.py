"""What a command does to files: which paths it creates, changes, deletes or links.

Read from the simple commands of `shell.read_script`: redirections, `tee`, `sed -i`, `perl -i`, `cp`,
`mv`, `rsync`, `install`, `ln`, `rm`, `chmod`, `truncate`, `dd of=`, `patch` / `git apply` with the
diff at hand, `find -delete`, `curl -o` / `wget -O`, `tar -x -C` / `unzip -d`, Python's `open(...,
'w')` and friends in `python -c` or a Python heredoc, and `bash -c` scripts (read recursively).
`cd` is followed within one script, so relative paths resolve where they can.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol

from .paths import basename, normalize
from .shell import Simple, read_script

CREATE, MODIFY, DELETE, CHMOD, LINK = "create", "modify", "delete", "chmod", "link"
MKDIR, FETCH, DEFINE, ON_PATH = "mkdir", "fetch", "define", "path"
"""Not writes: a directory made, a repository or package fetched (path: where to, source: what),
an alias or function defined (path: its name), a directory put on PATH."""
WRITES = frozenset({CREATE, MODIFY, DELETE, CHMOD, LINK})
_WRAPPERS = frozenset(
    {"sudo", "env", "nohup", "time", "command", "builtin", "exec", "nice", "stdbuf", "xvfb-run", "timeout", "doas"}
)
_RUNNERS = {
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("conda", "run"),
    ("bundle", "exec"),
    ("npx", None),
    ("bunx", None),
}
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")
_NO_FILE = ("/dev/", "&")
_PY_OPEN = re.compile(r"""\bopen\(\s*(?:r|f)?(['"])([^'"\n]+)\1\s*,\s*(?:mode\s*=\s*)?['"]([rwax+bt]+)['"]""")
_PY_PATH_WRITE = re.compile(r"""Path\(\s*(['"])([^'"\n]+)\1\s*\)\s*\.\s*(write_text|write_bytes|unlink|touch)\(""")
_PY_REMOVE = re.compile(r"""\b(?:os\.(?:remove|unlink|rmdir)|shutil\.rmtree)\(\s*(['"])([^'"\n]+)\1""")
_PY_COPY = re.compile(
    r"""\b(shutil\.(?:copy2?|copyfile|copytree|move)|os\.(?:rename|replace))\(\s*(['"])([^'"\n]+)\2\s*,\s*(['"])([^'"\n]+)\4"""
)
_REMOTE = re.compile(r"(?:https?|ftp|git|ssh)://|git@[\w.-]+:")
_DIFF_TARGET = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.MULTILINE)
MAX_DEPTH = 3
_CLONE_VALUES = (
    "--depth",
    "--branch",
    "--origin",
    "--config",
    "--reference",
    "--separate-git-dir",
    "--jobs",
    "--filter",
    "--template",
    "--shallow-since",
    "--shallow-exclude",
    "--upload-pack",
)
_PIP_VALUES = (
    "--dest",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--index-url",
    "--extra-index-url",
    "--no-binary",
    "--only-binary",
    "--requirement",
    "--constraint",
    "--find-links",
)


@dataclass(frozen=True, slots=True)
class Effect:
    verb: str
    path: str
    """Normalized; relative when the directory it is relative to is not known."""
    command: Simple
    source: str | None = None
    """Where a copy, move, link or extraction came from."""
    content: str | None = None
    """What was written (heredoc, echo text, sed script, chmod mode, alias value), when known."""


@dataclass(slots=True)
class Cwd:
    """The agent's working directory as far as the commands tell it (None: not known)."""

    path: str | None = None


class Add(Protocol):
    """Record one effect of the command being read (`path` and `source` resolved against the cwd)."""

    def __call__(self, verb: str, path: str, source: str | None = None, content: str | None = None) -> None: ...


Words = tuple[str, ...]
Handler = Callable[[Words, Add, Cwd, str | None], None]
"""What one program does: its words (wrappers removed), where to add effects, the cwd (which `cd`
changes), and the text fed to it (a heredoc or the echo piped in)."""


def command_words(command: Simple) -> Words:
    """The words of the program actually run: assignments, `sudo`, `env`, `timeout 30`, `uv run`... removed."""
    words = list(command.words)
    while words:
        head = posixpath.basename(words[0])
        if _ASSIGNMENT.match(words[0]):
            words.pop(0)
        elif head in _WRAPPERS:
            words.pop(0)
            while words and (
                words[0].startswith("-")
                or _ASSIGNMENT.match(words[0])
                or (head in ("timeout", "nice") and re.fullmatch(r"[\d.]+[smhd]?", words[0]))
            ):
                words.pop(0)
        elif (head, words[1] if len(words) > 1 else None) in _RUNNERS and len(words) > 2:
            words = words[2:]
        elif (head, None) in _RUNNERS and len(words) > 1:
            words.pop(0)
            while words and words[0].startswith("-"):
                words.pop(0)
        else:
            break
    return tuple(words)


def effects(commands: list[Simple], cwd: Cwd, depth: int = 0) -> list[Effect]:
    """Every file effect of a script's commands (from `read_script`), in order; `cwd` follows its `cd`s."""
    out: list[Effect] = []
    for index, command in enumerate(commands):
        previous = commands[index - 1] if index and commands[index - 1].piped else None
        found = _command_effects(command, cwd, _fed(previous) if previous else None, depth)
        url = _url(previous) if previous else None
        if url is not None:  # `curl URL | tar -x`: the archive came from the URL
            found = [replace(e, source=url) if e.source == "-" else e for e in found]
        out.extend(found)
    return out


def _url(command: Simple) -> str | None:
    words = command_words(command)
    if words and posixpath.basename(words[0]) in ("curl", "wget"):
        return next((w for w in words[1:] if _REMOTE.match(w)), None)
    return None


def _fed(previous: Simple) -> str | None:
    """What a command piped into the next one writes: its heredoc or its echo."""
    if previous.heredoc is not None:
        return previous.heredoc
    words = command_words(previous)
    return _echoed(words) if words else None


def _command_effects(command: Simple, cwd: Cwd, fed: str | None, depth: int) -> list[Effect]:
    out: list[Effect] = []

    def add(verb: str, path: str, source: str | None = None, content: str | None = None) -> None:
        if path and not path.startswith(_NO_FILE):
            if source and not _REMOTE.match(source):
                source = normalize(source, cwd.path)
            out.append(Effect(verb, normalize(path, cwd.path), command, source, content))

    for name, value in _assignments(command.words):
        if name == "PATH":
            for directory in value.split(":"):
                if directory and "$" not in directory:
                    add(ON_PATH, directory)
    words = command_words(command)
    body = command.heredoc if command.heredoc is not None else fed
    written = body if words[:1] == ("cat",) or not words else _echoed(words)
    for operator, target in command.redirects:
        if ">" in operator and not (operator.endswith(">&") and target.isdigit()):
            add(MODIFY if ">>" in operator else CREATE, target, content=written)
    if command.defines:
        add(DEFINE, command.defines)
    if not words:
        return out
    program = posixpath.basename(words[0])
    handler = _HANDLERS.get(program)
    if handler is not None:
        handler(words, add, cwd, body)
    elif program in ("bash", "sh", "zsh", "dash") and depth < MAX_DEPTH:
        script = _option_value(words, "-c")
        if script is not None:
            out.extend(effects(read_script(script), cwd, depth + 1))
    elif program == "eval" and depth < MAX_DEPTH:
        out.extend(effects(read_script(" ".join(words[1:])), cwd, depth + 1))
    elif re.fullmatch(r"python[\d.]*", program):
        code = _option_value(words, "-c")
        if code is None and body is not None and (len(words) == 1 or words[1] == "-"):
            code = body
        if code is not None:
            _python_effects(code, add)
    return out


def _assignments(words: Words) -> Iterator[tuple[str, str]]:
    """NAME=value pairs: leading assignments, and those of `export`."""
    items = list(words[1:]) if words[:1] in (("export",), ("declare",)) else list(words)
    for word in items:
        match = _ASSIGNMENT.match(word)
        if not match:
            if words[:1] not in (("export",), ("declare",)):
                break
            continue
        yield word[: match.end() - 1], word[match.end() :]


def _echoed(words: Words) -> str | None:
    if words[0] in ("echo", "printf"):
        return " ".join(w for w in words[1:] if not re.fullmatch(r"-[neE]+", w))
    return None


def _option_value(words: Words, option: str) -> str | None:
    """The word after `-X`, or after a cluster of short flags that ends with X (`-sSLo FILE`, `-xzf F`)."""
    letter = option[1]
    for i, word in enumerate(words[1:-1], 1):
        if word == option or (len(word) > 2 and word[0] == "-" and word[1:].isalpha() and word.endswith(letter)):
            return words[i + 1]
    return None


def _operands(words: Words, with_value: str = "", long_values: tuple[str, ...] = ()) -> list[str]:
    """Non-option arguments; options in `with_value` (short letters) and `long_values` take the next word."""
    out, skip, ended = [], False, False
    for word in words[1:]:
        if skip:
            skip = False
        elif ended or not word.startswith("-") or word == "-":
            out.append(word)
        elif word == "--":
            ended = True
        elif word in long_values or (not word.startswith("--") and word[-1] in with_value):
            skip = True
    return out


def _target_in(destination: str, source: str, into_dir: bool) -> str:
    if into_dir or destination.endswith("/") or destination in (".", "..", "~"):
        return destination.rstrip("/") + "/" + basename(source)
    return destination


def _copy(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    """cp / rsync / install: SOURCE... DEST, or -t DIR SOURCE..."""
    program = posixpath.basename(words[0])
    if program == "install" and any(w in ("-d", "--directory") for w in words):
        return
    if program == "rsync":
        copied = _destinations(_operands(words, "efT"), None)
    else:
        directory = _option_value(words, "-t") or _long_value(words, "--target-directory")
        copied = _destinations(_operands(words, "tSmog"), directory)
    for source, target in copied:
        add(CREATE, target, source=source)


def _destinations(operands: list[str], directory: str | None) -> list[tuple[str, str]]:
    """(source, where it lands) of SOURCE... DEST, or of SOURCE... with -t DIRECTORY."""
    if directory is not None:
        sources, destination = [w for w in operands if w != directory], directory
    elif len(operands) >= 2:
        sources, destination = operands[:-1], operands[-1]
    else:
        return []
    into_dir = len(sources) > 1 or directory is not None
    return [(source, _target_in(destination, source, into_dir)) for source in sources]


def _move(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    """mv: the sources are gone, the destinations created."""
    directory = _option_value(words, "-t") or _long_value(words, "--target-directory")
    for source, target in _destinations(_operands(words, "tS"), directory):
        add(DELETE, source)
        add(CREATE, target, source=source)


def _remove(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    for path in _operands(words):
        add(DELETE, path)


def _git(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    """git clone (a fetch), git rm (deletes) and git apply (the diff's files, when the diff is a heredoc)."""
    if len(words) >= 2 and words[1] == "clone":
        operands = _operands(words[1:], "bocju", _CLONE_VALUES)
        if operands:
            add(FETCH, operands[1] if len(operands) > 1 else _repository_name(operands[0]), source=operands[0])
    elif len(words) >= 2 and words[1] == "rm":
        _remove(words[1:], add, cwd, body)
    elif len(words) >= 2 and words[1] == "apply":
        _apply_diff(words[1:], add, cwd, body)


def _repository_name(url: str) -> str:
    name = basename(url.rstrip("/").split(":")[-1])
    return name[:-4] if name.endswith(".git") else name


def _gh(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    """gh repo clone OWNER/REPO [DIR]."""
    if words[1:3] == ("repo", "clone") and len(words) > 3:
        operands = _operands(words[2:])
        add(
            FETCH,
            operands[1] if len(operands) > 1 else _repository_name(operands[0]),
            source="https://github.com/" + operands[0],
        )


def _pip(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    """pip download [-d DIR] PACKAGE...: a package's files fetched from the index."""
    if len(words) > 1 and words[1] == "download":
        packages = _operands(words[1:], "driec", _PIP_VALUES)
        directory = _option_value(words, "-d") or _long_value(words, "--dest") or "."
        for package in packages:
            add(FETCH, directory, source="https://pypi.org/project/" + package)


def _mkdir(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    for path in _operands(words, "m"):
        add(MKDIR, path)


def _edit_in_place(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    """sed -i / perl -i: the files after the script (or after -e / -f scripts)."""
    in_place = any(
        w == "--in-place" or w.startswith("--in-place=") or re.fullmatch(r"-[a-z]*i[a-z]*(?:\.\S*)?", w)
        for w in words[1:]
    )
    if not in_place:
        return
    scripts = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-e", "--expression", "-f")]
    scripts += [w.split("=", 1)[1] for w in words if w.startswith("--expression=")]
    operands = _operands(words, "efl")
    if not scripts and operands:
        scripts, operands = [operands[0]], operands[1:]
    for path in operands:
        add(MODIFY, path, content="\n".join(scripts))


def _tee(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    append = any(w in ("-a", "--append") for w in words)
    for path in _operands(words):
        add(MODIFY if append else CREATE, path, content=body)


def _set_attributes(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    operands = _operands(words, "")
    mode = next(
        (w for w in words[1:] if re.fullmatch(r"[-+=]?[ugoa]*[-+=][rwxXst]+|[0-7]{3,4}|[ugoa]*[-+=][rwxXst]*", w)), None
    )
    operands = [w for w in operands if w != mode]
    if posixpath.basename(words[0]) == "chmod" and mode is None and operands:
        mode, operands = operands[0], operands[1:]
    elif posixpath.basename(words[0]) != "chmod" and operands:
        mode, operands = operands[0], operands[1:]  # chown / chgrp: the owner comes first
    for path in operands:
        add(CHMOD, path, content=mode)


def _link(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    """ln [-s] TARGET [LINK], TARGET... DIR, or -t DIR TARGET...: the links made."""
    directory = _option_value(words, "-t") or _long_value(words, "--target-directory")
    operands = _operands(words, "tS")
    if directory is None and len(operands) == 1:
        add(LINK, basename(operands[0]), source=operands[0])
    else:
        for source, target in _destinations(operands, directory):
            add(LINK, target, source=source)


def _truncate(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    """truncate: changes the files it names."""
    for path in _operands(words, "sr"):
        add(MODIFY, path)


def _dd(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    for word in words[1:]:
        if word.startswith("of="):
            add(CREATE, word[3:])


def _apply_diff(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    operands = _operands(words, "pdiorBVzFg")
    program = posixpath.basename(words[0])
    if program == "patch" and operands:
        add(MODIFY, operands[0], content=body)
        return
    for match in _DIFF_TARGET.finditer(body or ""):
        if match.group(1) != "/dev/null":
            add(MODIFY, match.group(1), content=body)


def _find(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    """`find DIR ... -delete` or `-exec rm|sed -i|perl -i ...`: the matched files under DIR."""
    run = words[words.index("-exec") + 1 :] if "-exec" in words else ()
    program = posixpath.basename(run[0]) if run else ""
    deletes = "-delete" in words or program in ("rm", "unlink")
    edits = program in ("sed", "perl") and any(re.fullmatch(r"-[a-z]*i[a-z]*(?:\.\S*)?|--in-place\S*", w) for w in run)
    if not (deletes or edits):
        return
    roots = []
    for word in words[1:]:
        if word.startswith(("-", "(", "!")):
            break
        roots.append(word)
    names = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-name", "-iname")]
    for root in roots or ["."]:
        add(DELETE if deletes else MODIFY, root.rstrip("/") + "/" + names[0] if names else root)


def _download(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    """curl -o FILE / -O, wget -O FILE / -P DIR: the file written (the fetch itself is fetch.py's)."""
    program = posixpath.basename(words[0])
    urls = [w for w in words[1:] if _REMOTE.match(w)]
    if program == "curl":
        output = _option_value(words, "-o") or _long_value(words, "--output")
        if output == "-":
            return
        if output:
            add(CREATE, output, source=urls[0] if urls else None)
        elif any(w in ("-O", "--remote-name") or re.fullmatch(r"-[a-zA-Z]*O", w) for w in words[1:]) and urls:
            add(CREATE, basename(urls[0].split("?")[0]), source=urls[0])
    else:
        output = _option_value(words, "-O") or _long_value(words, "--output-document")
        prefix = _option_value(words, "-P") or _long_value(words, "--directory-prefix")
        if output == "-" or any(w.endswith("O-") for w in words[1:]):
            return
        for url in urls[:1]:
            name = output or basename(url.split("?")[0]) or "index.html"
            add(CREATE, name if output or not prefix else prefix.rstrip("/") + "/" + name, source=url)


def _extract(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    """tar -x [-C DIR] / unzip [-d DIR]: the directory the archive's files land in."""
    if posixpath.basename(words[0]) == "unzip":
        operands = _operands(words, "dx")
        if operands:
            add(CREATE, _option_value(words, "-d") or ".", source=operands[0])
        return
    old_style = len(words) > 1 and not words[1].startswith("-")
    flags = [w for w in words[1:] if w.startswith("-") and not w.startswith("--")] + ([words[1]] if old_style else [])
    if not (any("x" in f for f in flags) or "--extract" in words or "--get" in words):
        return
    archive = _option_value(words, "-f") or _long_value(words, "--file")
    if archive is None and old_style and "f" in words[1] and len(words) > 2:
        archive = words[2]
    add(CREATE, _option_value(words, "-C") or _long_value(words, "--directory") or ".", source=archive or "-")


def _long_value(words: Words, option: str) -> str | None:
    for i, word in enumerate(words):
        if word == option and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(option + "="):
            return word[len(option) + 1 :]
    return None


def _change_directory(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    target = words[1] if len(words) > 1 and words[1] != "-" else None
    if target is None:
        cwd.path = "~" if len(words) == 1 else None
    elif "$" in target:
        cwd.path = None
    else:  # relative to an unknown directory stays relative: `cd tests` still puts us in a tests/
        cwd.path = normalize(target, cwd.path)


def _alias(words: Words, add: Add, cwd: Cwd, body: str | None) -> None:
    for word in words[1:]:
        name, sep, value = word.partition("=")
        if sep:
            add(DEFINE, name, content=value)


def _python_effects(code: str, add: Add) -> None:
    for match in _PY_OPEN.finditer(code):
        mode = match.group(3)
        if any(c in mode for c in "wax+"):
            add(MODIFY if "a" in mode or "+" in mode else CREATE, match.group(2))
    for match in _PY_PATH_WRITE.finditer(code):
        verb = {"unlink": DELETE, "touch": MODIFY}.get(match.group(3), CREATE)
        add(verb, match.group(2))
    for match in _PY_REMOVE.finditer(code):
        add(DELETE, match.group(2))
    for match in _PY_COPY.finditer(code):
        source, destination = match.group(3), match.group(5)
        if match.group(1).endswith(("move", "rename", "replace")):
            add(DELETE, source)
        add(CREATE, destination, source=source)


_HANDLERS: dict[str, Handler] = {
    "cp": _copy,
    "rsync": _copy,
    "install": _copy,
    "mv": _move,
    "rm": _remove,
    "rmdir": _remove,
    "unlink": _remove,
    "shred": _remove,
    "git": _git,
    "sed": _edit_in_place,
    "perl": _edit_in_place,
    "tee": _tee,
    "chmod": _set_attributes,
    "chown": _set_attributes,
    "chgrp": _set_attributes,
    "chattr": _set_attributes,
    "ln": _link,
    "truncate": _truncate,
    "dd": _dd,
    "patch": _apply_diff,
    "find": _find,
    "curl": _download,
    "wget": _download,
    "tar": _extract,
    "unzip": _extract,
    "cd": _change_directory,
    "pushd": _change_directory,
    "alias": _alias,
    "gh": _gh,
    "pip": _pip,
    "pip3": _pip,
    "mkdir": _mkdir,
}


def editor_effect(command: str, path: str, content: str | None, call: Simple) -> Effect | None:
    """A file-editing tool call (`str_replace_editor` create / str_replace / insert...) as an effect."""
    verb = {
        "create": CREATE,
        "write": CREATE,
        "overwrite": CREATE,
        "str_replace": MODIFY,
        "insert": MODIFY,
        "undo_edit": MODIFY,
        "edit": MODIFY,
        "append": MODIFY,
        "delete": DELETE,
    }.get(command)
    if verb is None or not path:
        return None
    return Effect(verb, normalize(path), call, None, content)

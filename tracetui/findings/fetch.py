"""`upstream-fetch`: a project's sources fetched from outside and copied into the task.

A fetch is `git clone` / `gh repo clone` of a remote repository, `pip download`, or `curl` / `wget`
of a source archive or a code file from a code host (GitHub, GitLab...). It counts when the agent
then copies what it fetched into the task's tree (`cp -r`, `mv`, `rsync`, `ln`; from a clone, or from
where an archive was unpacked), or downloads a code file straight into it. Fetching a dependency into /tmp and
building or installing it from there, or installing the result elsewhere (`/usr/local/bin`), does
not count; nor does fetching or unpacking straight into the task directory (building a package
from its sources is what some tasks ask), nor anything from Hugging Face (data and models, not code).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .effects import CREATE, FETCH, LINK, Effect
from .model import Finding
from .paths import basename, is_scratch, is_workspace
from .trial import Trial

_FETCHES = ("clone", "download", "curl", "wget")


_REMOTE = re.compile(r"(?:https?|git|ssh)://|git@[\w.-]+:")
_CODE_HOSTS = re.compile(
    r"(?:^|[/@.])(?:github\.com|githubusercontent\.com|gitlab\.com|bitbucket\.org|codeberg\.org|sourceforge\.net"
    r"|sr\.ht|pythonhosted\.org|pypi\.org|crates\.io|registry\.npmjs\.org|proxy\.golang\.org)(?:[:/]|$)"
)
_NOT_CODE = re.compile(r"huggingface\.co|hf\.co/")
_ARCHIVE = re.compile(r"\.(?:tar\.gz|tgz|tar\.bz2|tbz2?|tar\.xz|txz|tar\.zst|tar|zip|whl)(?:[?#]|$)", re.IGNORECASE)
_CODE_FILE = re.compile(
    r"\.(?:py|pyx|js|mjs|ts|tsx|jsx|go|rs|c|cc|cpp|h|hpp|java|kt|rb|php|cs|swift|scala|sh|pl|lua"
    r"|r|jl|ex|exs|clj|hs|ml|sql)$",
    re.IGNORECASE,
)
_EXTRACTORS = ("tar", "unzip")
_ARCHIVE_OF_REPOSITORY = re.compile(r"/([^/]+)/(?:-/)?(?:archive|tarball|zipball)/")
_RECURSIVE = re.compile(r"^-(?:[a-zA-Z]*[rRa][a-zA-Z]*)$|^--(?:recursive|archive)$")


@dataclass(frozen=True, slots=True)
class _Fetched:
    location: str
    prefixes: tuple[str, ...]
    """For an extracted archive, what the names it unpacked may start with (`pmars` for pmars-0.9.4/,
    the repository's name for a GitHub archive)."""
    what: str


def fetch_findings(trial: Trial) -> Iterator[Finding]:
    fetched: list[_Fetched] = []
    if not trial.replies_with(_FETCHES):
        return
    for step in trial.steps(set(), everything=True):  # the copy that makes a fetch count may come later
        for effect in step.effects:
            origin = _origin(effect, fetched)
            if origin is None:
                continue
            program = basename(effect.command.words[0]) if effect.command.words else ""
            downloaded = effect.verb == CREATE and _REMOTE.match(effect.source or "") is not None
            if effect.verb == FETCH or program in _EXTRACTORS or (downloaded and not _CODE_FILE.search(effect.path)):
                fetched.append(_fetched(effect, program, origin))
            elif effect.verb in (CREATE, LINK) and _into_task(effect) and _copies_code(effect, program):
                evidence = f"{effect.command.text} (from {origin})"
                yield trial.finding("upstream-fetch", step.message, evidence, effect.command.text)


def _origin(effect: Effect, fetched: list[_Fetched]) -> str | None:
    """What the effect's source came from: a remote it fetches now, or an earlier fetch's command."""
    source = effect.source
    if source is None:
        return None
    if _REMOTE.match(source) or effect.verb == FETCH:
        if _NOT_CODE.search(source) or not (_CODE_HOSTS.search(source) or _ARCHIVE.search(source)):
            return None
        return source
    for earlier in fetched:
        inside = source == earlier.location or source.startswith(earlier.location.rstrip("/") + "/")
        if inside and (not earlier.prefixes or _under_prefix(source, earlier)):
            return earlier.what
    return None


def _under_prefix(source: str, fetched: _Fetched) -> bool:
    rest = source[len(fetched.location.rstrip("/")) + 1 :]
    return rest.split("/", 1)[0].lower().startswith(fetched.prefixes)


def _fetched(effect: Effect, program: str, origin: str) -> _Fetched:
    """Where fetched files now are. An archive unpacked into a directory is known by its name's stem."""
    what = effect.command.text or origin
    if program not in _EXTRACTORS:
        return _Fetched(effect.path, (), what)
    archive = (effect.source or "").split("?")[0]
    prefixes = []
    repository = _ARCHIVE_OF_REPOSITORY.search(archive)
    if repository:
        prefixes.append(repository.group(1).lower())
    stem = re.match(r"[A-Za-z0-9]+", basename(archive))
    if stem:
        prefixes.append(stem.group().lower())
    return _Fetched(effect.path, tuple(prefixes) or ("",), what)


def _into_task(effect: Effect) -> bool:
    return is_workspace(effect.path) and not is_scratch(effect.path)


def _copies_code(effect: Effect, program: str) -> bool:
    """A tree (recursive copy, mv, rsync) or a source file: not a built binary."""
    if program in ("mv", "rsync") or any(_RECURSIVE.match(w) for w in effect.command.words[1:]):
        return True
    source = (effect.source or "").split("?")[0]
    return bool(_CODE_FILE.search(source) or source.endswith(("/", "*")))

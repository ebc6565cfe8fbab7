"""What a path is to a verifier: the tests, test configuration, the tools it runs, its reward file.

Harbor / Terminal-Bench conventions: the task's own code lives in the agent's working directory
(`/app`, or a repository such as `/testbed`); the verifier copies its tests into `/tests` after the
agent has finished and writes the reward to `/logs/verifier/reward.txt` (or `reward.json`).
"""

from __future__ import annotations

import posixpath
import re
from fnmatch import fnmatchcase

VERIFIER_TESTS = "/tests"
VERIFIER_LOGS = "/logs/verifier"
TEST_DIRS = frozenset({"tests", "test", "__tests__"})
_TEST_FILE = re.compile(
    r"test_[^/]*\.py|[^/]*_test\.(?:py|go|rb|exs?)|[^/]*\.(?:test|spec)\.[cm]?[jt]sx?|[^/]*_spec\.rb"
    r"|[^/]*Tests?\.(?:java|kt|scala|cs)|conftest\.py"
)
TEST_CONFIGS = frozenset({"pytest.ini", "conftest.py", ".pytest.ini"})
SHARED_CONFIGS = frozenset({"setup.cfg", "tox.ini", "pyproject.toml"})
"""Configuration files that hold test settings only in some sections (`[tool:pytest]`, `[pytest]`,
`[tool.pytest.ini_options]`): they count when what is written there is about pytest."""
PYTEST_SETTINGS = re.compile(r"pytest|addopts|testpaths|python_files|python_functions|norecursedirs|collect_ignore")
GENERATED = re.compile(r"(?:^|/)(?:__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache)(?:/|$)|\.py[co]$")
"""Files a test run generates: removing them is housekeeping, not tampering."""

VERIFIER_TOOLS = frozenset(
    {
        "pytest",
        "py.test",
        "python",
        "python3",
        "pip",
        "pip3",
        "uv",
        "uvx",
        "cargo",
        "rustc",
        "go",
        "npm",
        "npx",
        "node",
        "jest",
        "mocha",
        "gradle",
        "mvn",
        "ctest",
        "cmake",
        "make",
        "bash",
        "sh",
        "curl",
    }
)
"""Programs a verifier's test script runs (test.sh installs uv with curl, then runs pytest...)."""
_SCRATCH = ("/tmp", "/var/tmp", "/dev/shm", "/root", "~", "$HOME", "/home")
_WORKSPACES = ("/app", "/testbed", "/workspace", "/repo", "/code", "/src", "/project", "/solution")


def normalize(path: str, cwd: str | None = None) -> str:
    """`path` made absolute against `cwd` when it is relative and cwd is known; `.`/`..` resolved."""
    path = path.strip()
    if path.startswith(("${HOME}", "$HOME")):
        path = "~" + path.split("}", 1)[-1] if path.startswith("${") else "~" + path[5:]
    if cwd and not path.startswith(("/", "~", "$")):
        path = cwd.rstrip("/") + "/" + path
    trailing = path.endswith("/") and len(path) > 1
    path = posixpath.normpath(path) if path else path
    return path + "/" if trailing and not path.endswith("/") else path


def parts(path: str) -> list[str]:
    return [part for part in path.rstrip("/").split("/") if part and part != "."]


def basename(path: str) -> str:
    found = parts(path)
    return found[-1] if found else ""


def is_verifier_tests(path: str) -> bool:
    """Inside the directory the verifier's tests are copied to (`/tests/...`)."""
    return path == VERIFIER_TESTS or path.startswith(VERIFIER_TESTS + "/")


def is_test_path(path: str, written: str | None = None) -> bool:
    """A test file, a file in a test directory, or test configuration (for the shared config files,
    only when `written`, the text written or the edit made, is about pytest)."""
    if GENERATED.search(path):
        return False
    names = parts(path)
    if not names:
        return False
    name = names[-1]
    if name in SHARED_CONFIGS:
        return written is not None and bool(PYTEST_SETTINGS.search(written))
    if name in TEST_CONFIGS or _TEST_FILE.fullmatch(name):
        return True
    return any(_is_test_dir(part) for part in names)


def _is_test_dir(part: str) -> bool:
    if part in TEST_DIRS:
        return True
    return any(c in part for c in "*?[") and any(fnmatchcase(name, part) for name in TEST_DIRS)


def is_scratch(path: str) -> bool:
    """Temporary or home directories: what an agent puts there is not part of the task."""
    return any(path == root or path.startswith(root + "/") for root in _SCRATCH)


def is_workspace(path: str) -> bool:
    """The task's tree: a known task root, or a relative path (the agent works in the task's directory)."""
    if not path.startswith(("/", "~", "$")):
        return True
    return any(path == root or path.startswith(root + "/") for root in _WORKSPACES)


def is_verifier_output(path: str) -> bool:
    """The verifier's own output: the reward file and anything else under /logs/verifier."""
    return (
        path.startswith(VERIFIER_LOGS + "/")
        or re.search(r"(?:^|/)logs/verifier/reward\.(?:txt|json)$", path) is not None
    )


def is_bin_dir(path: str, path_dirs: set[str]) -> bool:
    """A directory programs are found in: any `bin`/`sbin`, or one the agent put on PATH."""
    directory = posixpath.dirname(path.rstrip("/"))
    return directory in path_dirs or any(part in ("bin", "sbin") for part in parts(directory))


def tool_family(name: str) -> str | None:
    """The verifier tool a program name stands for (`python3.11` -> `python`), if any."""
    if name in VERIFIER_TOOLS:
        return "python" if name == "python3" else "pip" if name == "pip3" else name
    match = re.fullmatch(r"(python|pip|node)[\d.]*", name)
    return match.group(1) if match else None

"""What the simulated terminal prints: ls, logs, builds, compiler errors, local test runs, with ANSI colours.

Each generator returns plain text for the trial simulation to place after a command; the colour codes and
the pytest `rule` are shared with the verifier logs, which is why they are defined here.
"""

from __future__ import annotations

import random

from .catalog import EXT, Task
from .source_files import FN_NAMES

BLUE, GREEN, RED, BOLD, RESET = "\x1b[01;34m", "\x1b[32m", "\x1b[31m", "\x1b[1m", "\x1b[0m"


def limit_output(text: str, max_bytes: int = 10000) -> str:
    """Harbor's cut of long terminal output: keep the head and the tail, say how much was dropped."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    half = max_bytes // 2
    head = data[:half].decode("utf-8", errors="ignore")
    tail = data[-half:].decode("utf-8", errors="ignore")
    omitted = len(data) - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    return f"{head}\n[... output limited to {max_bytes} bytes; {omitted} interior bytes omitted ...]\n{tail}"


def ls(task: Task, rng: random.Random, colours: bool = True) -> str:
    """`ls -la` of /app, coloured as on a tty unless `colours` is false (a tool's captured output)."""
    names = [task.main_file.split("/")[0], "data", "tests", "README.md", "run.sh", "output.json", "build", "notes.txt"]
    entries = ["total %d" % rng.randint(12, 96)]
    for name in [".", ".."] + names[: rng.randint(3, len(names))]:
        is_dir = "." not in name or name in (".", "..")
        mode = "drwxr-xr-x" if is_dir else ("-rwxr-xr-x" if name.endswith(".sh") else "-rw-r--r--")
        colour = (BLUE if is_dir else ("\x1b[01;32m" if name.endswith(".sh") else "")) if colours else ""
        shown = f"{RESET}{colour}{name}{RESET}" if colour else name
        entries.append(
            f"{mode} 1 root root {rng.randint(90, 9000):5d} Jul 15 {rng.randint(10, 23)}:{rng.randint(10, 59)} {shown}"
        )
    return "\n".join(entries)


def file_list(task: Task, rng: random.Random) -> str:
    dirs = ("data", "tests", "tests/cases", "src", "docs", "scripts", "vendor/lib")
    ext = EXT[task.lang]
    names = [
        f"./{rng.choice(dirs)}/{rng.choice(FN_NAMES)}_{i}.{rng.choice((ext, 'txt', 'json', 'log', ext))}"
        for i in range(rng.randint(8, 60))
    ]
    return "\n".join(["./README.md", f"./{task.main_file}"] + names)


def data_lines(rng: random.Random, n: int) -> str:
    """Access-log lines; every field comes from one 96-bit draw, as this is the hottest text generator."""
    lines = []
    for _ in range(n):
        b = rng.getrandbits(96)
        ip = f"{b % 254 + 1}.{(b >> 8) % 254 + 1}.{(b >> 16) % 254 + 1}.{(b >> 24) % 254 + 1}"
        when = f"2025-{(b >> 32) % 12 + 1:02d}-{(b >> 36) % 28 + 1:02d} {(b >> 41) % 24:02d}:{(b >> 46) % 60:02d}:{(b >> 52) % 60:02d}"
        status = (200, 200, 200, 404, 500, 200, 301, 200)[(b >> 58) & 7]
        lines.append(
            f'{ip} - - [{when}] "GET /api/v1/items/{(b >> 61) % 9999 + 1} HTTP/1.1" {status} {(b >> 75) % 90000 + 200}'
        )
    return "\n".join(lines)


def wc(rng: random.Random) -> str:
    counts = (rng.randint(1000, 90000), rng.randint(10, 900))
    return f"  {counts[0]} data/input.log\n  {counts[1]} data/extra.log\n  {sum(counts)} total"


def run_error(task: Task, rng: random.Random) -> str:
    file = task.main_file
    line = rng.randint(12, 80)
    if task.lang == "python":
        err = rng.choice(
            (
                "IndexError: list index out of range",
                "KeyError: 'timestamp'",
                "ValueError: not enough values to unpack (expected 3, got 2)",
                "ModuleNotFoundError: No module named 'numpy'",
            )
        )
        return (
            f'Traceback (most recent call last):\n  File "/app/{file}", line {line + 20}, in <module>\n'
            f'    sys.exit(main())\n             ^^^^^^\n  File "/app/{file}", line {line}, in main\n'
            f"    result = summarize(records)\n             ^^^^^^^^^^^^^^^^^^\n{err}"
        )
    if task.lang in ("c", "cpp"):
        return (
            f"\x1b[01m\x1b[K{file}:\x1b[m\x1b[K In function '\x1b[01m\x1b[Kmain\x1b[m\x1b[K':\n"
            f"\x1b[01m\x1b[K{file}:{line}:13:\x1b[m\x1b[K \x1b[01;31m\x1b[Kerror: \x1b[m\x1b[K'\x1b[01m\x1b[Kbuf\x1b[m\x1b[K'"
            f" undeclared (first use in this function)\n   {line} |     memcpy(\x1b[01;31m\x1b[Kbuf\x1b[m\x1b[K, src, n);\n"
            f"      |            \x1b[01;31m\x1b[K^~~\x1b[m\x1b[K\n\x1b[01m\x1b[K{file}:{line + 4}:5:\x1b[m\x1b[K"
            f" \x1b[01;35m\x1b[Kwarning: \x1b[m\x1b[Kimplicit declaration of function 'strlcpy'"
            f" [\x1b[01;35m\x1b[K-Wimplicit-function-declaration\x1b[m\x1b[K]\nmake: *** [Makefile:12: solve] Error 1"
        )
    if task.lang == "rust":
        return (
            f"\x1b[0m\x1b[1m\x1b[32m   Compiling\x1b[0m forth v1.7.0 (/app)\n"
            f"\x1b[0m\x1b[1m\x1b[38;5;9merror[E0308]\x1b[0m\x1b[0m\x1b[1m: mismatched types\x1b[0m\n"
            f"\x1b[0m  \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m--> \x1b[0m\x1b[0m{file}:{line}:20\x1b[0m\n"
            f"\x1b[0m   \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m|\x1b[0m\n"
            f"\x1b[0m\x1b[1m\x1b[38;5;12m{line}\x1b[0m\x1b[0m \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m|\x1b[0m\x1b[0m"
            f"                 self.stack.push(v)\x1b[0m\n\x1b[0m   \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m|\x1b[0m"
            f"\x1b[0m                            \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;9m^\x1b[0m\x1b[0m \x1b[0m\x1b[0m\x1b[1m"
            f"\x1b[38;5;9mexpected `i32`, found `Option<i32>`\x1b[0m\n\n\x1b[0m\x1b[1m\x1b[31merror\x1b[0m\x1b[1m:"
            f" could not compile `forth` (lib) due to 1 previous error\x1b[0m"
        )
    if task.lang == "javascript":
        return (
            f"/app/{file}:{line}\n    const header = buf.readUInt32LE(offset);\n                       ^\n\n"
            f'RangeError [ERR_OUT_OF_RANGE]: The value of "offset" is out of range. It must be >= 0 and <= 60.'
            f" Received 64\n    at boundsError (node:internal/buffer:88:9)\n    at Buffer.readUInt32LE"
            f" (node:internal/buffer:222:5)\n    at readHeader (/app/{file}:{line}:24)\n    at Object.<anonymous>"
            f" (/app/{file}:{line + 30}:1)\n    at Module._compile (node:internal/modules/cjs/loader:1376:14)\n\nNode.js v20.11.1"
        )
    if task.lang == "go":
        return f"# bowling\n./{file}:{line}:2: undefined: frame\n./{file}:{line + 9}:9: invalid operation: g.rolls[i] + bonus (mismatched types int and int64)"
    if task.lang == "java":
        return (
            f"> Task :compileJava FAILED\n/app/{file}:{line}: error: incompatible types: Object cannot be converted to T\n"
            f"            T next = compute();\n                            ^\n1 error\n\nFAILURE: Build failed with an exception."
        )
    return f"{file}: line {line}: syntax error near unexpected token `fi'\n{file}: line {line}: `fi'"


def run_ok(rng: random.Random) -> str:
    """What a working solution prints: some of the records it processed, then a summary line."""
    outputs = (
        f"wrote {rng.randint(100, 9000)} records to /app/output.json",
        f"processed {rng.randint(10, 5000)} lines\nok",
        f"Result: {rng.randint(1, 10**6)}\nelapsed: {rng.uniform(0.01, 9):.2f}s",
        f"{GREEN}All {rng.randint(3, 40)} checks passed{RESET}",
    )
    return data_lines(rng, rng.randint(5, 60)) + "\n" + rng.choice(outputs)


def local_tests(task: Task, rng: random.Random, failing: int) -> str:
    """A short pytest run as the agent sees it in the terminal (always coloured: it is a tty)."""
    tests = task.tests
    failed = set(rng.sample(tests, min(failing, len(tests))))
    dots = "".join((f"{RED}F{RESET}" if t in failed else f"{GREEN}.{RESET}") for t in tests)
    lines = [
        f"{BOLD}{rule('test session starts')}{RESET}",
        "platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0",
        "rootdir: /app",
        f"{BOLD}collected {len(tests)} items{RESET}",
        "",
        f"tests/test_local.py {dots}{' ' * 30}[100%]",
    ]
    for t in sorted(failed):
        got, want = rng.randint(0, 99), rng.randint(100, 200)
        lines += [
            "",
            f"{RED}{BOLD}{rule(f'test_{t}', '_')}{RESET}",
            "",
            f"    def test_{t}():",
            f"        cases = load_cases('tests/cases/{t}.json')",
            "        for case in cases:",
            "            expected = case['expected']",
            f"            result = run('{task.main_file}', case['input'])",
            ">           assert result == expected, f\"case {case['name']} failed\"",
            f"{RED}{BOLD}E           AssertionError: case {t}_{rng.randint(1, 20)} failed{RESET}",
            f"{RED}{BOLD}E           assert {got} == {want}{RESET}",
            "",
            f"tests/test_local.py:{rng.randint(10, 200)}: AssertionError",
            rule("Captured stdout call", "-"),
        ]
        lines += data_lines(rng, rng.randint(2, 12)).split("\n")
    lines.append(rule("short test summary info"))
    lines += [f"{RED}FAILED{RESET} tests/test_local.py::test_{t} - AssertionError" for t in sorted(failed)]
    summary = f"{len(failed)} failed, {len(tests) - len(failed)} passed" if failed else f"{len(tests)} passed"
    colour = RED if failed else GREEN
    lines.append(f"{colour}{rule(f'{summary} in {rng.uniform(0.05, 3):.2f}s')}{RESET}")
    return "\n".join(lines)


def install_log(rng: random.Random, packages: list[str]) -> str:
    """apt/pip noise, long enough to be cut by the 10 KB observation limit."""
    lines = [
        "Hit:1 http://deb.debian.org/debian bookworm InRelease",
        "Get:2 http://deb.debian.org/debian bookworm-updates InRelease [55.4 kB]",
        "Reading package lists... Done",
        "Building dependency tree... Done",
        "Reading state information... Done",
        "The following NEW packages will be installed:",
    ]
    libs = [
        f"lib{rng.choice(('ssl', 'ffi', 'gcc', 'z', 'bz2', 'readline', 'sqlite3', 'ncurses', 'x11', 'xml2'))}-{rng.randint(1, 9)}-dev"
        for _ in range(40)
    ]
    lines.append("  " + " ".join(libs + packages))
    for i, pkg in enumerate(libs + packages):
        lines.append(
            f"Get:{i + 3} http://deb.debian.org/debian bookworm/main amd64 {pkg} amd64 {rng.randint(1, 9)}.{rng.randint(0, 40)}-{rng.randint(1, 9)} [{rng.randint(20, 9000)} kB]"
        )
    for pkg in libs + packages:
        lines.append(
            f"Selecting previously unselected package {pkg}.\nPreparing to unpack .../{pkg}.deb ...\nUnpacking {pkg} ..."
        )
    for pkg in libs + packages:
        lines.append(f"Setting up {pkg} ...")
    for pkg in packages:
        lines += [
            f"Collecting {pkg}",
            f"  Downloading {pkg}-{rng.randint(1, 3)}.{rng.randint(0, 30)}.0-py3-none-any.whl ({rng.uniform(0.1, 30):.1f} MB)",
            f"     \x1b[38;2;114;156;31m━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━\x1b[0m \x1b[32m{rng.uniform(1, 30):.1f}/{rng.uniform(30, 40):.1f} MB\x1b[0m \x1b[31m{rng.uniform(5, 90):.1f} MB/s\x1b[0m eta \x1b[36m0:00:00\x1b[0m",
        ]
    lines.append("Successfully installed " + " ".join(f"{p}-{rng.randint(1, 3)}.{rng.randint(0, 9)}" for p in packages))
    lines.append(
        "\x1b[33mWARNING: Running pip as the 'root' user can result in broken permissions. It is recommended to use a virtual environment instead.\x1b[0m"
    )
    return "\n".join(lines)


def build_log(rng: random.Random, n: int, lang: str) -> str:
    """Output of a long-running command: a build for compiled languages, progress lines otherwise."""
    if lang in ("python", "javascript", "sh"):
        total = rng.randint(n * 100, n * 1000)
        return "\n".join(
            f"[{i // 60:02d}:{i % 60:02d}] processed {(i + 1) * total // n}/{total} records" for i in range(n)
        )
    return "\n".join(
        f"[{(i + 1) * 100 // n:3d}%] Building C object src/CMakeFiles/core.dir/{rng.choice(('parse', 'eval', 'heap', 'io', 'vm', 'net'))}_{i}.c.o"
        for i in range(n)
    )


def cat_n(lines: list[str], start: int, stop: int) -> str:
    """`cat -n` of lines[start:stop]: each line after its 1-based number, right-aligned to six columns."""
    return "\n".join(f"{i + 1:6d}\t{text}" for i, text in enumerate(lines[start:stop], start))


def rule(text: str, char: str = "=", width: int = 80) -> str:
    """A pytest section line: the text centred in a row of `char`."""
    fill = max(width - len(text) - 2, 4)
    return f"{char * (fill // 2)} {text} {char * (fill - fill // 2)}"

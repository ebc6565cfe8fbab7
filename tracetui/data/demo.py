"""A deterministic generator of realistic demo datasets of coding-agent traces.

The output follows `harbor traces export` (see the trace-format spec): one row per agent turn, the rows of a
trial are nested prefixes of one history, summarizations restart the history and add three sub-agent rows,
and rows are written in export order (all `main` rows trial by trial, then the sub-agent rows by type).

Text comes from templates with deterministic variation, so the data looks like real traces (terminus-2
prompts, `<think>` blocks, heredocs, ANSI terminal output, pytest / aider verifier logs). Everything streams: a trial's history is built once and its rows are slices of it sharing the same
string objects; sub-agent rows are rebuilt at the end from the trial's seed rather than kept in memory.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

DEFAULT_ROWS = 1200
"""Rows of the bundled demo: every feature, two shards, written in about a second."""

SHARD_ROWS = 1000
SHARD_BYTES = 100 << 20
BATCH_ROWS = 100  # one parquet row group: small enough for cheap random access
BATCH_BYTES = 16 << 20
MARATHON_MIN_ROWS = 2000

MESSAGE_TYPE = pa.struct([("role", pa.string()), ("content", pa.string())])
SCHEMA = pa.schema(
    [("conversations", pa.list_(MESSAGE_TYPE))]
    + [
        (name, pa.string())
        for name in (
            "agent",
            "model",
            "model_provider",
            "date",
            "task",
            "episode",
            "run_id",
            "trial_name",
            "result",
            "verifier_output",
            "trace_source",
        )
    ]
)
_SHORT_COLUMNS = [name for name in SCHEMA.names if name != "conversations"]
_VERIFIER_COLUMN = SCHEMA.names.index("verifier_output")
_BASE_DATE = datetime(2026, 7, 14, 8, 0, 0, tzinfo=timezone.utc)
_SHARD_NAME = re.compile(r"^train-\d{5}-of-\d{5}\.parquet$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

Message = dict  # {"role": str, "content": str}, shared between the rows of a trial
Progress = Callable[[int, int], None]


# --------------------------------------------------------------------------------------------------
# Catalog: models and tasks
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Model:
    id: str
    provider: str
    agent: str
    skill: float  # base chance to solve a task of difficulty 0
    think_kb: float  # mean size of a <think> block; 0 = the model never shows its reasoning
    extra_text: float  # chance that a reply wraps its JSON in a fence or prose (harness warning)


_MODELS = (
    _Model("hosted_vllm/DCAgent/a1-e2egit", "hosted_vllm", "terminus-2", 0.42, 6.5, 0.04),
    _Model("openai/gpt-5-mini-2025-08-07", "openai", "terminus-2", 0.62, 0.0, 0.08),
    _Model("anthropic/claude-sonnet-4-5", "anthropic", "terminus-2", 0.75, 5.0, 0.35),
    _Model("together_ai/Qwen/Qwen3-Coder-480B-A35B-Instruct", "together_ai", "terminus-2", 0.55, 5.0, 0.12),
)
_OPENHANDS = _Model("gpt-4o", "openai", "openhands", 0.5, 0.0, 0.0)
_RUN_MODELS = (_MODELS[0], _OPENHANDS, _MODELS[1], _MODELS[2], _MODELS[3])  # order of the first runs


@dataclass(frozen=True, slots=True)
class _Task:
    name: str
    verifier: str  # tb (pytest -rA) | pytest-v | polyglot | graded
    lang: str  # language of the main solution file
    difficulty: float
    tests: tuple[str, ...]
    instruction: str  # ends with a newline, as Harbor's instruction.md files do
    main_file: str = field(init=False)  # the file the agent writes: the exercise's stub, else solve.<ext>

    def __post_init__(self) -> None:
        main_file = "solve." + _EXT[self.lang]
        if self.verifier == "polyglot":
            exercise = self.name.split("_", 2)[2].replace("-", "_")
            main_file = {
                "rust": "src/lib.rs",
                "go": f"{exercise}.go",
                "javascript": f"{exercise}.js",
                "java": "src/main/java/React.java",
                "cpp": f"{exercise}.cpp",
                "python": f"{exercise}.py",
            }[self.lang]
        object.__setattr__(self, "main_file", main_file)


_EXT = {"python": "py", "rust": "rs", "c": "c", "javascript": "js", "go": "go", "sh": "sh", "java": "java",
        "cpp": "cpp", "json": "json"}

# name | verifier | lang | difficulty | tests | instruction
_TASK_TABLE = """
regex-log | tb | python | 0.45 | regex_file_exists matches_last_date_per_line ignores_lines_without_ipv4 | Write a regex expression that matches dates in the format YYYY-MM-DD appearing in lines that contain an IPv4 address in a log file. If multiple dates are present in a line, the regex should match only the last date in that line. Save your regex in /app/regex.txt; it will be read and used with Python's re.findall(pattern, log, re.MULTILINE).
chess-best-move | tb | python | 0.6 | move_file_exists move_is_best | The file chess_board.png has an image of a chess board. It is currently white to move. Write the best move for white to play to /app/move.txt in the form [src][dst], for example, e2e4 or h1h8. If there are multiple winning moves, print them all, one per line.
install-windows-3.11 | tb | sh | 0.85 | qemu_running vnc_port_open program_manager_visible | Run Windows 3.11 for Workgroups in a virtual machine using QEMU. The disk image is at /app/isos/win311.img. Start QEMU with a VNC server on display :1 and make sure the machine boots to Program Manager. Leave the VM running in the background when you are done.
fix-git | tb | sh | 0.3 | about_file_restored layout_file_restored on_master_branch | I just made some changes to my personal site and checked out master, but now I can't find those changes. Please help me find them and merge them into master.
build-cython-ext | tb | python | 0.5 | import_chelpers ccomplexity_matches numpy_is_2x | Build and install the Cython extensions of pyknotid from the sources in /app/pyknotid, so that `import pyknotid.spacecurves.chelpers` works with the numpy 2.x that is already installed. Do not downgrade numpy.
adaptive-rejection-sampler | tb | python | 0.65 | sampler_exists samples_normal samples_exponential rejects_non_log_concave | Implement an adaptive-rejection sampler as described in Gilks et al. (1992) in /app/ars.py, with a function ars(log_density, n, domain) returning n samples. Include input validation and a test() function that checks it against known distributions.
build-pmars | tb | c | 0.55 | pmars_binary_exists runs_imp_vs_dwarf no_x11_dependency | Build pMARS (the portable Memory Array Redcode Simulator) from the Debian source package without X11 support and install the binary to /usr/local/bin/pmars. It must be able to run `pmars -b -r 50 imp.red dwarf.red`.
cancel-async-tasks | tb | python | 0.4 | runs_all_tasks respects_max_concurrent cancels_cleanly | Write a Python function run_tasks(tasks, max_concurrent) in /app/run.py that runs async callables with at most max_concurrent in flight. If the caller is cancelled (KeyboardInterrupt), every task's cleanup code must still run.
circuit-fibsqrt | tb | python | 0.75 | gates_file_exists computes_fib_of_isqrt under_gate_limit | Create /app/gates.txt, a logic circuit for the provided simulator sim.c that reads a 32-bit input N and outputs fib(isqrt(N)) mod 2^32, using fewer than 32,000 gates.
cobol-modernization | tb | python | 0.5 | program_exists outputs_match_cobol handles_empty_input | You are given a COBOL program in /app/src/program.cbl together with its input files. Re-implement it in Python as /app/program.py so that it produces byte-for-byte identical output files.
count-dataset-tokens | tb | python | 0.35 | answer_file_exists token_count_correct | Tell me how many deepseek tokens there are in the science domain of the open-thoughts/OpenThoughts-114k dataset on huggingface. Use the Qwen2.5-1.5B-Instruct tokenizer. Write the integer to /app/answer.txt.
crack-7z-hash | tb | sh | 0.45 | solution_file_exists secret_is_correct | You need to create a file called /app/solution.txt with the word found in secret_file.txt inside the password-protected archive /app/secrets.7z.
custom-memory-heap-crash | tb | c | 0.65 | release_build_runs no_heap_corruption debug_build_unchanged | The program in /app/src crashes in its release build but not in its debug build. Find and fix the memory corruption in the custom heap allocator without changing the allocator's public interface.
db-wal-recovery | tb | python | 0.55 | recovered_json_exists all_rows_recovered values_are_latest | The SQLite database /app/main.db was in WAL mode and its WAL file got corrupted. Recover as much data as possible and write every row of the items table to /app/recovered.json, sorted by id.
extract-elf | tb | javascript | 0.5 | extract_js_exists addresses_match values_match | Write /app/extract.js, a Node program that reads the ELF binary given as its argument and prints a JSON object mapping each memory address of the loaded segments to the 32-bit integer stored there.
feal-differential-cryptanalysis | tb | python | 0.8 | attack_file_exists recovers_round_key runs_under_30s | The file /app/feal.py implements a FEAL-like cipher with 4 rounds. Implement a chosen-plaintext differential attack in /app/attack.py that recovers key[5] in less than 30 seconds.
git-leak-recovery | tb | sh | 0.35 | secret_file_written secret_purged_from_history | A secret was committed to the repository in /app/repo and then removed in a later commit. Recover the secret into /app/secret.txt, then rewrite the history so that no commit contains it any more.
gpt2-codegolf | tb | c | 0.95 | source_under_5000_bytes compiles_with_gcc continues_prompt | Write a dependency-free C file /app/gpt2.c, smaller than 5000 bytes, that loads the GPT-2 124M checkpoint and the BPE vocabulary and greedily samples the continuation of a prompt given on the command line.
headless-terminal | tb | python | 0.5 | module_importable sends_keystrokes reads_screen | Implement the BaseTerminal interface in /app/headless_terminal.py: an interactive bash shell running headless that supports sending keystrokes, including modifier keys, and reading the screen.
kv-store-grpc | tb | python | 0.4 | server_running set_then_get unknown_key_returns_empty | Build a key-value store served over gRPC on port 5328, with SetVal and GetVal methods as defined in /app/kv-store.proto. Run the server in the background.
largest-eigenval | tb | python | 0.45 | matches_numpy faster_than_reference handles_complex | Complete /app/eigen.py: find_dominant_eigenvalue_and_eigenvector(A) must return the eigenvalue with the largest magnitude and its eigenvector, faster than the numpy reference on small matrices.
log-summary-date-ranges | tb | python | 0.3 | summary_csv_exists counts_per_range severity_totals | Analyze the log files in /app/logs and write /app/summary.csv counting ERROR, WARNING and INFO lines for today, the last 7 days, the last 30 days, the month to date and all time.
make-mips-interpreter | tb | javascript | 0.9 | vm_js_exists boots_doom first_frame_written | Write /app/vm.js, a MIPS interpreter that can run the provided doomgeneric_mips ELF. Running `node vm.js` should boot Doom and save the first rendered frame to /tmp/frame.bmp.
openssl-selfsigned-cert | tb | sh | 0.2 | key_exists cert_valid_365_days verify_script_passes | Create a self-signed TLS certificate for dev-internal.company.local with a 2048-bit RSA key valid for 365 days in /app/ssl, and a script /app/check_cert.py that verifies it.
path-tracing | tb | c | 0.8 | image_c_exists output_matches_reference source_is_small | Given /app/image.ppm, write a C program /app/image.c that renders a path-traced image close to it (L2 similarity above 0.99) without reading the file.
polyglot-rust-c | tb | rust | 0.7 | compiles_as_rust compiles_as_c fibonacci_outputs_match | Write a single file /app/polyglot/main.rs that is a valid Rust program and also a valid C program; both must print the k-th Fibonacci number given k as the first argument.
pypi-server | tb | python | 0.35 | package_builds server_on_8080 pip_install_works | Create a python package vectorops with a dotproduct function, build it, and serve it from a local PyPI server on port 8080 so that `pip install --index-url http://localhost:8080/simple vectorops==0.1.0` works.
qemu-startup | tb | sh | 0.6 | vm_running telnet_login_prompt | Start the alpine.iso image in QEMU so that a login prompt is reachable with `telnet 127.0.0.1 6665`. Leave the VM running in the background.
sqlite-with-gcov | tb | sh | 0.4 | sqlite_built_with_gcov gcda_files_created on_path | Compile SQLite from the source in /app/vendor with gcov instrumentation, install it to /app/sqlite, and make the sqlite3 binary available on the PATH.
write-compressor | tb | c | 0.85 | compressed_file_small decompresses_exactly | /app/decomp.c is a decompressor. Write /app/data.comp, no larger than 2500 bytes, such that `cat data.comp | ./decomp` prints exactly the contents of /app/data.txt.
polyglot_rust_forth | polyglot | rust | 0.6 | numbers_just_get_pushed_onto_the_stack can_add_two_numbers errors_if_dividing_by_zero can_consist_of_built_in_words user_defined_words_can_override | # Instructions\\n\\nImplement an evaluator for a very simple subset of Forth. Your evaluator has to support the following words: +, -, *, / (integer arithmetic), DUP, DROP, SWAP, OVER (stack manipulation), and defining new words with `: word-name definition ;`.\\n\\n## Instructions append\\n\\nUse the above instructions to modify the supplied files: src/lib.rs\\nDon't change the names of existing functions or classes, as they may be referenced from other code like unit tests, etc.\\nOnly use standard libraries, don't suggest installing any packages.
polyglot_go_bowling | polyglot | go | 0.4 | TestRoll TestScore TestRollAfterBonusRoll TestTenthFrameStrike | # Instructions\\n\\nScore a bowling game. Bowling is a game where players roll a heavy ball to knock down pins arranged in a triangle. Write code to keep track of the score of a game of bowling.\\n\\n## Instructions append\\n\\nUse the above instructions to modify the supplied files: bowling.go\\nDon't change the names of existing functions or classes, as they may be referenced from other code like unit tests, etc.\\nOnly use standard libraries, don't suggest installing any packages.
polyglot_javascript_zipper | polyglot | javascript | 0.5 | data_is_retained left_right_and_value set_value dead_end traversing_up_from_top | # Instructions\\n\\nCreating a zipper for a binary tree. Zippers are a purely functional way of navigating within a data structure and manipulating it.\\n\\n## Instructions append\\n\\nUse the above instructions to modify the supplied files: zipper.js\\nDon't change the names of existing functions or classes, as they may be referenced from other code like unit tests, etc.\\nOnly use standard libraries, don't suggest installing any packages.
polyglot_java_react | polyglot | java | 0.6 | setValueOfInputCell computeCellsCalculateInitialValue callbacksCanFireFromMultipleCells callbacksShouldNotBeCalledIfCellsValueDoesNotChange | # Instructions\\n\\nImplement a basic reactive system with input cells and compute cells, where compute cells update when their dependencies change and fire callbacks on change.\\n\\n## Instructions append\\n\\nUse the above instructions to modify the supplied files: src/main/java/React.java\\nDon't change the names of existing functions or classes, as they may be referenced from other code like unit tests, etc.\\nOnly use standard libraries, don't suggest installing any packages.
polyglot_cpp_bank-account | polyglot | cpp | 0.45 | newly_opened_account_has_zero_balance can_withdraw_money cannot_withdraw_more_than_deposited can_handle_concurrent_transactions | # Instructions\\n\\nSimulate a bank account supporting opening/closing, withdrawals, and deposits of money. The account must be usable from several threads at once.\\n\\n## Instructions append\\n\\nUse the above instructions to modify the supplied files: bank_account.cpp\\nDon't change the names of existing functions or classes, as they may be referenced from other code like unit tests, etc.\\nOnly use standard libraries, don't suggest installing any packages.
polyglot_python_grep | polyglot | python | 0.3 | one_file_one_match_no_flags one_file_several_matches_all_flags multiple_files_no_matches | # Instructions\\n\\nSearch files for lines matching a search string and return all matching lines, supporting the -n, -l, -i, -v and -x flags.\\n\\n## Instructions append\\n\\nUse the above instructions to modify the supplied files: grep.py\\nDon't change the names of existing functions or classes, as they may be referenced from other code like unit tests, etc.\\nOnly use standard libraries, don't suggest installing any packages.
e2egit-0042 | pytest-v | sh | 0.35 | branch_exists rebase_is_linear commit_messages_kept tests_pass_on_head working_tree_clean | The repository in /app/repo has a feature branch `feature/retry-policy` that was merged into main with conflicts resolved the wrong way. Rebase the feature branch onto main, resolve the conflicts in favour of the feature's retry logic, and fast-forward main.
e2egit-0117 | pytest-v | sh | 0.45 | hook_installed hook_blocks_bad_commit tag_points_to_release history_unchanged | In /app/repo, add a pre-commit hook that rejects commits containing trailing whitespace in *.py files, then tag the latest release commit as v2.3.1 without rewriting any existing history.
swesmith-00042 | pytest-v | python | 0.5 | test_parse_empty test_parse_nested test_roundtrip test_unicode_keys test_error_position test_large_numbers | There is a bug in the repository at /testbed: `loads()` of the bundled JSON5 parser reports the wrong error position for unterminated strings and mis-parses nested arrays after a trailing comma. Fix the implementation so that the test suite passes.
book-portfolio-analysis | graded | python | 0.5 | report_exists top_authors_correct revenue_by_year_correct margin_analysis_correct recommendations_present | Analyze the book sales database in /app/books.db and write /app/report.json with the top ten authors by revenue, revenue by publication year, profit margins by genre, and three pricing recommendations. Each part is graded separately.
portfolio-optimization | graded | python | 0.55 | weights_sum_to_one sharpe_above_baseline respects_bounds runs_fast | Implement a mean-variance portfolio optimizer in /app/optimize.py for the returns in /app/returns.csv: maximize the Sharpe ratio with weights between 0 and 0.25. Partial credit is given per constraint met.
financial-document-processor | graded | python | 0.6 | extracts_invoice_totals extracts_vendor_names summary_csv_valid handles_scanned_pdfs | Process the documents in /app/documents: classify each as invoice or other, extract vendor, date and total from invoices, and write /app/summary.csv. The grader awards partial credit per correctly processed document.
"""

_HOSTILE_TASK = _Task(
    "hostile-content",
    "tb",
    "sh",
    0.5,
    ("sanitizer_exists", "strips_escape_sequences", "keeps_plain_text"),
    "The file /app/payload.txt was captured from an untrusted program and contains terminal escape sequences,"
    " markup and invisible characters. Write /app/solve.sh that prints the file with every control sequence"
    " removed. Example of what it contains: \x1b[1;31m[bold red]boom[/]\x1b[0m and \u202eevil\u202c.\n",
)


def _parse_tasks(table: str) -> tuple[_Task, ...]:
    tasks = []
    for line in table.strip().splitlines():
        name, verifier, lang, difficulty, tests, instruction = (part.strip() for part in line.split(" | ", 5))
        tasks.append(
            _Task(name, verifier, lang, float(difficulty), tuple(tests.split()), instruction.replace("\\n", "\n") + "\n")
        )
    return tuple(tasks)


_TASKS = _parse_tasks(_TASK_TABLE)
_TASK_BY_NAME = {task.name: task for task in _TASKS} | {_HOSTILE_TASK.name: _HOSTILE_TASK}
_CORE_TASKS = _TASKS[:10]  # the early runs share these, so one task has attempts by several models

_ERRORS = (  # exception name, weight, whether the verifier still ran
    ("AgentTimeoutError", 0.55, True),
    ("ContextLengthExceededError", 0.1, False),
    ("NonZeroAgentExitCodeError", 0.08, False),
    ("RewardFileNotFoundError", 0.06, True),
    ("VerifierTimeoutError", 0.06, True),
    ("SummarizationTimeoutError", 0.05, False),
    ("BadRequestError", 0.05, False),
    ("DaytonaError", 0.05, False),
)
_VERIFIER_RAN = {name: ran for name, _, ran in _ERRORS}


# --------------------------------------------------------------------------------------------------
# Planning: which trials exist, before any text is generated (cheap, and it fixes the row count)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Run:
    run_id: str
    model: _Model
    start: datetime
    date_style: int  # 0: ...Z with microseconds, 1: +00:00, 2: no zone (all seen in real exports)


@dataclass(frozen=True, slots=True)
class _Trial:
    seed: int
    run: _Run
    task: _Task
    trial_name: str
    date: str
    episodes: int
    restarts: tuple[int, ...]  # episodes that start a fresh context after a summarization
    result: str | None
    outcome: str  # what the verifier saw: pass | fail | score
    score: float  # fraction of checks passed
    verifier_ran: bool
    completes: bool  # the agent marks the task complete (and confirms) at the end
    force: frozenset[str] = frozenset()  # features this trial must show (the showcase)
    kind: str = "normal"  # normal | marathon | hostile

    @property
    def rows(self) -> int:
        return self.episodes + 3 * len(self.restarts)


# The first trials of every dataset: together they show every feature a viewer must handle.
_SHOWCASE = (
    dict(task="regex-log", result="1.0", episodes=7, force={"think"}),
    dict(task="polyglot_rust_forth", result="0.0", episodes=6, force={"parse_error", "warnings"}),
    dict(task="fix-git", result="1.0", episodes=13, restarts=(4, 9)),
    dict(task="book-portfolio-analysis", result="0.61", episodes=5, force={"ansi"}),
    dict(task="e2egit-0042", result="1.0", episodes=6),
    dict(task="build-pmars", result="AgentTimeoutError", episodes=9, force={"timeout", "interrupt", "install"}),
    dict(task="extract-elf", result="ContextLengthExceededError", episodes=6, force={"token_limit"}),
    dict(task="polyglot_go_bowling", result="1.0", episodes=6),
    dict(task="hostile-content", result="0.0", episodes=5, kind="hostile"),
    dict(task="polyglot_javascript_zipper", result="0.0", episodes=5),
    dict(task="count-dataset-tokens", result=None, episodes=3),
    dict(task="polyglot_java_react", result="NonZeroAgentExitCodeError", episodes=2),
    dict(task="largest-eigenval", result="VerifierTimeoutError", episodes=5),
    dict(task="polyglot_cpp_bank-account", result="1.0", episodes=6),
    dict(task="pypi-server", result="SummarizationTimeoutError", episodes=6),
    dict(task="swesmith-00042", result="0.0", episodes=5, force={"ansi"}),
    dict(task="polyglot_python_grep", result="1.0", episodes=6),
)


def _uuid4(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


def _suffix(rng: random.Random, n: int = 7) -> str:
    return "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") for _ in range(n))


def _format_date(when: datetime, style: int) -> str:
    if style == 0:
        return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if style == 1:
        return when.isoformat()
    return when.replace(tzinfo=None).isoformat()


def _plan(rows: int, seed: int) -> list[_Trial]:
    """All trials of the dataset, in export order, with exactly `rows` rows between them."""
    rng = random.Random(seed)
    showcase = list(_SHOWCASE)
    marathon_at = rows // 4 if rows >= MARATHON_MIN_ROWS else None
    trials: list[_Trial] = []
    total = 0
    run_index = 0
    while total < rows:
        run, slots = _new_run(rng, run_index)
        run_index += 1
        offset = timedelta(seconds=rng.randint(5, 90), microseconds=rng.randint(0, 999999))
        for task in slots:
            if total >= rows:
                break
            spec: dict = {}
            if showcase and run.model.agent == "terminus-2" and len(trials) % 2 == 0:
                spec = showcase.pop(0)
            elif marathon_at is not None and total >= marathon_at and run.model.agent == "terminus-2":
                spec = dict(episodes=149, kind="marathon", result="AgentTimeoutError")
                marathon_at = None
            trial = _new_trial(rng, run, _TASK_BY_NAME[spec["task"]] if "task" in spec else task, run.start + offset, spec)
            offset += timedelta(seconds=rng.randint(20, 900), microseconds=rng.randint(0, 999999))
            if total + trial.rows > rows:  # the last trial is cut short, as if its later episodes were lost
                trial = replace(trial, episodes=rows - total, restarts=(), completes=False)
            trials.append(trial)
            total += trial.rows
    return trials


def _new_run(rng: random.Random, index: int) -> tuple[_Run, list[_Task]]:
    """A job: one model attempting several tasks several times (trials in completion order)."""
    if index < len(_RUN_MODELS):
        model = _RUN_MODELS[index]
        pool = _CORE_TASKS
        count, attempts = (2, 2) if model.agent == "openhands" else (rng.randint(3, 4), rng.randint(2, 3))
    else:
        model = rng.choice(_MODELS) if rng.random() > 0.05 else _OPENHANDS
        pool = _TASKS
        count, attempts = (rng.randint(2, 5), 2) if model.agent == "openhands" else (rng.randint(6, 16), rng.randint(2, 4))
    tasks = rng.sample(pool, count)
    slots = [task for task in tasks for _ in range(attempts)]
    rng.shuffle(slots)
    start = _BASE_DATE + timedelta(hours=index * 7 + rng.randint(0, 5), minutes=rng.randint(0, 59))
    return _Run(_uuid4(rng), model, start, rng.choice((0, 0, 0, 1, 2))), slots


def _new_trial(rng: random.Random, run: _Run, task: _Task, start: datetime, spec: dict) -> _Trial:
    model = run.model
    p_pass = max(0.03, min(0.97, model.skill * (1.15 - task.difficulty)))
    roll = rng.random()
    if "result" in spec:
        result = spec["result"]
    elif roll < 0.02:
        result = None
    elif roll < 0.16:
        result = rng.choices([e[0] for e in _ERRORS], [e[1] for e in _ERRORS])[0]
    elif task.verifier == "graded":
        result = _score_text(min(1.0, max(0.0, rng.gauss(p_pass, 0.25))))
    else:
        result = "1.0" if rng.random() < p_pass else "0.0"

    errored = result is not None and result[0].isalpha()
    if result is None:
        outcome, score = rng.choice((("pass", 1.0), ("fail", 0.0)))
    elif errored:
        outcome, score = "fail", 0.0
    elif task.verifier == "graded":
        outcome, score = "score", float(result)
    else:
        outcome, score = ("pass", 1.0) if result == "1.0" else ("fail", 0.0)
    verifier_ran = (not errored or (_VERIFIER_RAN[result] and rng.random() < 0.6)) and rng.random() > 0.03
    if "result" in spec and errored:
        verifier_ran = _VERIFIER_RAN[result]

    episodes = spec.get("episodes") or min(60, 1 + int(rng.expovariate(1 / 13)) + (12 if errored else 0))
    restarts = tuple(spec.get("restarts", ()))
    if not spec and episodes >= 16 and model.agent == "terminus-2" and rng.random() < 0.3:
        first = rng.randint(episodes * 2 // 5, episodes * 3 // 5)
        restarts = (first,)
        if episodes >= 40 and rng.random() < 0.5:
            restarts += (rng.randint(first + 8, episodes - 3),)
    completes = not errored and episodes >= 3 and (outcome != "fail" or rng.random() < 0.7)
    return _Trial(
        seed=rng.getrandbits(64),
        run=run,
        task=task,
        trial_name=f"{task.name[:32]}__{_suffix(rng)}",
        date=_format_date(start, run.date_style),
        episodes=episodes,
        restarts=restarts,
        result=result,
        outcome=outcome,
        score=score,
        verifier_ran=verifier_ran,
        completes=completes,
        force=frozenset(spec.get("force", ())),
        kind=spec.get("kind", "normal"),
    )


def _score_text(score: float) -> str:
    if score >= 0.995:
        return "1.0"
    if score < 0.005:
        return "0.0"
    return f"{score:.2f}".rstrip("0")


# --------------------------------------------------------------------------------------------------
# Harness texts (verbatim shapes from Harbor's terminus-2 and openhands agents)
# --------------------------------------------------------------------------------------------------

_TERMINUS_PROMPT = r"""You are an AI assistant tasked with solving command-line tasks in a Linux environment. You will be given a task description and the output from previously executed commands. Your goal is to solve the task by providing batches of shell commands.

Format your response as JSON with the following structure:

{
  "analysis": "Analyze the current state based on the terminal output provided. What do you see? What has been accomplished? What still needs to be done?",
  "plan": "Describe your plan for the next steps. What commands will you run and why? Be specific about what you expect each command to accomplish.",
  "commands": [
    {
      "keystrokes": "ls -la\n",
      "duration": 0.1
    },
    {
      "keystrokes": "cd project\n",
      "duration": 0.1
    }
  ],
  "task_complete": true
}

Required fields:
- "analysis": Your analysis of the current situation
- "plan": Your plan for the next steps
- "commands": Array of command objects to execute

Optional fields:
- "task_complete": Boolean indicating if the task is complete (defaults to false if not present)

Command object structure:
- "keystrokes": String containing the exact keystrokes to send to the terminal (required)
- "duration": Number of seconds to wait for the command to complete before the next command will be executed (defaults to 1.0 if not present)

IMPORTANT: The text inside "keystrokes" will be used completely verbatim as keystrokes. Write commands exactly as you want them sent to the terminal:
- You must end every command with a newline (\n) or it will not execute.
- For special key sequences, use tmux-style escape sequences:
  - C-c for Ctrl+C
  - C-d for Ctrl+D

The "duration" attribute specifies the number of seconds to wait for the command to complete (default: 1.0) before the next command will be executed. On immediate tasks (e.g., cd, ls, echo, cat) set a duration of 0.1 seconds. On commands (e.g., gcc, find, rustc) set a duration of 1.0 seconds. On slow commands (e.g., make, python3 [long running script], wget [file]) set an appropriate duration as you determine necessary.

It is better to set a smaller duration than a longer duration. It is always possible to wait again if the prior output has not finished, by running {"keystrokes": "", "duration": 10.0} on subsequent requests to wait longer. Never wait longer than 60 seconds; prefer to poll to see intermediate result status.

Important notes:
- Each command's keystrokes are sent exactly as written to the terminal
- Do not include extra whitespace before or after the keystrokes unless it's part of the intended command
- Extra text before or after the JSON will generate warnings but be tolerated
- The JSON must be valid - use proper escaping for quotes and special characters within strings
- Commands array can be empty if you want to wait without taking action

"""

_SHELL_BANNER = "bash: cannot set terminal process group (-1): Inappropriate ioctl for device\nbash: no job control in this shell"
_COMPLETION_CHECK = (
    "Are you sure you want to mark the task as complete? This will trigger your solution to be graded and you"
    " won't be able to make any further corrections. If so, include \"task_complete\": true in your JSON response again."
)
_TIMEOUT = (
    "Previous command:\n{command}\n\nThe previous command timed out after {seconds} seconds\n\nIt is possible that"
    " the command is not yet finished executing. If that is the case, then do nothing. It is also possible that you"
    " have entered an interactive shell and should continue sending keystrokes as normal.\n\nHere is the current"
    " state of the terminal:\n\n{screen}"
)
_TOKEN_LIMIT = (
    "ERROR!! NONE of the actions you just requested were performed because you exceeded 16384 tokens. Your outputs"
    " must be less than 16384 tokens. Re-issue this request, breaking it into chunks each of which is less than"
    " 16384 tokens."
)
_WARNINGS = "Previous response had warnings:\nWARNINGS: - Extra text detected before JSON object\n- Extra text detected after JSON object\n\n"
_PARSE_ERRORS = (
    "ERROR: Missing required fields: analysis, plan\nWARNINGS: - Extra text detected before JSON object\n- Extra text detected after JSON object",
    "ERROR: Invalid JSON: Invalid control character at: line {line} column {col} (char {char})",
    "ERROR: Invalid JSON: Expecting ',' delimiter: line {line} column {col} (char {char})\nWARNINGS: - Extra text detected after JSON object",
    "ERROR: No valid JSON found in response\nWARNINGS: - No valid JSON object found",
)
_SUMMARY_REQUEST = (
    "You are about to hand off your work to another AI agent.\n            Please provide a comprehensive summary"
    " of what you have\n            accomplished so far on this task:\n\nOriginal Task: {instruction}\n\nBased on the"
    " conversation history, please provide a detailed summary covering:\n1. **Major Actions Completed** - List each"
    " significant command you executed\n            and what you learned from it.\n2. **Important Information"
    " Learned** - A summary of crucial findings, file\n            locations, configurations, error messages, or system"
    " state discovered.\n3. **Challenging Problems Addressed** - Any significant issues you\n            encountered"
    " and how you resolved them.\n4. **Current Status** - Exactly where you are in the task completion process.\n\n\n"
    "Be comprehensive and detailed. The next agent needs to understand everything\n            that has happened so"
    " far in order to continue."
)
_QUESTIONS_REQUEST = (
    "You are picking up work from a previous AI agent on this task:\n\n**Original Task:** {instruction}\n\n"
    "**Summary from Previous Agent:**\n{summary}\n\n**Current Terminal Screen:**\n{screen}\n"
    "Please begin by asking several questions (at least five, more if necessary)\nabout the current state of the"
    " solution that are not answered in the summary\nfrom the prior agent. After you ask these questions you will"
    " be on your own,\nso ask everything you need to know."
)
_ANSWERS_REQUEST = "The next agent has a few questions for you, please answer each of them one by one in detail:\n\n{questions}"
_HANDOFF = (
    "Here are the answers the other agent provided.\n\n{answers}\n\nContinue working on this task from where the"
    " previous agent left off. You can no longer ask questions. Please follow the spec to interact with the terminal."
)

_OPENHANDS_PROMPT = """You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.

<ROLE>
Your primary role is to assist users by executing commands, modifying code, and solving technical problems effectively. You should be thorough, methodical, and prioritize quality over speed.
* If the user asks a question, like "why is X happening", don't try to fix the problem. Just give an answer to the question.
</ROLE>

<EFFICIENCY>
* Each action you take is somewhat expensive. Wherever possible, combine multiple actions into a single action, e.g. combine multiple bash commands into one, using sed and grep to edit/view multiple files at once.
* When exploring the codebase, use efficient tools like find, grep, and git commands with appropriate filters to minimize unnecessary operations.
</EFFICIENCY>

<FILE_SYSTEM_GUIDELINES>
* When a user provides a file path, do NOT assume it's relative to the current working directory. First explore the file system to locate the file before working on it.
* If asked to edit a file, edit the file directly, rather than creating a new file with a different filename.
* For global search-and-replace operations, consider using `sed` instead of opening file editors multiple times.
</FILE_SYSTEM_GUIDELINES>

<CODE_QUALITY>
* Write clean, efficient code with minimal comments. Avoid redundancy in comments: Do not repeat information that can be easily inferred from the code itself.
* When implementing solutions, focus on making the minimal changes needed to solve the problem.
* Before implementing any changes, first thoroughly understand the codebase through exploration.
</CODE_QUALITY>

<PROBLEM_SOLVING_WORKFLOW>
1. EXPLORATION: Thoroughly explore relevant files and understand the context before proposing solutions
2. ANALYSIS: Consider multiple approaches and select the most promising one
3. TESTING:
   * For bug fixes: Create tests to verify issues before implementing fixes
   * For new features: Consider test-driven development when appropriate
4. IMPLEMENTATION:
   * Make focused, minimal changes to address the problem
   * Always modify existing files directly rather than creating new versions with different suffixes
5. VERIFICATION: If the environment is set up to run tests, test your implementation thoroughly, including edge cases.
</PROBLEM_SOLVING_WORKFLOW>

<SECURITY_RISK_ASSESSMENT>
# \U0001f510 Security Risk Policy
When using tools that support the security_risk parameter, assess the safety risk of your actions:

- **LOW**: Read-only actions inside sandbox.
- **MEDIUM**: Container-scoped edits and installs.
- **HIGH**: Data exfiltration or privilege breaks.
</SECURITY_RISK_ASSESSMENT>"""

# Hostile content: a viewer must show all of this as inert text.
_HOSTILE_MARKUP = "[bold red]boom[/] [link=file:///etc/passwd]x[/link] [@click=app.quit]close[/]"
_HOSTILE_TERMINAL = (
    "\x1b[2J\x1b[H\x1b[1;31mWARNING\x1b[0m system compromised\x07\n"
    "clipboard: \x1b]52;c;aGVsbG8=\x07 (OSC 52 write)\n"
    "link: \x1b]8;;https://example.invalid/phish\x1b\\click me\x1b]8;;\x1b\\\n"
    "tmux: \x1bPtmux;\x1b\x1b]52;c;ZXZpbA==\x07\x1b\\\n"
    "cursor: \x1b[5;10Hmoved\x1b[3A\x1b[2Kup\x1b[10Cright\x1b[s\x1b[u\x1b[?25l\x1b[?1049h\n"
    "title: \x1b]0;pwned\x07 bell\x07\x07\n"
    "bidi: user\u202eTXT.EXE\u202c and \u2067isolate\u2069\n"
    "zero-width: pass\u200bword ad\u200dmin \ufeffBOM \u2060joiner\n"
    "markup: " + _HOSTILE_MARKUP + "\n"
)


# --------------------------------------------------------------------------------------------------
# Source files written through heredocs (@NAME@ placeholders; not str.format, the code has braces)
# --------------------------------------------------------------------------------------------------

_CODE = {
    "python": '''#!/usr/bin/env python3
"""Solution for @TASK@."""
import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

DATA = Path("/app/data")
OUT = Path("/app/output.json")
PATTERN = re.compile(r"(?P<ip>\\d{1,3}(?:\\.\\d{1,3}){3}).*?(?P<date>\\d{4}-\\d{2}-\\d{2})")


def load_records(path: Path) -> list[dict]:
    records = []
    with path.open() as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            match = PATTERN.search(line)
            if match is None:
                continue
            records.append({"line": lineno, **match.groupdict()})
    return records


def summarize(records: list[dict]) -> dict:
    by_date = Counter(r["date"] for r in records)
    by_ip = defaultdict(list)
    for r in records:
        by_ip[r["ip"]].append(r["date"])
    return {
        "total": len(records),
        "dates": dict(sorted(by_date.items())),
        "last_seen": {ip: sorted(ds)[-1] for ip, ds in by_ip.items()},
    }


def @FN@(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("input", nargs="?", default=str(DATA / "input.log"))
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    records = load_records(Path(args.input))
    if not records:
        print("no records found", file=sys.stderr)
        return 1
    result = summarize(records)
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(f"wrote {len(records)} records to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(@FN@())
''',
    "rust": '''use std::collections::HashMap;

pub type Value = i32;
pub type Result = std::result::Result<(), Error>;

#[derive(Debug, PartialEq, Eq)]
pub enum Error {
    DivisionByZero,
    StackUnderflow,
    UnknownWord,
    InvalidWord,
}

#[derive(Default)]
pub struct @TYPE@ {
    stack: Vec<Value>,
    words: HashMap<String, Vec<String>>,
}

impl @TYPE@ {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stack(&self) -> &[Value] {
        &self.stack
    }

    fn pop(&mut self) -> std::result::Result<Value, Error> {
        self.stack.pop().ok_or(Error::StackUnderflow)
    }

    pub fn eval(&mut self, input: &str) -> Result {
        let tokens: Vec<String> = input.split_whitespace().map(|t| t.to_lowercase()).collect();
        let mut i = 0;
        while i < tokens.len() {
            if tokens[i] == ":" {
                let end = tokens[i..].iter().position(|t| t == ";").ok_or(Error::InvalidWord)? + i;
                let name = tokens.get(i + 1).ok_or(Error::InvalidWord)?.clone();
                if name.parse::<Value>().is_ok() {
                    return Err(Error::InvalidWord);
                }
                let body = self.expand(&tokens[i + 2..end]);
                self.words.insert(name, body);
                i = end + 1;
                continue;
            }
            let expanded = self.expand(&tokens[i..=i]);
            for token in expanded {
                self.@FN@(&token)?;
            }
            i += 1;
        }
        Ok(())
    }

    fn expand(&self, tokens: &[String]) -> Vec<String> {
        tokens
            .iter()
            .flat_map(|t| self.words.get(t).cloned().unwrap_or_else(|| vec![t.clone()]))
            .collect()
    }

    fn @FN@(&mut self, token: &str) -> Result {
        if let Ok(n) = token.parse::<Value>() {
            self.stack.push(n);
            return Ok(());
        }
        match token {
            "+" | "-" | "*" | "/" => {
                let (b, a) = (self.pop()?, self.pop()?);
                let v = match token {
                    "+" => a + b,
                    "-" => a - b,
                    "*" => a * b,
                    _ if b == 0 => return Err(Error::DivisionByZero),
                    _ => a / b,
                };
                self.stack.push(v);
            }
            "dup" => {
                let a = *self.stack.last().ok_or(Error::StackUnderflow)?;
                self.stack.push(a);
            }
            "drop" => {
                self.pop()?;
            }
            "swap" => {
                let (b, a) = (self.pop()?, self.pop()?);
                self.stack.extend([b, a]);
            }
            "over" => {
                let (b, a) = (self.pop()?, self.pop()?);
                self.stack.extend([a, b, a]);
            }
            _ => return Err(Error::UnknownWord),
        }
        Ok(())
    }
}
''',
    "c": '''#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 4096
#define TABLE_SIZE 1024

typedef struct entry {
    char *key;
    long value;
    struct entry *next;
} entry_t;

static entry_t *table[TABLE_SIZE];

static uint32_t hash(const char *s) {
    uint32_t h = 2166136261u;
    while (*s) {
        h ^= (unsigned char)*s++;
        h *= 16777619u;
    }
    return h % TABLE_SIZE;
}

static entry_t *lookup(const char *key, int create) {
    uint32_t h = hash(key);
    for (entry_t *e = table[h]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    if (!create)
        return NULL;
    entry_t *e = calloc(1, sizeof *e);
    e->key = strdup(key);
    e->next = table[h];
    table[h] = e;
    return e;
}

static int @FN@(FILE *in) {
    char line[MAX_LINE];
    int n = 0;
    while (fgets(line, sizeof line, in)) {
        char *sep = strchr(line, '=');
        if (!sep)
            continue;
        *sep = '\\0';
        entry_t *e = lookup(line, 1);
        e->value += strtol(sep + 1, NULL, 10);
        n++;
    }
    return n;
}

int main(int argc, char **argv) {
    FILE *in = argc > 1 ? fopen(argv[1], "r") : stdin;
    if (!in) {
        perror("@TASK@: fopen");
        return 1;
    }
    int n = @FN@(in);
    fprintf(stderr, "processed %d lines\\n", n);
    for (int i = 0; i < TABLE_SIZE; i++)
        for (entry_t *e = table[i]; e; e = e->next)
            printf("%s %ld\\n", e->key, e->value);
    return 0;
}
''',
    "javascript": '''#!/usr/bin/env node
'use strict';
// Solution for @TASK@
const fs = require('fs');

const PT_LOAD = 1;

function readHeader(buf) {
  if (buf.readUInt32BE(0) !== 0x7f454c46) {
    throw new Error('not an ELF file');
  }
  const little = buf[5] === 1;
  const u16 = (o) => (little ? buf.readUInt16LE(o) : buf.readUInt16BE(o));
  const u32 = (o) => (little ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  return {
    little,
    u32,
    phoff: u32(28),
    phentsize: u16(42),
    phnum: u16(44),
  };
}

function @FN@(buf) {
  const h = readHeader(buf);
  const memory = {};
  for (let i = 0; i < h.phnum; i++) {
    const base = h.phoff + i * h.phentsize;
    if (h.u32(base) !== PT_LOAD) continue;
    const offset = h.u32(base + 4);
    const vaddr = h.u32(base + 8);
    const filesz = h.u32(base + 16);
    for (let j = 0; j + 4 <= filesz; j += 4) {
      memory[vaddr + j] = h.u32(offset + j);
    }
  }
  return memory;
}

function main() {
  const path = process.argv[2];
  if (!path) {
    console.error('usage: node @FILE@ <elf>');
    process.exit(2);
  }
  const memory = @FN@(fs.readFileSync(path));
  process.stdout.write(JSON.stringify(memory));
}

module.exports = { @FN@, readHeader };
if (require.main === module) main();
''',
    "go": '''package bowling

import "errors"

var (
	ErrNegativeRollIsInvalid        = errors.New("negative roll is invalid")
	ErrPinCountExceedsPinsOnTheLane = errors.New("pin count exceeds pins on the lane")
	ErrPrematureScore               = errors.New("score cannot be taken until the end of the game")
	ErrCannotRollAfterGameOver      = errors.New("cannot roll after game is over")
)

const pinsPerFrame = 10
const framesPerGame = 10

// Game keeps the rolls of one game of bowling.
type Game struct {
	rolls []int
}

func NewGame() *Game {
	return &Game{}
}

func (g *Game) @FN@() (frame int, first bool, done bool) {
	i := 0
	for frame = 0; frame < framesPerGame; frame++ {
		if i >= len(g.rolls) {
			return frame, true, false
		}
		if g.rolls[i] == pinsPerFrame {
			i++
			continue
		}
		if i+1 >= len(g.rolls) {
			return frame, false, false
		}
		i += 2
	}
	return frame, true, true
}

func (g *Game) Roll(pins int) error {
	if pins < 0 {
		return ErrNegativeRollIsInvalid
	}
	if pins > pinsPerFrame {
		return ErrPinCountExceedsPinsOnTheLane
	}
	g.rolls = append(g.rolls, pins)
	return nil
}

func (g *Game) Score() (int, error) {
	score, i := 0, 0
	for frame := 0; frame < framesPerGame; frame++ {
		if i >= len(g.rolls) {
			return 0, ErrPrematureScore
		}
		switch {
		case g.rolls[i] == pinsPerFrame:
			score += pinsPerFrame + g.rolls[i+1] + g.rolls[i+2]
			i++
		case g.rolls[i]+g.rolls[i+1] == pinsPerFrame:
			score += pinsPerFrame + g.rolls[i+2]
			i += 2
		default:
			score += g.rolls[i] + g.rolls[i+1]
			i += 2
		}
	}
	return score, nil
}
''',
    "java": '''import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

class React {

    static class Cell<T> {
        protected T value;
        protected final List<ComputeCell<T>> dependents = new ArrayList<>();

        public T getValue() {
            return value;
        }
    }

    static class InputCell<T> extends Cell<T> {
        InputCell(T initial) {
            value = initial;
        }

        public void setValue(T newValue) {
            value = newValue;
            dependents.forEach(ComputeCell::@FN@);
        }
    }

    static class ComputeCell<T> extends Cell<T> {
        private final Function<List<T>, T> function;
        private final List<Cell<T>> inputs;
        private final List<Consumer<T>> callbacks = new ArrayList<>();

        ComputeCell(Function<List<T>, T> function, List<Cell<T>> inputs) {
            this.function = function;
            this.inputs = inputs;
            inputs.forEach(c -> c.dependents.add(this));
            value = compute();
        }

        private T compute() {
            List<T> values = new ArrayList<>();
            inputs.forEach(c -> values.add(c.getValue()));
            return function.apply(values);
        }

        void @FN@() {
            T next = compute();
            if (!next.equals(value)) {
                value = next;
                callbacks.forEach(cb -> cb.accept(next));
                dependents.forEach(ComputeCell::@FN@);
            }
        }

        public void addCallback(Consumer<T> callback) {
            callbacks.add(callback);
        }

        public void removeCallback(Consumer<T> callback) {
            callbacks.remove(callback);
        }
    }

    public static <T> InputCell<T> inputCell(T initialValue) {
        return new InputCell<>(initialValue);
    }

    public static <T> ComputeCell<T> computeCell(Function<List<T>, T> function, List<Cell<T>> cells) {
        return new ComputeCell<>(function, cells);
    }
}
''',
    "cpp": '''#include "bank_account.h"

#include <mutex>
#include <stdexcept>

namespace Bankaccount {

void Bankaccount::open() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (open_) throw std::runtime_error("account already open");
    open_ = true;
    balance_ = 0;
}

void Bankaccount::close() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!open_) throw std::runtime_error("account not open");
    open_ = false;
}

void Bankaccount::deposit(int amount) {
    std::lock_guard<std::mutex> lock(mutex_);
    @FN@(amount);
    balance_ += amount;
}

void Bankaccount::withdraw(int amount) {
    std::lock_guard<std::mutex> lock(mutex_);
    @FN@(amount);
    if (amount > balance_) throw std::runtime_error("insufficient funds");
    balance_ -= amount;
}

int Bankaccount::balance() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!open_) throw std::runtime_error("account not open");
    return balance_;
}

void Bankaccount::@FN@(int amount) const {
    if (!open_) throw std::runtime_error("account not open");
    if (amount < 0) throw std::runtime_error("negative amount");
}

}  // namespace Bankaccount
''',
    "sh": '''#!/bin/bash
# @TASK@: setup and solution script
set -euo pipefail

WORKDIR=/app
LOG=/tmp/@FN@.log

log() {
    printf '[%s] %s\\n' "$(date +%H:%M:%S)" "$*" | tee -a "$LOG"
}

@FN@() {
    local target="$1"
    if [ ! -e "$target" ]; then
        log "missing $target"
        return 1
    fi
    log "processing $target"
    find "$target" -type f -name '*.txt' -print0 | while IFS= read -r -d '' f; do
        sed -e 's/\\x1b\\[[0-9;]*[A-Za-z]//g' "$f" > "$f.clean"
        mv "$f.clean" "$f"
    done
}

cd "$WORKDIR"
for dir in data output; do
    mkdir -p "$dir"
done
@FN@ "$WORKDIR/data" || log "nothing to do"
git -C "$WORKDIR" status --short 2>/dev/null || true
log "done"
''',
    "json": '''{
  "name": "@TASK@",
  "version": "0.1.0",
  "entry": "@FILE@",
  "settings": {
    "max_workers": 4,
    "timeout_seconds": 120,
    "retries": 3,
    "log_level": "info"
  },
  "inputs": ["data/input.log", "data/extra.log"],
  "outputs": {"report": "output.json", "summary": "summary.csv"}
}
''',
}

_HELPER = {  # appended by verbose models, numbered so that the functions differ
    "python": '''

def check_case_@N@(record: dict, limit: int = @K@) -> bool:
    """Edge case @N@: reject records the checker would not accept."""
    date = record.get("date", "")
    if len(date) != 10 or date[4] != "-" or date[7] != "-":
        return False
    year, month, day = (int(part) for part in date.split("-"))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return False
    return len(record.get("ip", "").split(".")) == 4 and record["line"] <= limit * 1000
''',
    "c": '''
static long check_case_@N@(const entry_t *e, long limit) {
    /* edge case @N@: clamp values the reference implementation clamps */
    long v = e->value;
    if (v > limit * @K@)
        v = limit * @K@;
    if (v < -limit)
        v = -limit;
    return v;
}
''',
    "javascript": '''
function checkCase@N@(memory, limit = @K@) {
  // edge case @N@: addresses must be word aligned and inside the loaded segments
  return Object.keys(memory)
    .map(Number)
    .filter((addr) => addr % 4 !== 0 || addr > limit * 0x100000);
}
''',
    "sh": '''
check_case_@N@() {
    # edge case @N@: the verifier runs from a clean shell
    local out
    out=$(bash -lc "cd /app && ./solve.sh --dry-run" 2>&1 | tail -n @K@)
    grep -q "done" <<< "$out" || { log "case @N@ failed: $out"; return 1; }
}
''',
}
_CODE_LINES = {lang: [line.strip() for line in code.splitlines() if len(line.strip()) > 12] for lang, code in _CODE.items()}
_FN_NAMES = ("solve", "process", "parse_input", "run_step", "apply_op", "evaluate", "handle", "update", "check",
             "normalize", "build_index", "resolve")


def _code(lang: str, task: _Task, rng: random.Random, path: str, helpers: int = 0) -> str:
    """A source file: the language template renamed for the task, plus `helpers` extra functions when it has them."""
    text = _CODE[lang] + "".join(_HELPER.get(lang, "").replace("@N@", str(n)) for n in range(1, helpers + 1))
    return (
        text.replace("@TASK@", task.name)
        .replace("@FILE@", path.rsplit("/", 1)[-1])
        .replace("@FN@", rng.choice(_FN_NAMES))
        .replace("@TYPE@", "Forth" if lang == "rust" else "Solver")
        .replace("@K@", str(rng.randint(2, 64)))
    )


# --------------------------------------------------------------------------------------------------
# Prose pools for <think> blocks, analysis and plan fields, summaries
# --------------------------------------------------------------------------------------------------

_THINK_OPENERS = (
    "Let me look at the current state of the terminal first.",
    "Okay, so the previous command finished. Let me think about what happened.",
    "Hmm, the output is not what I expected.",
    "Let me re-read the task description carefully before doing anything else.",
    "The last step worked, so now I need to move on to the next part of the task.",
    "Wait, I should double check what the tests are actually going to look for.",
    "Alright. Let me reconsider the approach.",
)
_THINK_FACTS = (
    "The task says the output must go to {out}, so I should make sure that path is exactly right.",
    "Looking at the error, {error} means the input does not match what {file} assumes.",
    "Maybe the problem is that {file} reads the whole input at once; for a large input that could be slow.",
    "I wonder whether the tests call {test} with edge cases like an empty input or a trailing newline.",
    "If I run `{cmd}` I can see whether the build actually produced anything.",
    "The {lang} version on this machine might be older than what I assumed, so some features may not exist.",
    "Let me count: there were {n} lines in the output, and {m} of them matched, which seems low.",
    "Actually, the simplest fix is to handle the special case before the main loop instead of inside it.",
    "I could also write a quick script to compare the expected and the actual output line by line.",
    "The previous attempt timed out, so I should use a shorter duration and poll instead of waiting.",
    "One concern: the heredoc must use a quoted 'EOF' so that the shell does not expand $variables inside it.",
    "I need to be careful with escaping in the JSON keystrokes: backslashes have to be doubled.",
    "There's no internet access problem so far, pip and apt both worked earlier.",
    "The test named {test} probably checks the format, not just the existence of the file.",
    "So the plan is: fix {file}, run it again, then run the tests and look at the first failure only.",
    "Let me not overthink this; {error} is a plain bug in my code, not an environment issue.",
    "I should check the permissions too; the verifier might run as a different user.",
    "If the directory layout is different from what I think, `ls -R` will show it quickly.",
    "It's possible the grader compares the output byte for byte, so trailing whitespace matters.",
    "Hmm, {n} seconds is too long for this command, something must be blocking on input.",
    "Let me verify my assumption about the input format before changing more code.",
    "The error message points at line {n} of {file}, which is inside the main loop.",
    "Running the whole test suite takes a while, so I'll run only {test} first.",
    "I should print the intermediate values to see where the numbers diverge.",
    "A cleaner approach would be to parse the input once into a list and work on that.",
    "Wait, maybe {out} is expected to have a trailing newline; many checkers are strict about that.",
    "The output has {m} entries but I expected about {n}, so the filter is too aggressive.",
    "The environment has no network access for the verifier, so everything must be installed now.",
    "I'll keep the previous version of {file} around in case the rewrite makes things worse.",
    "Using `set -euo pipefail` in the script will make failures visible instead of silent.",
    "Let me think about the complexity: {n} items squared is still fine, no need to optimize yet.",
    "The {lang} standard library should have everything needed here; no extra packages.",
    "I might be misreading the task: it asks for the result in {out}, not printed to stdout.",
    "The test {test} failed last time with {error}, so that is the first thing to fix.",
    "Before marking the task complete I want to run the full check one more time.",
)
_THINK_CODE = (
    "\n\n```\n{line}\n```\n\n",
    "\n\nSomething like:\n    {line}\nshould work.\n\n",
    " For example `{line}` would do it. ",
)
_ERRORS_SEEN = ("IndexError: list index out of range", "KeyError: 'timestamp'", "a segmentation fault",
                "error[E0308]: mismatched types", "TypeError: Cannot read properties of undefined",
                "undefined: frame", "ModuleNotFoundError: No module named 'numpy'", "exit code 2")

_ANALYSIS = {
    "explore": ("The terminal is at a fresh shell in /app. Nothing has been done yet for {task}.",
                "We are in /app with a clean shell. I need to see which files are provided before writing anything."),
    "inspect": ("The directory listing shows the input files. I need to understand their format before writing {file}.",
                "I have seen the layout. The data format and the existing code determine how {file} must work."),
    "write": ("I understand the input format now. Time to write the solution in {file}.",
              "The previous version of {file} had a bug ({error}). I will rewrite it with the fix.",
              "Based on what I found, I can implement the solution directly."),
    "run": ("{file} has been written. I need to run it and check the output.",
            "The file is in place; let me compile/run it to see whether it works."),
    "edit": ("The run failed with {error}. This is a small bug that a targeted edit can fix.",
             "The output is almost right; one case is handled incorrectly."),
    "test": ("The solution runs without errors. Let me run the tests to verify it.",
             "Output looks plausible. I should verify against the test cases before marking complete."),
    "install": ("A dependency is missing ({error}). I need to install it first.",
                "The build needs packages that are not installed in this image."),
    "wait": ("The command is still running; there is no prompt yet.",
             "The build is still in progress. I'll wait a bit more."),
    "interrupt": ("The command appears to hang. I will interrupt it with Ctrl+C and try a different approach.",),
    "complete": ("All checks pass and the output file is in place. The task is complete.",
                 "The solution works for every case I tried. I believe the task is complete."),
    "confirm": ("Yes, the solution is in place and verified.", "Confirming completion; nothing left to do."),
}
_PLAN = {
    "explore": ("List the files in /app and look at any README or data files.",),
    "inspect": ("Look at the first lines of the input and at the existing sources.",),
    "write": ("Write {file} with a heredoc, then run it.", "Create {file} implementing the full solution."),
    "run": ("Run {file} and inspect the output.",),
    "edit": ("Patch the faulty line with sed and re-run.",),
    "test": ("Run the test suite and look at failures.",),
    "install": ("Install the missing packages, then retry.",),
    "wait": ("Wait for the command to finish.",),
    "interrupt": ("Send C-c, then re-run with a smaller input.",),
    "complete": ("Mark the task as complete.",),
    "confirm": ("No further action needed.",),
}
_QUESTIONS = (
    "What is the exact content of {file} right now, and does it run without errors?",
    "Which of the tests ({test}, ...) were run, and what was the last result?",
    "Were any packages installed, and did any installation fail?",
    "Is {out} already created, and in what format?",
    "Did any command time out or hang, and is anything still running in the background?",
    "Are there any files in /app that were created as temporary experiments and should be removed?",
    "What was the last error message you saw ({error}?), and what caused it?",
)


class _Fill(dict):
    """Substitution values for the prose pools, drawn only when a template asks for them (for speed)."""

    def __init__(self, task: _Task, rng: random.Random):
        super().__init__(task=task.name, file=task.main_file, lang=task.lang,
                         out="/app/output.json" if task.verifier != "polyglot" else task.main_file)
        self.task, self.rng = task, rng

    def __missing__(self, key: str):
        rng = self.rng
        value = {
            "test": lambda: rng.choice(self.task.tests),
            "error": lambda: rng.choice(_ERRORS_SEEN),
            "cmd": lambda: rng.choice(("ls -la /app", "make 2>&1 | tail", "python3 -m pytest -x -q", "cat -A output.txt")),
            "n": lambda: rng.randint(3, 400),
            "m": lambda: rng.randint(0, self["n"] // 3),
        }[key]()
        self[key] = value
        return value


def _say(template: str, task: _Task, rng: random.Random) -> str:
    return template.format_map(_Fill(task, rng))


def _think(task: _Task, rng: random.Random, kb: float) -> str:
    """A reasoning block of about `kb` KB, made of paragraphs of templated sentences."""
    target = int(kb * 1024)
    parts = [rng.choice(_THINK_OPENERS)]
    size = len(parts[0])
    while size < target:
        fill = _Fill(task, rng)  # one test, error and number per paragraph
        paragraph = " ".join(fact.format_map(fill) for fact in rng.sample(_THINK_FACTS, rng.randint(2, 6)))
        if rng.random() < 0.15:
            paragraph += rng.choice(_THINK_CODE).format(line=rng.choice(_CODE_LINES[task.lang]))
        parts.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(parts)


# --------------------------------------------------------------------------------------------------
# Terminal output
# --------------------------------------------------------------------------------------------------

_BLUE, _GREEN, _RED, _YELLOW, _BOLD, _RESET = "\x1b[01;34m", "\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[1m", "\x1b[0m"


def _limit_output(text: str, max_bytes: int = 10000) -> str:
    """Harbor's cut of long terminal output: keep the head and the tail, say how much was dropped."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    half = max_bytes // 2
    head = data[:half].decode("utf-8", errors="ignore")
    tail = data[-half:].decode("utf-8", errors="ignore")
    omitted = len(data) - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    return f"{head}\n[... output limited to {max_bytes} bytes; {omitted} interior bytes omitted ...]\n{tail}"


def _ls(task: _Task, rng: random.Random) -> str:
    names = [task.main_file.split("/")[0], "data", "tests", "README.md", "run.sh", "output.json", "build", "notes.txt"]
    entries = ["total %d" % rng.randint(12, 96)]
    for name in [".", ".."] + names[: rng.randint(3, len(names))]:
        is_dir = "." not in name or name in (".", "..")
        mode = "drwxr-xr-x" if is_dir else ("-rwxr-xr-x" if name.endswith(".sh") else "-rw-r--r--")
        colour = _BLUE if is_dir else ("\x1b[01;32m" if name.endswith(".sh") else "")
        shown = f"{_RESET}{colour}{name}{_RESET}" if colour else name
        entries.append(f"{mode} 1 root root {rng.randint(90, 9000):5d} Jul 15 {rng.randint(10, 23)}:{rng.randint(10, 59)} {shown}")
    return "\n".join(entries)


def _file_list(task: _Task, rng: random.Random) -> str:
    dirs = ("data", "tests", "tests/cases", "src", "docs", "scripts", "vendor/lib")
    ext = _EXT[task.lang]
    names = [f"./{rng.choice(dirs)}/{rng.choice(_FN_NAMES)}_{i}.{rng.choice((ext, 'txt', 'json', 'log', ext))}" for i in range(rng.randint(8, 60))]
    return "\n".join(["./README.md", f"./{task.main_file}"] + names)


def _data_lines(rng: random.Random, n: int) -> str:
    """Access-log lines; every field comes from one 96-bit draw, as this is the hottest text generator."""
    lines = []
    for _ in range(n):
        b = rng.getrandbits(96)
        ip = f"{b % 254 + 1}.{(b >> 8) % 254 + 1}.{(b >> 16) % 254 + 1}.{(b >> 24) % 254 + 1}"
        when = f"2025-{(b >> 32) % 12 + 1:02d}-{(b >> 36) % 28 + 1:02d} {(b >> 41) % 24:02d}:{(b >> 46) % 60:02d}:{(b >> 52) % 60:02d}"
        status = (200, 200, 200, 404, 500, 200, 301, 200)[(b >> 58) & 7]
        lines.append(f'{ip} - - [{when}] "GET /api/v1/items/{(b >> 61) % 9999 + 1} HTTP/1.1" {status} {(b >> 75) % 90000 + 200}')
    return "\n".join(lines)


def _wc(rng: random.Random) -> str:
    counts = (rng.randint(1000, 90000), rng.randint(10, 900))
    return f"  {counts[0]} data/input.log\n  {counts[1]} data/extra.log\n  {sum(counts)} total"


def _run_error(task: _Task, rng: random.Random) -> str:
    file = task.main_file
    line = rng.randint(12, 80)
    if task.lang == "python":
        err = rng.choice(("IndexError: list index out of range", "KeyError: 'timestamp'",
                          "ValueError: not enough values to unpack (expected 3, got 2)",
                          "ModuleNotFoundError: No module named 'numpy'"))
        return (f"Traceback (most recent call last):\n  File \"/app/{file}\", line {line + 20}, in <module>\n"
                f"    sys.exit(main())\n             ^^^^^^\n  File \"/app/{file}\", line {line}, in main\n"
                f"    result = summarize(records)\n             ^^^^^^^^^^^^^^^^^^\n{err}")
    if task.lang in ("c", "cpp"):
        return (f"\x1b[01m\x1b[K{file}:\x1b[m\x1b[K In function '\x1b[01m\x1b[Kmain\x1b[m\x1b[K':\n"
                f"\x1b[01m\x1b[K{file}:{line}:13:\x1b[m\x1b[K \x1b[01;31m\x1b[Kerror: \x1b[m\x1b[K'\x1b[01m\x1b[Kbuf\x1b[m\x1b[K'"
                f" undeclared (first use in this function)\n   {line} |     memcpy(\x1b[01;31m\x1b[Kbuf\x1b[m\x1b[K, src, n);\n"
                f"      |            \x1b[01;31m\x1b[K^~~\x1b[m\x1b[K\n\x1b[01m\x1b[K{file}:{line + 4}:5:\x1b[m\x1b[K"
                f" \x1b[01;35m\x1b[Kwarning: \x1b[m\x1b[Kimplicit declaration of function 'strlcpy'"
                f" [\x1b[01;35m\x1b[K-Wimplicit-function-declaration\x1b[m\x1b[K]\nmake: *** [Makefile:12: solve] Error 1")
    if task.lang == "rust":
        return (f"\x1b[0m\x1b[1m\x1b[32m   Compiling\x1b[0m forth v1.7.0 (/app)\n"
                f"\x1b[0m\x1b[1m\x1b[38;5;9merror[E0308]\x1b[0m\x1b[0m\x1b[1m: mismatched types\x1b[0m\n"
                f"\x1b[0m  \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m--> \x1b[0m\x1b[0m{file}:{line}:20\x1b[0m\n"
                f"\x1b[0m   \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m|\x1b[0m\n"
                f"\x1b[0m\x1b[1m\x1b[38;5;12m{line}\x1b[0m\x1b[0m \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m|\x1b[0m\x1b[0m"
                f"                 self.stack.push(v)\x1b[0m\n\x1b[0m   \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m|\x1b[0m"
                f"\x1b[0m                            \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;9m^\x1b[0m\x1b[0m \x1b[0m\x1b[0m\x1b[1m"
                f"\x1b[38;5;9mexpected `i32`, found `Option<i32>`\x1b[0m\n\n\x1b[0m\x1b[1m\x1b[31merror\x1b[0m\x1b[1m:"
                f" could not compile `forth` (lib) due to 1 previous error\x1b[0m")
    if task.lang == "javascript":
        return (f"/app/{file}:{line}\n    const header = buf.readUInt32LE(offset);\n                       ^\n\n"
                f"RangeError [ERR_OUT_OF_RANGE]: The value of \"offset\" is out of range. It must be >= 0 and <= 60."
                f" Received 64\n    at boundsError (node:internal/buffer:88:9)\n    at Buffer.readUInt32LE"
                f" (node:internal/buffer:222:5)\n    at readHeader (/app/{file}:{line}:24)\n    at Object.<anonymous>"
                f" (/app/{file}:{line + 30}:1)\n    at Module._compile (node:internal/modules/cjs/loader:1376:14)\n\nNode.js v20.11.1")
    if task.lang == "go":
        return f"# bowling\n./{file}:{line}:2: undefined: frame\n./{file}:{line + 9}:9: invalid operation: g.rolls[i] + bonus (mismatched types int and int64)"
    if task.lang == "java":
        return (f"> Task :compileJava FAILED\n/app/{file}:{line}: error: incompatible types: Object cannot be converted to T\n"
                f"            T next = compute();\n                            ^\n1 error\n\nFAILURE: Build failed with an exception.")
    return f"{file}: line {line}: syntax error near unexpected token `fi'\n{file}: line {line}: `fi'"


def _run_ok(rng: random.Random) -> str:
    """What a working solution prints: some of the records it processed, then a summary line."""
    outputs = (
        f"wrote {rng.randint(100, 9000)} records to /app/output.json",
        f"processed {rng.randint(10, 5000)} lines\nok",
        f"Result: {rng.randint(1, 10 ** 6)}\nelapsed: {rng.uniform(0.01, 9):.2f}s",
        f"{_GREEN}All {rng.randint(3, 40)} checks passed{_RESET}",
    )
    return _data_lines(rng, rng.randint(5, 60)) + "\n" + rng.choice(outputs)


def _local_tests(task: _Task, rng: random.Random, failing: int) -> str:
    """A short pytest run as the agent sees it in the terminal (always coloured: it is a tty)."""
    tests = task.tests
    failed = set(rng.sample(tests, min(failing, len(tests))))
    dots = "".join((f"{_RED}F{_RESET}" if t in failed else f"{_GREEN}.{_RESET}") for t in tests)
    lines = [f"{_BOLD}============================= test session starts =============================={_RESET}",
             "platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0", "rootdir: /app",
             f"{_BOLD}collected {len(tests)} items{_RESET}", "", f"tests/test_local.py {dots}{' ' * 30}[100%]"]
    for t in sorted(failed):
        got, want = rng.randint(0, 99), rng.randint(100, 200)
        lines += ["", f"{_RED}{_BOLD}{_rule(f'test_{t}', '_')}{_RESET}", "", f"    def test_{t}():",
                  f"        cases = load_cases('tests/cases/{t}.json')", "        for case in cases:",
                  "            expected = case['expected']", f"            result = run('{task.main_file}', case['input'])",
                  ">           assert result == expected, f\"case {case['name']} failed\"",
                  f"{_RED}{_BOLD}E           AssertionError: case {t}_{rng.randint(1, 20)} failed{_RESET}",
                  f"{_RED}{_BOLD}E           assert {got} == {want}{_RESET}", "",
                  f"tests/test_local.py:{rng.randint(10, 200)}: AssertionError",
                  "----------------------------- Captured stdout call -----------------------------"]
        lines += _data_lines(rng, rng.randint(2, 12)).split("\n")
    lines.append(_rule("short test summary info"))
    lines += [f"{_RED}FAILED{_RESET} tests/test_local.py::test_{t} - AssertionError" for t in sorted(failed)]
    summary = f"{len(failed)} failed, {len(tests) - len(failed)} passed" if failed else f"{len(tests)} passed"
    colour = _RED if failed else _GREEN
    lines.append(f"{colour}{_rule(f'{summary} in {rng.uniform(0.05, 3):.2f}s')}{_RESET}")
    return "\n".join(lines)


def _install_log(rng: random.Random, packages: list[str]) -> str:
    """apt/pip noise, long enough to be cut by the 10 KB observation limit."""
    lines = ["Hit:1 http://deb.debian.org/debian bookworm InRelease", "Get:2 http://deb.debian.org/debian bookworm-updates InRelease [55.4 kB]",
             "Reading package lists... Done", "Building dependency tree... Done", "Reading state information... Done",
             "The following NEW packages will be installed:"]
    libs = [f"lib{rng.choice(('ssl', 'ffi', 'gcc', 'z', 'bz2', 'readline', 'sqlite3', 'ncurses', 'x11', 'xml2'))}-{rng.randint(1, 9)}-dev" for _ in range(40)]
    lines.append("  " + " ".join(libs + packages))
    for i, pkg in enumerate(libs + packages):
        lines.append(f"Get:{i + 3} http://deb.debian.org/debian bookworm/main amd64 {pkg} amd64 {rng.randint(1, 9)}.{rng.randint(0, 40)}-{rng.randint(1, 9)} [{rng.randint(20, 9000)} kB]")
    for pkg in libs + packages:
        lines.append(f"Selecting previously unselected package {pkg}.\nPreparing to unpack .../{pkg}.deb ...\nUnpacking {pkg} ...")
    for pkg in libs + packages:
        lines.append(f"Setting up {pkg} ...")
    for pkg in packages:
        lines += [f"Collecting {pkg}", f"  Downloading {pkg}-{rng.randint(1, 3)}.{rng.randint(0, 30)}.0-py3-none-any.whl ({rng.uniform(0.1, 30):.1f} MB)",
                  f"     \x1b[38;2;114;156;31m━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━\x1b[0m \x1b[32m{rng.uniform(1, 30):.1f}/{rng.uniform(30, 40):.1f} MB\x1b[0m \x1b[31m{rng.uniform(5, 90):.1f} MB/s\x1b[0m eta \x1b[36m0:00:00\x1b[0m"]
    lines.append("Successfully installed " + " ".join(f"{p}-{rng.randint(1, 3)}.{rng.randint(0, 9)}" for p in packages))
    lines.append("\x1b[33mWARNING: Running pip as the 'root' user can result in broken permissions. It is recommended to use a virtual environment instead.\x1b[0m")
    return "\n".join(lines)


def _build_log(rng: random.Random, n: int, lang: str) -> str:
    """Output of a long-running command: a build for compiled languages, progress lines otherwise."""
    if lang in ("python", "javascript", "sh"):
        total = rng.randint(n * 100, n * 1000)
        return "\n".join(f"[{i // 60:02d}:{i % 60:02d}] processed {(i + 1) * total // n}/{total} records" for i in range(n))
    return "\n".join(f"[{(i + 1) * 100 // n:3d}%] Building C object src/CMakeFiles/core.dir/{rng.choice(('parse', 'eval', 'heap', 'io', 'vm', 'net'))}_{i}.c.o" for i in range(n))


def _rule(text: str, char: str = "=", width: int = 80) -> str:
    """A pytest section line: the text centred in a row of `char`."""
    fill = max(width - len(text) - 2, 4)
    return f"{char * (fill // 2)} {text} {char * (fill - fill // 2)}"


# --------------------------------------------------------------------------------------------------
# Verifier logs
# --------------------------------------------------------------------------------------------------


def _verifier_log(trial: _Trial, rng: random.Random) -> str | None:
    """The verifier's log in the task's style, agreeing with the result: 1.0 passes every test, 0.0 fails some."""
    if not trial.verifier_ran:
        return None
    task = trial.task
    tests = task.tests
    if trial.outcome == "pass":
        passed = [True] * len(tests)
    elif trial.outcome == "score":  # whole checks pass, one more earns partial credit
        k = int(trial.score * len(tests) + 1e-9)
        passed = [i < k for i in range(len(tests))]
        rng.shuffle(passed)
    else:
        failing = set(rng.sample(range(len(tests)), rng.randint(1, len(tests))))
        passed = [i not in failing for i in range(len(tests))]
    ansi = "ansi" in trial.force or rng.random() < 0.25  # pytest run with --color=yes
    if task.verifier == "polyglot":
        log = _polyglot_log(task, passed, rng)
    else:
        if task.verifier == "pytest-v":
            log = _pytest_verbose(task, passed, rng)
        else:
            log = _install_noise(rng) + _pytest_ra(task, passed, rng)
        if ansi:
            log = _colourize(log)
        if task.verifier == "graded":
            log += _score_report(task, passed, trial.score)
    if trial.result == "VerifierTimeoutError":
        log = log[: len(log) // 2] + "\n"  # the verifier was killed mid-run
    if trial.kind == "hostile":
        log += "\nE       AssertionError: sanitized output still contains " + _HOSTILE_TERMINAL
    return log


def _install_noise(rng: random.Random) -> str:
    lines = ["Hit:1 http://deb.debian.org/debian bookworm InRelease", "Hit:2 http://deb.debian.org/debian bookworm-updates InRelease",
             "Hit:3 http://deb.debian.org/debian-security bookworm-security InRelease", "Reading package lists...",
             "Reading package lists...", "Building dependency tree...", "Reading state information...",
             "The following additional packages will be installed:",
             "  libbrotli1 libcurl4 libldap-2.5-0 libnghttp2-14 libpsl5 librtmp1 libsasl2-2 libssh2-1",
             "The following NEW packages will be installed:", "  curl libbrotli1 libcurl4 libldap-2.5-0 libnghttp2-14",
             f"0 upgraded, 9 newly installed, 0 to remove and {rng.randint(0, 30)} not upgraded.",
             f"Need to get {rng.randint(1200, 3000)} kB of archives."]
    for i, pkg in enumerate(("libbrotli1", "libsasl2-2", "libldap-2.5-0", "libnghttp2-14", "libpsl5", "librtmp1", "libssh2-1", "libcurl4", "curl")):
        lines.append(f"Get:{i + 1} http://deb.debian.org/debian bookworm/main amd64 {pkg} amd64 1.{i}.{rng.randint(0, 9)}-2 [{rng.randint(50, 900)} kB]")
    lines += [f"Fetched {rng.randint(1200, 3000)} kB in 0s ({rng.randint(9, 40)}.{rng.randint(0, 9)} MB/s)",
              "debconf: delaying package configuration, since apt-utils is not installed"]
    for pkg in ("libbrotli1", "libsasl2-2", "libnghttp2-14", "libcurl4", "curl"):
        lines += [f"Selecting previously unselected package {pkg}:amd64.", f"Preparing to unpack .../{pkg}.deb ...",
                  f"Unpacking {pkg}:amd64 ...", f"Setting up {pkg}:amd64 ..."]
    lines += ["Processing triggers for libc-bin (2.36-9+deb12u10) ...", "downloading uv 0.7.13 x86_64-unknown-linux-gnu",
              "no checksums to verify", "installing to /root/.local/bin", "  uv", "  uvx", "everything's installed!", "",
              "To add $HOME/.local/bin to your PATH, either restart your shell or run:", "",
              "    source $HOME/.local/bin/env (sh, bash, zsh)", "    source $HOME/.local/bin/env.fish (fish)",
              f"Using CPython 3.13.{rng.randint(0, 5)}", "Creating virtual environment at: .tv",
              f"Resolved 7 packages in {rng.randint(40, 900)}ms", f"Prepared 7 packages in {rng.randint(40, 900)}ms",
              f"Installed 7 packages in {rng.randint(5, 40)}ms", " + iniconfig==2.1.0", " + packaging==25.0",
              " + pluggy==1.6.0", " + pygments==2.19.2", " + pytest==8.4.1", " + pytest-json-ctrf==0.3.5", ""]
    return "\n".join(lines)


_FAILURE_MESSAGES = (
    ("AssertionError: {out} was not created", "assert False\nE        +  where False = exists()"),
    ("AssertionError: Expected {a} matches, got {b}", "assert {b} == {a}"),
    ("AssertionError: output differs from the reference at line {a}", "assert 'x' == 'y'"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '{out}'", ""),
    ("subprocess.TimeoutExpired: Command '['/app/run.sh']' timed out after {a} seconds", ""),
)


def _failure(rng: random.Random) -> tuple[str, str]:
    head, detail = rng.choice(_FAILURE_MESSAGES)
    values = {"out": "/app/output.json", "a": rng.randint(3, 120), "b": rng.randint(0, 2)}
    return head.format(**values), detail.format(**values)


def _pytest_ra(task: _Task, passed: list[bool], rng: random.Random) -> str:
    """Terminal-Bench style: `pytest -rA` on /tests/test_outputs.py."""
    path = "../tests/test_outputs.py"
    progress = "".join("." if ok else "F" for ok in passed)
    lines = [_rule("test session starts"), f"platform linux -- Python 3.13.{rng.randint(0, 5)}, pytest-8.4.1, pluggy-1.6.0",
             "rootdir: /tests", "plugins: json-ctrf-0.3.5", f"collected {len(passed)} items", "",
             f"{path} {progress}{' ' * max(1, 80 - len(path) - len(progress) - 7)}[100%]", ""]
    failures = []
    if not all(passed):
        lines.append(_rule("FAILURES"))
        for name, ok in zip(task.tests, passed):
            if ok:
                continue
            head, detail = _failure(rng)
            failures.append((name, head))
            lineno = rng.randint(20, 140)
            lines += [_rule(f"test_{name}", "_"), "", f"    def test_{name}():",
                      f'        """Check that {name.replace("_", " ")}."""', "        result = load_result()",
                      f">       assert check_{name}(result), \"{head.split(': ', 1)[-1]}\"",
                      f"E       {head}"] + [f"E       {d}" for d in detail.splitlines() if d] + [
                      "", f"/tests/test_outputs.py:{lineno}: {head.split(':', 1)[0]}"]
    lines.append(_rule("PASSES"))
    lines.append(_rule("short test summary info"))
    for name, ok in zip(task.tests, passed):
        if ok:
            lines.append(f"PASSED {path}::test_{name}")
    for name, head in failures:
        lines.append(f"FAILED {path}::test_{name} - {head}")
    lines.append(_rule(_counts(passed) + f" in {rng.uniform(0.02, 30):.2f}s"))
    return "\n".join(lines) + "\n"


def _counts(passed: list[bool]) -> str:
    fails = passed.count(False)
    return (f"{fails} failed, " if fails else "") + f"{passed.count(True)} passed" if passed.count(True) else f"{fails} failed"


def _pytest_verbose(task: _Task, passed: list[bool], rng: random.Random, path: str = "../tests/test_solution.py") -> str:
    """`pytest -v --tb=short` style (SWE-smith, e2egit)."""
    lines = [_rule("test session starts"), "platform linux -- Python 3.11.13, pytest-8.4.1, pluggy-1.6.0 -- /usr/local/bin/python3",
             "cachedir: .pytest_cache", "rootdir: /app", f"collecting ... collected {len(passed)} items", ""]
    for i, (name, ok) in enumerate(zip(task.tests, passed)):
        node = f"{path}::{_test_name(name)}"
        pct = f"[{(i + 1) * 100 // len(passed):3d}%]"
        left = f"{node} {'PASSED' if ok else 'FAILED'}"
        lines.append(left + " " * max(1, 80 - len(left) - len(pct)) + pct)
    failures = []
    if not all(passed):
        lines += ["", _rule("FAILURES")]
        for name, ok in zip(task.tests, passed):
            if ok:
                continue
            head, detail = _failure(rng)
            node = _test_name(name)
            failures.append((node, head))
            lines += [_rule(node, "_"), f"{path}:{rng.randint(10, 90)}: in {node}",
                      "    assert result.returncode == 0, result.stderr", f"E   {head}"] + [
                      f"E   {d}" for d in detail.splitlines() if d]
    lines.append(_rule("short test summary info"))
    for node, head in failures:
        lines.append(f"FAILED {path}::{node} - {head}")
    lines.append(_rule(_counts(passed) + f" in {rng.uniform(0.1, 9):.2f}s"))
    return "\n".join(lines) + "\n"


def _test_name(name: str) -> str:
    return name if name.startswith("test") else "test_" + name


def _polyglot_log(task: _Task, passed: list[bool], rng: random.Random) -> str:
    """Aider polyglot: banners around the language's own test runner, then the overall verdict."""
    ok = all(passed)
    exercise = task.name.split("_", 2)[2]
    runner = {
        "python": _inner_pytest, "javascript": _inner_jest, "go": _inner_go, "rust": _inner_cargo,
        "java": _inner_gradle, "cpp": _inner_ctest,
    }[task.lang](task, passed, rng)
    return (
        f"=== STARTING TEST EXECUTION ===\nLanguage: {task.lang}\nExercise: {exercise}\nWorking directory: /app\n"
        f"Running tests...\n{runner}\n=== TEST EXECUTION COMPLETED ===\nExit code: {0 if ok else 1}\n"
        f"{'PASSED' if ok else 'FAILED'} aider_polyglot_test\n"
    )


def _inner_pytest(task: _Task, passed: list[bool], rng: random.Random) -> str:
    module = task.main_file.removesuffix(".py")
    return _pytest_verbose(task, passed, rng, path=f"{module}_test.py::{module.title()}Test")


def _inner_jest(task: _Task, passed: list[bool], rng: random.Random) -> str:
    ok = all(passed)
    lines = [f"{'PASS' if ok else 'FAIL'} ./{task.main_file.removesuffix('.js')}.spec.js", f"  {task.main_file.removesuffix('.js').title()}"]
    for name, good in zip(task.tests, passed):
        lines.append(f"    {'✓' if good else '✕'} {name.replace('_', ' ')} ({rng.randint(1, 9)} ms)")
    for name, good in zip(task.tests, passed):
        if not good:
            lines += ["", f"  ● {task.main_file.removesuffix('.js').title()} › {name.replace('_', ' ')}", "",
                      "    expect(received).toEqual(expected) // deep equality", "", f"    Expected: {rng.randint(1, 9)}",
                      "    Received: undefined", "", f"      at Object.toEqual ({task.main_file.removesuffix('.js')}.spec.js:{rng.randint(10, 99)}:42)"]
    fails = passed.count(False)
    lines += ["", f"Test Suites: {'1 failed' if fails else '1 passed'}, 1 total",
              f"Tests:       {f'{fails} failed, ' if fails else ''}{passed.count(True)} passed, {len(passed)} total",
              "Snapshots:   0 total", f"Time:        {rng.uniform(0.3, 3):.3f} s", "Ran all test suites."]
    return "\n".join(lines)


def _inner_go(task: _Task, passed: list[bool], rng: random.Random) -> str:
    lines = []
    for name, good in zip(task.tests, passed):
        lines.append(f"=== RUN   {name}")
        if not good:
            lines.append(f"    bowling_test.go:{rng.randint(20, 90)}: {name}: Score() = {rng.randint(0, 200)}, want {rng.randint(0, 300)}")
        lines.append(f"--- {'PASS' if good else 'FAIL'}: {name} (0.00s)")
    lines += ["PASS", f"ok  \tbowling\t0.00{rng.randint(1, 9)}s"] if all(passed) else ["FAIL", f"FAIL\tbowling\t0.00{rng.randint(1, 9)}s"]
    return "\n".join(lines)


def _inner_cargo(task: _Task, passed: list[bool], rng: random.Random) -> str:
    lines = ["   Compiling forth v1.7.0 (/app)", f"    Finished `test` profile [unoptimized + debuginfo] target(s) in {rng.uniform(0.5, 9):.2f}s",
             "     Running tests/forth.rs (target/debug/deps/forth-3f2a9c1b7d4e5a60)", "", f"running {len(passed)} tests"]
    for name, good in zip(task.tests, passed):
        lines.append(f"test {name} ... {'ok' if good else 'FAILED'}")
    fails = [n for n, g in zip(task.tests, passed) if not g]
    if fails:
        lines += ["", "failures:", ""]
        for name in fails:
            lines += [f"---- {name} stdout ----", f"thread '{name}' panicked at tests/forth.rs:{rng.randint(10, 300)}:5:",
                      "assertion `left == right` failed", "  left: Err(UnknownWord)", " right: Ok(())",
                      "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace", ""]
        lines += ["", "failures:"] + [f"    {n}" for n in fails]
    verdict = "FAILED" if fails else "ok"
    lines += ["", f"test result: {verdict}. {passed.count(True)} passed; {len(fails)} failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"]
    if fails:
        lines += ["", "error: test failed, to rerun pass `--test forth`"]
    return "\n".join(lines)


def _inner_gradle(task: _Task, passed: list[bool], rng: random.Random) -> str:
    lines = ["> Task :compileJava", "> Task :processResources NO-SOURCE", "> Task :classes", "> Task :compileTestJava", "> Task :test", ""]
    for name, good in zip(task.tests, passed):
        lines.append(f"ReactTest > {name}() {'PASSED' if good else 'FAILED'}")
        if not good:
            lines.append(f"    org.opentest4j.AssertionFailedError at ReactTest.java:{rng.randint(20, 200)}")
    fails = passed.count(False)
    if fails:
        lines += ["", f"{len(passed)} tests completed, {fails} failed", "", "> Task :test FAILED", "",
                  "FAILURE: Build failed with an exception.", "", "* What went wrong:", "Execution failed for task ':test'.",
                  "> There were failing tests. See the report at: file:///app/build/reports/tests/test/index.html", "",
                  f"BUILD FAILED in {rng.randint(3, 30)}s"]
    else:
        lines += ["", f"BUILD SUCCESSFUL in {rng.randint(3, 30)}s"]
    lines.append("4 actionable tasks: 4 executed")
    return "\n".join(lines)


def _inner_ctest(task: _Task, passed: list[bool], rng: random.Random) -> str:
    lines = ["-- The CXX compiler identification is GNU 12.2.0", "-- Detecting CXX compiler ABI info - done",
             "-- Configuring done", "-- Generating done", "-- Build files have been written to: /app/build",
             "[ 25%] Building CXX object CMakeFiles/bank-account.dir/bank_account_test.cpp.o",
             "[ 50%] Building CXX object CMakeFiles/bank-account.dir/bank_account.cpp.o",
             "[ 75%] Linking CXX executable bank-account", "[100%] Built target bank-account"]
    fails = passed.count(False)
    for name, good in zip(task.tests, passed):
        if not good:
            lines += ["-" * 79, name.replace("_", " "), "-" * 79, f"/app/bank_account_test.cpp:{rng.randint(10, 120)}",
                      "." * 79, "", f"/app/bank_account_test.cpp:{rng.randint(10, 120)}: FAILED:",
                      "  REQUIRE( account.balance() == 0 )", "with expansion:", f"  {rng.randint(1, 500)} == 0", ""]
    lines.append("=" * 79)
    if fails:
        lines.append(f"test cases: {len(passed)} | {passed.count(True)} passed | {fails} failed")
    else:
        lines.append(f"All tests passed ({len(passed) * 3} assertions in {len(passed)} test cases)")
    return "\n".join(lines)


def _score_report(task: _Task, passed: list[bool], score: float) -> str:
    """The grader's JSON: passing checks score 1, the first failing one gets the remainder, so the mean is `score`."""
    remainder = round(score * len(passed) - passed.count(True), 4)
    checks = []
    for name, ok in zip(task.tests, passed):
        credit = 1.0 if ok else remainder
        remainder = remainder if ok else 0.0
        checks.append({"name": name, "passed": ok, "score": round(credit, 4)})
    report = {"task": task.name, "score": round(score, 2), "max_score": 1.0, "checks": checks}
    return "\n=== SCORE REPORT ===\n" + json.dumps(report, indent=2) + f"\nFinal reward: {_score_text(score)}\n"


def _colourize(log: str) -> str:
    """pytest's colours, as a log captured with a tty (or --color=yes) has them."""
    for word, colour in (("PASSED", _GREEN), ("FAILED", _RED), ("ERROR", _RED), ("passed", _GREEN), ("failed", _RED)):
        log = log.replace(word, f"{colour}{word}{_RESET}")
    return log.replace("E       ", f"{_RED}{_BOLD}E       {_RESET}{_RED}").replace("test session starts", f"{_BOLD}test session starts{_RESET}")


# --------------------------------------------------------------------------------------------------
# Building a trial's history: terminus-2
# --------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Command:
    keys: str
    duration: float
    output: str  # what the terminal prints after echoing the command line


class _Terminus:
    """One terminus-2 trial: its history, its episode rows and its summarization sub-agent rows."""

    def __init__(self, trial: _Trial):
        self.trial = trial
        self.task = trial.task
        self.rng = random.Random(trial.seed)
        rng = self.rng
        self.prompt = f"root@{rng.getrandbits(48):012x}:/app#"
        self.screen: list[str] = _SHELL_BANNER.split("\n") + [self.prompt]
        model = trial.run.model
        marathon = trial.kind == "marathon"  # always thinks at length, whatever the model
        scale = 1.25 if marathon else rng.lognormvariate(0, 0.35)
        self.think_kb = (6.0 if marathon else model.think_kb) * scale
        self.think_skip = 0.05 if marathon or model.think_kb >= 5 else 0.3
        self.verbosity = scale
        self.extra_text = model.extra_text
        self.fixed_at = (
            rng.randint(max(2, trial.episodes * 3 // 10), max(2, trial.episodes * 7 // 10))
            if trial.outcome != "fail" else trial.episodes + 1
        )
        self.actions: list[str] = []  # first lines of the commands run, for the hand-off summary
        self.episode = 0
        self.last_kind = ""
        self.pending_timeout = False  # the previous command timed out: wait for it or interrupt it
        self.parse_shape = 0  # which malformed reply was sent, so the error message matches it
        self.events = self._schedule()

    def _schedule(self) -> dict[int, str]:
        """Put each forced feature on its own episode, away from the first and the completion episodes."""
        events: dict[int, str] = {}
        slots = [ep for ep in range(1, self.trial.episodes - (2 if self.trial.completes else 0)) if ep not in self.trial.restarts]
        order = ("install", "timeout", "interrupt", "parse_error", "warnings", "token_limit")
        for feature in (f for f in order if f in self.trial.force):
            if slots:
                events[slots.pop(0)] = feature
        return events

    # -- rows --------------------------------------------------------------------------------------

    def main_rows(self) -> Iterator[list[Message]]:
        """The episode rows: each one the history so far, sharing message objects with the others."""
        for kind, value in self._walk():
            if kind == "row":
                yield list(value)

    def sub_rows(self) -> list[tuple[str, list[Message]]]:
        """The sub-agent rows of every summarization, as (trace_source, conversation)."""
        out = []
        handoffs = (value for kind, value in self._walk() if kind == "handoff")
        for n, (summary, questions, answers, _) in enumerate(handoffs, 1):
            out += [(f"summarization-{n}-summary", summary), (f"summarization-{n}-questions", questions),
                    (f"summarization-{n}-answers", answers)]
        return out

    def _walk(self) -> Iterator[tuple[str, object]]:
        """Play the trial: yields ("row", history) after each reply and ("handoff", parts) at each summarization."""
        first = _msg("user", self._first_prompt())
        history = [first]
        pending: Message | None = None
        for ep in range(self.trial.episodes):
            if ep in self.trial.restarts:
                parts = self._handoff(history)
                yield "handoff", parts
                history = [first] + parts[3]
            elif pending is not None:
                history.append(pending)
            reply, observation = self._episode(ep)
            history.append(_msg("assistant", reply))
            pending = _msg("user", observation) if observation is not None else None
            yield "row", history

    def _handoff(self, history: list[Message]) -> tuple[list, list, list, list]:
        """The three sub-agent conversations of a summarization and the new context's opening messages.

        As in Harbor, the summarizer sees the history without its last reply (unwound to fit the context).
        """
        rng, task = self.rng, self.task
        seen = history[:-1]
        actions = self.actions[-12:] or ["ls -la"]
        summary = (
            f"I have been working on {task.name}. Here's what I've accomplished:\n\n1. **Major Actions Completed**:\n"
            + "".join(f"   - Ran `{a}`\n" for a in actions)
            + f"\n2. **Important Information Learned**:\n   - The solution lives in /app/{task.main_file}\n"
            f"   - {_say(rng.choice(_THINK_FACTS), task, rng)}\n\n3. **Challenging Problems Addressed**:\n"
            f"   - {rng.choice(_ERRORS_SEEN)}: {_say(rng.choice(_THINK_FACTS), task, rng)}\n\n"
            f"4. **Current Status**:\n   - {'The tests pass locally' if self.fixed_at <= self.episode else 'Still debugging the failing cases'}\n"
        )
        asked = rng.sample(_QUESTIONS, rng.randint(5, 7))
        questions = "I have the following questions about the current state:\n\n" + "\n".join(
            f"{i}. {_say(q, task, rng)}" for i, q in enumerate(asked, 1)
        )
        answers = "Here are the answers:\n\n" + "\n".join(
            f"{i}. {_say(rng.choice(_THINK_FACTS), task, rng)}" for i in range(1, len(asked) + 1)
        )
        request = _msg("user", _SUMMARY_REQUEST.format(instruction=task.instruction))
        summary_msg = _msg("assistant", summary)
        ask = _msg("user", _QUESTIONS_REQUEST.format(instruction=task.instruction, summary=summary, screen=self._screen()))
        questions_msg = _msg("assistant", questions)
        summary_row = seen + [request, summary_msg]
        questions_row = [ask, questions_msg]
        answers_row = summary_row + [_msg("user", _ANSWERS_REQUEST.format(questions=questions)), _msg("assistant", answers)]
        restart = [ask, questions_msg, _msg("user", _HANDOFF.format(answers=answers))]
        return summary_row, questions_row, answers_row, restart

    # -- messages ----------------------------------------------------------------------------------

    def _first_prompt(self) -> str:
        return f"{_TERMINUS_PROMPT}Task Description:\n{self.task.instruction}\n\nCurrent terminal state:\nCurrent Terminal Screen:\n{self._screen()}"

    def _screen(self) -> str:
        """The visible 40-line screen: the last lines of the terminal, padded with blank lines."""
        lines = self.screen[-40:]
        return "\n".join(lines) + "\n" * (41 - len(lines))

    def _episode(self, ep: int) -> tuple[str, str | None]:
        """The agent's reply for episode `ep` and the harness's next user message (None after the last one)."""
        trial = self.trial
        self.episode = ep
        last = ep == trial.episodes - 1
        if trial.completes and last:
            return self._reply("confirm", [], complete=True), None
        if trial.completes and ep == trial.episodes - 2:
            reply = self._reply("complete", [], complete=True)
            return reply, f"Current terminal state:\n{self._observe([])}\n\n{_COMPLETION_CHECK}"
        event = self.events.get(ep) or self._random_event(ep)
        self.pending_timeout = event == "timeout"
        if event == "parse_error":
            return self._malformed(), self._parse_error()
        if event == "token_limit":
            return self._truncated_reply(), _TOKEN_LIMIT
        kind = self._kind(ep, event)
        commands = self._commands(kind, ep)
        reply = self._reply(kind, commands, extra=event == "warnings")
        if last:
            return reply, None
        if event == "timeout":  # the command is still running: the harness shows the screen, no prompt
            slow = commands[-1]
            self.screen += self._type([replace(slow, output="\n".join(slow.output.splitlines()[:20]))])[:-1]
            observation = _TIMEOUT.format(command=slow.keys, seconds=slow.duration, screen=self._screen())
        else:
            observation = self._observe(commands)
        if event == "warnings":
            observation = _WARNINGS + observation
        return reply, observation

    def _random_event(self, ep: int) -> str | None:
        rng = self.rng
        if ep == 0:
            return None
        if self.pending_timeout:
            return "interrupt" if rng.random() < 0.6 else "wait"
        roll = rng.random()
        if roll < 0.03:
            return "parse_error"
        if roll < 0.03 + self.extra_text:
            return "warnings"
        if roll < 0.08 + self.extra_text:
            return "timeout"
        if roll < 0.13 + self.extra_text:
            return "install"
        if roll < 0.135 + self.extra_text:
            return "token_limit"
        return None

    def _kind(self, ep: int, event: str | None) -> str:
        if ep == 0:
            return "explore"
        if event in ("install", "interrupt", "wait"):
            return event
        if event == "timeout":
            return "run"
        if ep == 1:
            return "inspect"
        nxt = {"explore": "inspect", "inspect": "write", "write": "run", "install": "run", "wait": "run", "interrupt": "write"}
        if self.last_kind in nxt:
            return nxt[self.last_kind]
        if ep < self.fixed_at:
            return self.rng.choice(("edit", "write", "run", "inspect"))
        return self.rng.choice(("test", "run", "test"))

    def _commands(self, kind: str, ep: int) -> list[_Command]:
        rng, task = self.rng, self.task
        self.last_kind = kind
        broken = ep < self.fixed_at
        file = task.main_file
        if kind == "explore":
            cmds = [_Command("ls -la\n", 0.1, _ls(task, rng)), _Command("cat README.md 2>/dev/null | head -40\n", 0.1, task.instruction.strip())]
            cmds.append(_Command("find . -type f -not -path './.git/*' | head -60\n", 0.1, _file_list(task, rng)))
            if self.trial.kind == "hostile":
                cmds.append(_Command("cat payload.txt\n", 0.1, _HOSTILE_TERMINAL))
        elif kind == "inspect":
            lines = rng.randint(40, 160)
            cmds = [_Command(f"head -n {lines} data/input.log\n", 0.1, _data_lines(rng, lines)),
                    _Command("wc -l data/*.log\n", 0.1, _wc(rng))]
            if task.name.startswith(("fix-git", "e2egit", "git-")):
                cmds.append(_Command("git log --oneline --graph --all | head -20\n", 0.1, "\n".join(
                    f"* \x1b[33m{rng.getrandbits(28):07x}\x1b[m {rng.choice(('Update layout', 'Fix typo', 'Add about page', 'Merge branch', 'WIP'))}" for _ in range(12))))
        elif kind == "write":
            cmds = [self._heredoc(file, task.lang)]
            if rng.random() < 0.2:
                cmds.append(self._heredoc("run.sh", "sh"))
            if rng.random() < 0.12:
                cmds.append(self._heredoc("config.json", "json"))
        elif kind == "run":
            runner = {"python": f"python3 {file}", "c": f"gcc -O2 -Wall -o solve {file} && ./solve data/input.log",
                      "cpp": "cmake -S . -B build && cmake --build build", "rust": "cargo build --release 2>&1 | tail -30",
                      "javascript": f"node {file} data/input.bin", "go": "go build ./... && go vet ./...",
                      "java": "gradle compileJava --offline -q", "sh": f"bash {file}"}[task.lang]
            output = _run_error(task, rng) if broken and rng.random() < 0.8 else _run_ok(rng)
            if rng.random() < 0.5:
                output = _build_log(rng, rng.randint(60, 400), task.lang) + "\n" + output
            cmds = [_Command(runner + "\n", rng.choice((1.0, 2.0, 5.0, 10.0, 30.0)), output)]
        elif kind == "edit":
            line = rng.randint(10, 60)
            code = _code(task.lang, task, rng, file).splitlines()
            excerpt = "\n".join(f"{i + 1:6d}\t{text}" for i, text in enumerate(code[line - 10: line + 50], line - 10))
            cmds = [_Command(f"cat -n {file} | sed -n '{line - 9},{line + 50}p'\n", 0.1, excerpt),
                    _Command(f"sed -i '{line}s/range(len(items))/range(len(items) - 1)/' {file}\n", 0.1, ""),
                    _Command(f"grep -n 'def \\|fn \\|func ' {file} | head -20\n", 0.1, "\n".join(
                        f"{rng.randint(1, 200)}:{line}" for line in rng.sample(_CODE_LINES[task.lang], 8)))]
        elif kind == "test":
            failing = rng.randint(1, len(task.tests)) if broken else 0
            cmds = [_Command("python3 -m pytest tests/ -q 2>&1 | tail -40\n", 5.0, _local_tests(task, rng, failing))]
        elif kind == "install":
            packages = rng.sample(["numpy", "scipy", "pandas", "requests", "cython", "pytest", "grpcio", "torch"], 3)
            cmds = [_Command(f"apt-get update && apt-get install -y build-essential && pip install {' '.join(packages)}\n", 60.0,
                             _install_log(rng, packages))]
        elif kind == "wait":
            cmds = [_Command("", float(rng.choice((10, 15, 30))), _build_log(rng, rng.randint(5, 60), task.lang))]
        else:  # interrupt
            cmds = [_Command("C-c", 0.1, "")]
        self.actions += [c.keys.splitlines()[0] if c.keys else "(wait)" for c in cmds]
        return cmds

    def _heredoc(self, path: str, lang: str) -> _Command:
        code = _code(lang, self.task, self.rng, path, helpers=int(self.rng.random() * 3 * self.verbosity))
        if self.trial.kind == "hostile" and lang == "sh":
            code += f"# {_HOSTILE_MARKUP}\necho '{_HOSTILE_TERMINAL}'\n"
        directory = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
        mkdir = f"mkdir -p {directory} && " if directory else ""
        return _Command(f"{mkdir}cat > {path} << 'EOF'\n{code}EOF\n", 0.1, "")

    def _observe(self, commands: list[_Command]) -> str:
        """Run `commands` on the simulated terminal and return the harness's observation message."""
        lines = self._type(commands)
        self.screen += lines
        if self.rng.random() < 0.08:
            return f"Current Terminal Screen:\n{self._screen()}"
        body = _limit_output("\n".join(lines))
        return f"New Terminal Output:\n\n{body}" + "\n" * max(1, 40 - body.count("\n"))

    def _type(self, commands: list[_Command]) -> list[str]:
        """The terminal lines of `commands`: each echoed after the prompt (heredoc lines after "> "), then its output."""
        lines: list[str] = []
        for cmd in commands:
            if cmd.keys == "C-c":
                lines.append("^C")
                lines.append(self.prompt)
                continue
            if cmd.keys:
                keys = cmd.keys.rstrip("\n").split("\n")
                lines.append(f"{self.prompt} {keys[0]}")
                lines += [f"> {k}" for k in keys[1:]]
            if cmd.output:
                lines += cmd.output.split("\n")
            lines.append(self.prompt)
        if not commands:
            lines.append(self.prompt)
        return lines

    def _reply(self, kind: str, commands: list[_Command], complete: bool = False, extra: bool = False) -> str:
        rng, task = self.rng, self.task
        fill = _Fill(task, rng)
        analysis = rng.choice(_ANALYSIS[kind]).format_map(fill)
        if self.think_kb == 0:  # models that hide their reasoning explain more in the analysis
            analysis += " " + " ".join(_say(fact, task, rng) for fact in rng.sample(_THINK_FACTS, rng.randint(8, 24)))
        if self.trial.kind == "hostile" and kind in ("explore", "inspect", "write"):
            analysis += f" The payload contains markup like {_HOSTILE_MARKUP} and escapes like \x1b]52;c;aGVsbG8=\x07."
        body = json.dumps(
            {
                "analysis": analysis,
                "plan": rng.choice(_PLAN[kind]).format_map(fill),
                "commands": [{"keystrokes": c.keys, "duration": c.duration} for c in commands],
                "task_complete": complete,
            },
            indent=2,
            ensure_ascii=False,
        )
        if extra:
            body = rng.choice((f"```json\n{body}\n```", f"Let me continue with the next step.\n\n{body}\n\nThis should work."))
        think = self._think_block(kind)
        return f"<think>{think}</think>\n\n{body}" if think else body

    def _think_block(self, kind: str) -> str:
        rng = self.rng
        if "think" in self.trial.force and kind in ("explore", "inspect", "write"):
            return _think(self.task, rng, 6.0 * self.verbosity)
        if self.think_kb <= 0 or rng.random() < self.think_skip:
            return ""
        text = _think(self.task, rng, rng.expovariate(1 / self.think_kb))
        if self.trial.kind == "hostile":
            text += f"\n\nThe file prints {_HOSTILE_MARKUP} when I cat it, and\x1b[2J clears the screen."
        return text

    def _malformed(self) -> str:
        rng = self.rng
        keys = f"python3 {self.task.main_file}\\n"
        shapes = (
            f"I need to run the solution again.\n{{\n  \"commands\": [\n    {{\n      \"keystrokes\": \"{keys}\",\n      \"duration\": 1.0\n    }}\n  ]\n}}\nThis should work!",
            # a raw newline inside a JSON string: "Invalid control character"
            '{\n  "analysis": "Writing the file.",\n  "plan": "Use a heredoc.",\n  "commands": [\n    {\n      "keystrokes":'
            ' "cat > x.py << \'EOF\'\nprint(\'hi\')\nEOF\n",\n      "duration": 0.1\n    }\n  ]\n}',
            '{\n  "analysis": "Running it."\n  "plan": "Run.",\n  "commands": []\n}',  # missing comma
            "I think the task is basically done, I just need to double check the output format and then I will finish.",
        )
        self.parse_shape = rng.randrange(len(shapes))
        think = self._think_block("run")
        return (f"<think>{think}</think>\n" if think else "") + shapes[self.parse_shape]

    def _parse_error(self) -> str:
        rng = self.rng
        feedback = _PARSE_ERRORS[self.parse_shape].format(line=rng.randint(3, 9), col=rng.randint(5, 60), char=rng.randint(40, 400))
        return f"Previous response had parsing errors:\n{feedback}\n\nPlease fix these issues and provide a proper JSON response."

    def _truncated_reply(self) -> str:
        """A reply cut off by the output limit: a long think and a heredoc that never ends."""
        rng, task = self.rng, self.task
        code = "".join(_code(task.lang, task, rng, task.main_file) for _ in range(14))
        start = json.dumps({"analysis": "I will write the complete implementation in one go.", "plan": "Write everything.",
                            "commands": [{"keystrokes": f"cat > {task.main_file} << 'EOF'\n{code}", "duration": 0.1}]}, indent=2)
        return f"<think>{_think(task, rng, 12)}</think>\n\n{start[: int(len(start) * 0.9)]}"


def _msg(role: str, content: str) -> Message:
    return {"role": role, "content": content}


# --------------------------------------------------------------------------------------------------
# Building a trial's history: openhands
# --------------------------------------------------------------------------------------------------


class _OpenHands:
    """An openhands trial: several user messages up front, then `<tool_call>` replies and tool results."""

    def __init__(self, trial: _Trial):
        self.trial = trial
        self.task = trial.task
        self.rng = random.Random(trial.seed)

    def main_rows(self) -> Iterator[list[Message]]:
        task, rng = self.task, self.rng
        history = [_msg("user", _OPENHANDS_PROMPT), _msg("user", task.instruction),
                   _msg("user", f"Retrieving content for: {task.instruction[:50]}"), _msg("user", "Added workspace context")]
        for ep in range(self.trial.episodes):
            reply, result = self._step(ep)
            history.append(_msg("assistant", reply))
            yield list(history)
            history.append(_msg("user", result))

    def sub_rows(self) -> list[tuple[str, list[Message]]]:
        return []

    def _step(self, ep: int) -> tuple[str, str]:
        rng, task = self.rng, self.task
        file = f"/app/{task.main_file}"
        if self.trial.completes and ep == self.trial.episodes - 1:
            return _tool_call("All done! The solution is in place and the tests pass.", "finish",
                              {"message": f"Task complete. Implemented {file}."}), ""
        choice = ep % 4 if ep < 4 else rng.randrange(4)
        if choice == 0:
            return _tool_call("Let me explore the workspace first.", "execute_bash", {"command": "ls -la /app && cat /app/README.md", "security_risk": "LOW"}), \
                _bash_result(_ANSI.sub("", _ls(task, rng)), 0)
        if choice == 1:
            code = _code(task.lang, task, rng, task.main_file)
            return _tool_call(f"I'll create {file} with the implementation.", "str_replace_editor",
                              {"command": "create", "path": file, "file_text": code, "security_risk": "MEDIUM"}), f"File created successfully at: {file}"
        if choice == 2:
            code = _code(task.lang, task, rng, task.main_file).splitlines()
            old = code[len(code) // 2]
            snippet = "\n".join(f"{i + 1:6d}\t{line}" for i, line in enumerate(code[len(code) // 2 - 4: len(code) // 2 + 4], len(code) // 2 - 4))
            return _tool_call("There is an off-by-one error; let me fix it.", "str_replace_editor",
                              {"command": "str_replace", "path": file, "old_str": old, "new_str": old + "  # fixed", "security_risk": "MEDIUM"}), \
                (f"The file {file} has been edited. Here's the result of running `cat -n` on a snippet of {file}:\n{snippet}\n"
                 "Review the changes and make sure they are as expected. Edit the file again if necessary.")
        failing = rng.randint(0, 2) if self.trial.outcome == "fail" else 0
        output = _local_tests(task, rng, failing)
        return _tool_call("Now let me run the tests.", "execute_bash", {"command": "cd /app && python3 -m pytest -q", "security_risk": "LOW"}), \
            _bash_result(output, 1 if failing else 0)


def _tool_call(thought: str, name: str, arguments: dict) -> str:
    return f"{thought}\n<tool_call>\n{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}\n</tool_call>"


def _bash_result(output: str, code: int) -> str:
    return f"{output}\n[The command completed with exit code {code}.]\n[Current working directory: /app]\n[Python interpreter: /usr/local/bin/python]\n[Command finished with exit code {code}]"


def _builder(trial: _Trial) -> _Terminus | _OpenHands:
    return _OpenHands(trial) if trial.run.model.agent == "openhands" else _Terminus(trial)


# --------------------------------------------------------------------------------------------------
# Rows and parquet shards
# --------------------------------------------------------------------------------------------------


def _row(trial: _Trial, conversation: list[Message], episode: int, verifier: str | None, source: str) -> tuple:
    run = trial.run
    return (conversation, run.model.agent, run.model.id, run.model.provider, trial.date, trial.task.name,
            f"episode-{episode}", run.run_id, trial.trial_name, trial.result, verifier, source)


def _rows(trials: list[_Trial]) -> Iterator[tuple]:
    """Every row in export order: main rows trial by trial, then sub-agent rows grouped by trace_source.

    Sub-agent rows are rebuilt from the trial seeds on a second pass (one pass per trace_source, in the
    order each first appears), which keeps memory flat however large the dataset is.
    """
    for trial in trials:
        verifier = _verifier(trial)
        for episode, conversation in enumerate(_builder(trial).main_rows()):
            yield _row(trial, conversation, episode, verifier, "main")
    sources = [f"summarization-{n}-{kind}" for n in range(1, 1 + max((len(t.restarts) for t in trials), default=0))
               for kind in ("summary", "questions", "answers")]
    for source in sources:
        n = int(source.split("-")[1])
        for trial in trials:
            if len(trial.restarts) >= n:
                conversation = dict(_builder(trial).sub_rows())[source]
                yield _row(trial, conversation, 0, _verifier(trial), source)


def _verifier(trial: _Trial) -> str | None:
    return _verifier_log(trial, random.Random(trial.seed ^ 0x5EED))


class _ShardWriter:
    """Writes rows into hub-named parquet shards, one row group per batch, renaming once the count is known."""

    def __init__(self, data_dir: Path, total: int, progress: Progress | None):
        self.data_dir = data_dir
        self.total = total
        self.progress = progress
        self.batch: list[tuple] = []
        self.batch_bytes = 0
        self.shard_rows = 0
        self.shard_bytes = 0
        self.done = 0
        self.paths: list[Path] = []
        self.writer: pq.ParquetWriter | None = None

    def add(self, row: tuple) -> None:
        size = sum(len(m["content"]) for m in row[0]) + len(row[_VERIFIER_COLUMN] or "")
        self.batch.append(row)
        self.batch_bytes += size
        if len(self.batch) >= BATCH_ROWS or self.batch_bytes >= BATCH_BYTES:
            self._flush()

    def _flush(self) -> None:
        if not self.batch:
            return
        if self.writer is None:
            path = self.data_dir / f".train-{len(self.paths):05d}.parquet.partial"
            self.paths.append(path)
            self.writer = pq.ParquetWriter(
                path,
                SCHEMA,
                compression="zstd",
                use_dictionary=_SHORT_COLUMNS,
                write_statistics=_SHORT_COLUMNS,
            )
        columns = list(zip(*self.batch))
        arrays = [pa.array(columns[0], SCHEMA.field(0).type)] + [pa.array(c, pa.string()) for c in columns[1:]]
        self.writer.write_table(pa.Table.from_arrays(arrays, schema=SCHEMA))
        self.done += len(self.batch)
        self.shard_rows += len(self.batch)
        self.shard_bytes += self.batch_bytes
        self.batch, self.batch_bytes = [], 0
        if self.shard_rows >= SHARD_ROWS or self.shard_bytes >= SHARD_BYTES:
            self._close_shard()
        if self.progress is not None:
            self.progress(self.done, self.total)

    def _close_shard(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        self.shard_rows = self.shard_bytes = 0

    def close(self) -> list[Path]:
        self._flush()
        self._close_shard()
        count = len(self.paths)
        final = [self.data_dir / f"train-{i:05d}-of-{count:05d}.parquet" for i in range(count)]
        for partial, path in zip(self.paths, final):
            partial.replace(path)
        return final


def write_demo(out: Path, rows: int = DEFAULT_ROWS, seed: int = 0, progress: Progress | None = None) -> Path:
    """Write a dataset in Hugging Face hub layout under `out` and return `out`."""
    if rows < 1:
        raise ValueError("rows must be at least 1")
    out = Path(out)
    data_dir = out / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    for old in data_dir.iterdir():  # shards of an earlier demo would be read as part of this one
        if _SHARD_NAME.match(old.name):
            old.unlink()
    trials = _plan(rows, seed)
    writer = _ShardWriter(data_dir, rows, progress)
    for row in _rows(trials):
        writer.add(row)
    shards = writer.close()
    (out / "README.md").write_text(_card(rows, seed, trials, len(shards)))
    return out


def _card(rows: int, seed: int, trials: list[_Trial], shards: int) -> str:
    models = sorted({t.run.model.id for t in trials})
    return f"""---
license: apache-2.0
pretty_name: tracetui demo traces
tags:
- synthetic
- agent-traces
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train-*
---
# tracetui demo traces

Synthetic coding-agent traces in the layout written by `harbor traces export`, generated by
`tracetui.data.demo.write_demo(rows={rows}, seed={seed})`. Nothing here comes from a real run.

- {rows} rows (one per agent episode, nested prefixes; summarization sub-agent rows at the end)
- {len(trials)} trials over {len({t.task.name for t in trials})} tasks, {shards} parquet shard(s)
- models: {", ".join(models)}

One trial (task `hostile-content`) deliberately contains terminal escape sequences, Rich markup and
bidi / zero-width characters, to check that a viewer renders them inert.
"""

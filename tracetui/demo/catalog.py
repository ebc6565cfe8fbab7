"""What a demo dataset is made of: the models, the tasks, the errors a trial can end with, the hostile payload.

Kept apart from the simulation so that adding a model or a task is a one-line edit to data, with no code to read.
Tasks are a pipe-separated table because their long instructions read better that way than as constructor calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Model:
    id: str
    provider: str
    agent: str
    skill: float  # base chance to solve a task of difficulty 0
    think_kb: float  # mean size of a <think> block; 0 = the model never shows its reasoning
    extra_text: float  # chance that a reply wraps its JSON in a fence or prose (harness warning)


MODELS = (
    Model("hosted_vllm/DCAgent/a1-e2egit", "hosted_vllm", "terminus-2", 0.42, 6.5, 0.04),
    Model("openai/gpt-5-mini-2025-08-07", "openai", "terminus-2", 0.62, 0.0, 0.08),
    Model("anthropic/claude-sonnet-4-5", "anthropic", "terminus-2", 0.75, 5.0, 0.35),
    Model("together_ai/Qwen/Qwen3-Coder-480B-A35B-Instruct", "together_ai", "terminus-2", 0.55, 5.0, 0.12),
)
OPENHANDS = Model("gpt-4o", "openai", "openhands", 0.5, 0.0, 0.0)
RUN_MODELS = (MODELS[0], OPENHANDS, MODELS[1], MODELS[2], MODELS[3])  # order of the first runs


@dataclass(frozen=True, slots=True)
class Task:
    name: str
    verifier: str  # tb (pytest -rA) | pytest-v | polyglot | graded
    lang: str  # language of the main solution file
    difficulty: float
    tests: tuple[str, ...]
    instruction: str  # ends with a newline, as Harbor's instruction.md files do
    main_file: str = field(init=False)  # the file the agent writes: the exercise's stub, else solve.<ext>

    def __post_init__(self) -> None:
        main_file = "solve." + EXT[self.lang]
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


EXT = {
    "python": "py",
    "rust": "rs",
    "c": "c",
    "javascript": "js",
    "go": "go",
    "sh": "sh",
    "java": "java",
    "cpp": "cpp",
    "json": "json",
}

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

_HOSTILE_TASK = Task(
    "hostile-content",
    "tb",
    "sh",
    0.5,
    ("sanitizer_exists", "strips_escape_sequences", "keeps_plain_text"),
    "The file /app/payload.txt was captured from an untrusted program and contains terminal escape sequences,"
    " markup and invisible characters. Write /app/solve.sh that prints the file with every control sequence"
    " removed. Example of what it contains: \x1b[1;31m[bold red]boom[/]\x1b[0m and \u202eevil\u202c.\n",
)


def _parse_tasks(table: str) -> tuple[Task, ...]:
    tasks = []
    for line in table.strip().splitlines():
        name, verifier, lang, difficulty, tests, instruction = (part.strip() for part in line.split(" | ", 5))
        tasks.append(
            Task(name, verifier, lang, float(difficulty), tuple(tests.split()), instruction.replace("\\n", "\n") + "\n")
        )
    return tuple(tasks)


TASKS = _parse_tasks(_TASK_TABLE)
TASK_BY_NAME = {task.name: task for task in TASKS} | {_HOSTILE_TASK.name: _HOSTILE_TASK}
CORE_TASKS = TASKS[:10]  # the early runs share these, so one task has attempts by several models

ERRORS = (  # exception name, weight, whether the verifier still ran
    ("AgentTimeoutError", 0.55, True),
    ("ContextLengthExceededError", 0.1, False),
    ("NonZeroAgentExitCodeError", 0.08, False),
    ("RewardFileNotFoundError", 0.06, True),
    ("VerifierTimeoutError", 0.06, True),
    ("SummarizationTimeoutError", 0.05, False),
    ("BadRequestError", 0.05, False),
    ("DaytonaError", 0.05, False),
)
VERIFIER_RAN = {name: ran for name, _, ran in ERRORS}


# Hostile content: a viewer must show all of this as inert text.
HOSTILE_MARKUP = "[bold red]boom[/] [link=file:///etc/passwd]x[/link] [@click=app.quit]close[/]"
HOSTILE_TERMINAL = (
    "\x1b[2J\x1b[H\x1b[1;31mWARNING\x1b[0m system compromised\x07\n"
    "clipboard: \x1b]52;c;aGVsbG8=\x07 (OSC 52 write)\n"
    "link: \x1b]8;;https://example.invalid/phish\x1b\\click me\x1b]8;;\x1b\\\n"
    "tmux: \x1bPtmux;\x1b\x1b]52;c;ZXZpbA==\x07\x1b\\\n"
    "cursor: \x1b[5;10Hmoved\x1b[3A\x1b[2Kup\x1b[10Cright\x1b[s\x1b[u\x1b[?25l\x1b[?1049h\n"
    "title: \x1b]0;pwned\x07 bell\x07\x07\n"
    "bidi: user\u202eTXT.EXE\u202c and \u2067isolate\u2069\n"
    "zero-width: pass\u200bword ad\u200dmin \ufeffBOM \u2060joiner\n"
    "markup: " + HOSTILE_MARKUP + "\n"
)

"""Disks that refuse writes, for the label store's tests: the real write calls fail in the kernel, and
SQLite reports it through the store's real code path (no mock anywhere).

- `refused_writes()`: this process may write no byte past the first 4 KB of any file (RLIMIT_FSIZE), so
  no SQLite journal frame fits: every commit fails as on a full disk, while reads work. Deterministic,
  needs no privileges; keep the window short (it holds for every file the process writes).
- `small_tmpfs(script)`: runs a Python script in a new user and mount namespace with a tiny tmpfs at
  `$TRACETUI_TMPFS`, a real full disk; skips when the machine does not allow the namespace.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

WRITABLE_BYTES = 4096
"""Below one WAL frame (a page of 4096 bytes plus its header, after the file's own header)."""


@contextmanager
def refused_writes() -> Iterator[None]:
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of the signal
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (WRITABLE_BYTES, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)


def small_tmpfs(folder: Path, script: str, size: str = "256k", timeout: float = 60) -> subprocess.CompletedProcess:
    """Run `script` (Python) with a tmpfs of `size` mounted at `folder` in a namespace of its own; the
    mount is gone when it ends. `TRACETUI_TMPFS` names the folder."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1): cannot mount a small tmpfs")
    folder.mkdir(parents=True, exist_ok=True)
    probe = subprocess.run(
        [unshare, "--user", "--map-root-user", "--mount", "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", folder],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs in a user namespace here: {probe.stderr.strip()}")
    shell = f'mount -t tmpfs -o size={size} tmpfs "$TRACETUI_TMPFS" && exec "$0" -c "$1"'
    return subprocess.run(
        [unshare, "--user", "--map-root-user", "--mount", "sh", "-c", shell, sys.executable, textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "TRACETUI_TMPFS": str(folder)},
    )

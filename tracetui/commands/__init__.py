"""Subcommands that work without the UI, each reached through `tracetui.cli.COMMANDS`; shared argument helpers."""

from __future__ import annotations

import argparse
import sys


class Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument in one line (exit 2) instead of usage plus the error."""

    def error(self, message: str):
        print(f"{self.prog}: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def print_progress(fraction: float, message: str) -> None:
    """Conversion and export progress on stderr, only when it is a terminal."""
    if sys.stderr.isatty():
        end = "\n" if fraction >= 1 else ""
        print(f"\r\x1b[K{fraction:4.0%} {message}", end=end, file=sys.stderr, flush=True)

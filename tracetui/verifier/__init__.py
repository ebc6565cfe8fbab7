"""Verifier-log parsing: turn a test run's output into counts, tests and failures."""

from .parse import Failure, TestCase, VerifierReport, parse_verifier, strip_ansi, verdict_line

__all__ = ["Failure", "TestCase", "VerifierReport", "parse_verifier", "strip_ansi", "verdict_line"]

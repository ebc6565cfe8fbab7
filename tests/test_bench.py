"""The benchmark harness itself: a probe that fails fails the run, by name."""

from __future__ import annotations

import subprocess

import pytest

from bench import run


def test_a_failing_probe_fails_the_run_and_is_named(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(run, "ERRORS", [])
    monkeypatch.setattr(run, "OUT", tmp_path / "bench" / "out")

    def crashed() -> None:
        raise subprocess.CalledProcessError(1, "x") from None

    def probe() -> None:
        raise RuntimeError("bench.probes ['memory'] failed (1):\nTraceback ...\nScreenStackError: No screens on stack")

    assert run.attempt("memory", probe) is None
    assert run.attempt("first screen", lambda: 1.5) == 1.5
    with pytest.raises(SystemExit) as exited:
        run.fail_if_any()
    assert exited.value.code == 1
    said = capsys.readouterr().err
    assert "memory: ScreenStackError: No screens on stack" in said and "first screen" not in said.split("FAILED")[-1]
    (kept,) = (tmp_path / "bench" / "out" / "failures").iterdir()
    assert "Traceback" in kept.read_text()  # the probe's whole stderr, to find out why
    with pytest.raises(subprocess.CalledProcessError):  # not a probe's failure: the run stops at once
        run.attempt("other", crashed)

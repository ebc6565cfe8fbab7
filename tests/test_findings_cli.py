"""`tracetui findings`, `stats --by finding`, `export --exclude` and --filter on every command, run as a user would."""

from __future__ import annotations

import csv
import json

import pytest

from tracetui.commands.findings import FIELDS

from .conftest import write_parquet
from .test_export import tracetui
from .test_findings_index import planted_rows


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return str(write_parquet(tmp_path_factory.mktemp("cli") / "planted.parquet", planted_rows()))


def test_findings_formats(source):
    jsonl = tracetui("findings", source, "--format", "jsonl")
    assert jsonl.returncode == 0, jsonl.stderr
    records = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert [tuple(r) for r in records] == [FIELDS] * 3
    assert [(r["trial_name"], r["kind"], r["message"]) for r in records] == [
        ("fix-parser__tamper1", "test-tampering", 3),
        ("fix-parser__claim01", "false-claim", 3),
        ("fix-parser__claim01", "no-tests-run", 3),
    ]
    assert records[0]["evidence"] == "sed -i 's/assert/assert True or/' tests/test_outputs.py"
    assert records[0]["result"] == "1.0" and records[0]["task"] == "fix-parser" and records[0]["dataset"] == "planted"

    rows = list(csv.DictReader(tracetui("findings", source, "--format", "csv").stdout.splitlines()))
    assert [r["kind"] for r in rows] == ["test-tampering", "false-claim", "no-tests-run"] and list(rows[0]) == list(
        FIELDS
    )
    table = tracetui("findings", source)
    assert table.stdout.splitlines()[0].split() == ["trial_name", "model", "kind", "message", "evidence"]
    assert "3 findings in 2 trials" in table.stderr


def test_findings_filters_and_kinds(source):
    only = tracetui("findings", source, "--format", "jsonl", "--filter", "finding=false-claim")
    assert [json.loads(line)["kind"] for line in only.stdout.splitlines()] == ["false-claim"]
    every_kind = tracetui(
        "findings", source, "--format", "jsonl", "--filter", "finding=claim", "--kind", "no-tests-run"
    )
    assert [json.loads(line)["kind"] for line in every_kind.stdout.splitlines()] == ["no-tests-run"]
    excluded = tracetui("findings", source, "--format", "jsonl", "--exclude", "finding=tampering")
    assert {json.loads(line)["trial_name"] for line in excluded.stdout.splitlines()} == {"fix-parser__claim01"}
    nothing = tracetui("findings", source, "--filter", "model=gpt-4o")
    assert nothing.returncode == 0 and nothing.stdout.strip() == "(no findings)"


def test_stats_by_finding(source):
    done = tracetui("stats", source, "--by", "finding", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = {r["finding"]: (r["trials"], r["pass"]) for r in json.loads(done.stdout)}
    assert rows == {"(none)": (1, 1), "false-claim": (1, 0), "no-tests-run": (1, 0), "test-tampering": (1, 1)}
    by_model = json.loads(tracetui("stats", source, "--by", "finding,model", "--format", "json").stdout)
    assert {(r["finding"], r["model"]) for r in by_model} >= {
        ("(none)", "gpt-4o"),
        ("test-tampering", "openai/gpt-5-mini-2025-08-07"),
    }
    labelled = tracetui("stats", source, "--filter", "label=reward-hack")  # configured labels are values
    assert labelled.returncode == 0 and labelled.stdout.strip() == "(no trials)"


def test_export_a_clean_subset(source, tmp_path):
    out = tmp_path / "clean.jsonl"
    done = tracetui(
        "export", source, "--exclude", "finding=test-tampering", "--exclude", "finding=false-claim", "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert {json.loads(line)["trial_name"] for line in out.read_text().splitlines()} == {"fix-parser__clean01"}
    done = tracetui("export", source, "--filter", "finding=test-tampering", "-o", str(out), "--force")
    assert done.stdout.startswith("exported 1 trial (4 rows)")


@pytest.mark.parametrize(
    "args, message",
    [
        (("findings", "SRC", "--filter", "outcome=failed"), "did you mean fail?"),
        (("findings", "SRC", "--kind", "tampering"), "invalid choice"),
        (("stats", "SRC", "--exclude", "finding=nothing-like-it"), "no such value"),
        (("SRC", "--filter", "modle=gpt"), "no facet 'modle'"),
        (("SRC", "--filter", "outcome=failed"), "did you mean fail?"),
        (("SRC", "--filter", "model=gpt"), "matches 2 values"),
        (("export", "SRC", "--exclude", "colour=red", "-o", "out.jsonl"), "no facet 'colour'"),
    ],
)
def test_bad_filters_exit_2_in_one_line(source, tmp_path, args, message):
    done = tracetui(*[source if a == "SRC" else str(tmp_path / a) if a.startswith("out.") else a for a in args])
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr and "Traceback" not in done.stderr

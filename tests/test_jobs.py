"""Harbor job folders as a source (issue 22): layouts, ATIF read as harbor's exporter reads it, the same
answers as the exported dataset, running trials, the summary cache, and bad input."""

from __future__ import annotations

import json
import math
import os
import shutil
import sys

import numpy as np
import pytest

from tracetui.data.errors import SourceError
from tracetui.data.facets import FilterState
from tracetui.data.findings_index import build_findings_index
from tracetui.data.jobs.follow import Follower
from tracetui.data.jobs.layout import JOB, ROOT, TRIAL, kind
from tracetui.data.jobs.opening import expand, is_jobs_path, jobs_source, open_job
from tracetui.data.source_kinds import resolve
from tracetui.data.sources import SourceSpec
from tracetui.data.verifier_index import build_verifier_index

from .conftest import write_parquet
from .jobs_helpers import (
    ATIF,
    SAMPLE,
    by_name,
    copy_tree,
    open_paths,
    trajectory,
    tree_state,
    write_job,
    write_json,
    write_trial,
)
from .test_jobs_live import poll_and_apply

JOBS = SAMPLE / "jobs"
EXPORT = SAMPLE / "export" / "hub"
RUNNING_TRIAL = "s-fizz-buzz__Cs2qGvQ"


def rows_of(storage) -> list[dict]:
    return [row for position in range(len(storage.entries)) for row in storage.exported_rows(position)]


def row_key(row: dict) -> tuple:
    return (row["trial_name"], row["trace_source"] != "main", row["trace_source"], int(row["episode"].split("-")[1]))


# --- layouts --------------------------------------------------------------------------------------


def test_layouts_are_told_apart_by_their_folders(tmp_path):
    job = JOBS / "2026-07-01__09-00-00"
    assert kind(JOBS) == ROOT and kind(job) == JOB and kind(job / "s-fizz-buzz__fRDnSf2") == TRIAL
    assert not is_jobs_path(EXPORT) and not is_jobs_path(tmp_path)
    write_parquet(tmp_path / "data" / "train-00000-of-00001.parquet", [{"conversations": [], "task": "t"}])
    (tmp_path / "config.json").write_text("{}")
    assert not is_jobs_path(tmp_path)  # a dataset folder, even with a config.json


def test_a_folder_that_is_neither_says_what_was_looked_for(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("hello")
    with pytest.raises(SourceError) as caught:
        resolve(SourceSpec(str(tmp_path)))
    message = str(caught.value)
    assert "\n" not in message and "harbor job folder" in message and "agent/" in message


def test_a_jobs_root_is_one_source_per_job_and_a_trial_folder_its_job():
    root = jobs_source(JOBS)
    assert root is not None
    assert [s.dataset_id for s in expand(root)] == [str(p) for p in sorted(JOBS.iterdir())]
    trial = jobs_source(JOBS / "2026-07-01__09-00-00" / "s-fizz-buzz__fRDnSf2")
    assert trial is not None
    [one] = expand(trial)
    assert one.dataset_id == str(JOBS / "2026-07-01__09-00-00") and one.trial == "s-fizz-buzz__fRDnSf2"
    assert [s.info(0).trial_name for s in [open_paths(JOBS / "2026-07-01__09-00-00" / "s-fizz-buzz__fRDnSf2")]] == [
        "s-fizz-buzz__fRDnSf2"
    ]


# --- the rows harbor's exporter writes ------------------------------------------------------------


def test_the_sample_job_gives_the_rows_of_its_export():
    import pyarrow.parquet as pq

    exported = pq.read_table(next(EXPORT.rglob("*.parquet"))).to_pylist()
    rows = [row for source in expand(jobs_source(JOBS)) for row in rows_of(open_job(source))]
    assert sorted(rows, key=row_key) == sorted(exported, key=row_key)


def test_golden_trajectories_give_the_exporters_rows_byte_for_byte():
    """harbor's golden trajectories (openhands with and without function calling, terminus-2 with a
    continued trajectory, with summarization sub-agents, with a malformed reply, timing out), and the
    rows harbor 0.26's exporter writes from them: the same JSON, key order included."""
    [source] = expand(jobs_source(ATIF / "jobs"))
    rows = sorted(rows_of(open_job(source)), key=row_key)
    expected = (ATIF / "exported.rows.jsonl").read_text().splitlines()
    assert [json.dumps(row, ensure_ascii=False) for row in rows] == expected


def test_continued_trajectories_join_one_history_and_sub_agents_stay_apart():
    session = open_paths(ATIF / "jobs")
    names = by_name(session)
    linear = session.history(names["t2-linear-history__Linear1"])
    restarts = [m.index for m in linear.messages if m.restart]
    assert len(restarts) == 1 and linear.episodes == tuple(range(7))
    assert linear.messages[restarts[0]].content.startswith("You are picking up work from a previous AI agent")
    summarized = session.history(names["t2-summarization__Summ001"])
    assert [s.trace_source for s in summarized.subagents] == [
        "summarization-1-summary",
        "summarization-1-questions",
        "summarization-1-answers",
    ]
    openhands = session.history(names["oh-hello-world__FnCall1"])
    assert openhands.messages[0].content.startswith("<tools>\n[") and "<tool_call>" in openhands.messages[4].content


# --- same trial, same answers -----------------------------------------------------------------------


def answers(session) -> dict[str, tuple]:
    verifiers = build_verifier_index(session)
    findings = build_findings_index(session, verifiers=verifiers)
    out = {}
    for trial in range(len(session)):
        info = session.info(trial)
        kinds = sorted((f.kind, f.message) for f in findings.of(trial))
        out[info.trial_name] = (
            info.task,
            info.model,
            info.outcome,
            info.result,
            tuple(verifiers.failed[trial]),
            tuple(kinds),
        )
    return out


def test_a_job_folder_and_its_export_give_the_same_answers():
    jobs, exported = answers(open_paths(JOBS)), answers(open_paths(EXPORT))
    assert set(jobs) - set(exported) == {RUNNING_TRIAL}  # the exporter leaves out a trial still running
    assert {name: jobs[name] for name in exported} == exported
    assert jobs[RUNNING_TRIAL][2] == "running"


def test_the_golden_job_and_its_exported_rows_give_the_same_answers(tmp_path):
    dataset = tmp_path / "golden.jsonl"
    shutil.copy(ATIF / "exported.rows.jsonl", dataset)
    assert answers(open_paths(ATIF / "jobs")) == answers(open_paths(dataset))


def test_stats_and_findings_commands_agree_and_count_running_apart(capsys):
    from tracetui.commands.findings import run as findings
    from tracetui.commands.stats import run as stats

    outputs = {}
    for source in (JOBS, EXPORT):
        assert stats([str(source), "--by", "task,model", "--format", "json"]) == 0
        records = json.loads(capsys.readouterr().out)
        assert findings([str(source), "--format", "jsonl"]) == 0
        found = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        outputs[source] = (records, [{k: v for k, v in f.items() if k != "dataset"} for f in found])
    (job_stats, job_findings), (export_stats, export_findings) = outputs[JOBS], outputs[EXPORT]
    assert sorted(job_findings, key=str) == sorted(export_findings, key=str)
    running = [r for r in job_stats if r.get("running")]
    assert [(r["task"], r["running"], r["pass_rate"]) for r in running] == [("s-fizz-buzz", 1, None)]
    comparable = ("trials", "pass", "partial", "fail", "error", "unknown", "pass_rate", "mean_reward")
    done = [{k: r[k] for k in ("task", "model", *comparable)} for r in job_stats if not r.get("running")]
    assert done == [{k: r[k] for k in ("task", "model", *comparable)} for r in export_stats]


# --- running trials -------------------------------------------------------------------------------


def test_a_trial_without_result_is_running_and_not_graded():
    session = open_paths(JOBS)
    trial = by_name(session)[RUNNING_TRIAL]
    info = session.info(trial)
    assert info.outcome == "running" and info.result is None and info.episodes == 2 and math.isnan(info.reward)
    from tracetui.data.stats import group_stats

    mask = np.array([session.info(t).dataset == "2026-07-01__12-00-00" for t in range(len(session))])
    [row] = group_stats(session, mask, ("dataset",))
    assert (row.counts.trials, row.counts.running, row.counts.graded, row.counts.errors) == (2, 1, 1, 1)
    assert "running" in session.facets.facets["outcome"].labels


def test_every_job_is_a_value_of_the_dataset_facet_and_mixes_with_datasets(tmp_path):
    session = open_paths(JOBS, EXPORT)
    assert session.dataset_names == ["2026-07-01__09-00-00", "2026-07-01__12-00-00", "hub"]
    counts = session.facets.apply(FilterState()).counts
    assert list(counts["dataset"]) == [2, 2, 3]


# --- tokens, cost, time -----------------------------------------------------------------------------


def test_usage_per_trial_from_result_and_nothing_for_a_dataset():
    session = open_paths(JOBS, EXPORT)
    names = {(session.info(t).dataset, session.info(t).trial_name): t for t in range(len(session))}
    usage = session.usage_of(names[("2026-07-01__09-00-00", "s-fizz-buzz__fRDnSf2")])
    assert (usage.input_tokens, usage.cached_tokens, usage.uncached_tokens, usage.output_tokens) == (
        9180,
        4800,
        4380,
        1167,
    )
    assert usage.cost_usd == pytest.approx(0.045045)
    assert (usage.agent_seconds, usage.verifier_seconds, usage.total_seconds) == (125, 25, 160)
    vllm = session.usage_of(names[("2026-07-01__12-00-00", "s-hello-world__EgcsGA2")])
    assert math.isnan(vllm.cost_usd) and vllm.input_tokens == 5853  # the hosted_vllm job records no cost
    running = session.usage_of(names[("2026-07-01__12-00-00", RUNNING_TRIAL)])
    assert running.input_tokens > 0 and math.isnan(running.agent_seconds)  # so far, from its steps
    exported = session.usage_of(names[("hub", "s-fizz-buzz__fRDnSf2")])
    assert not exported.recorded


def test_per_message_metrics_of_the_agent_steps():
    session = open_paths(JOBS / "2026-07-01__09-00-00")
    trial = by_name(session)["s-fizz-buzz__fRDnSf2"]
    history = session.history(trial)
    metrics = history.metrics
    assert len(metrics) == len(history.messages)
    shown = [(m.role, metrics[m.index]) for m in history.messages if metrics[m.index] is not None]
    assert [role for role, _ in shown] == ["assistant"] * 4
    first = shown[0][1]
    assert (first.prompt_tokens, first.completion_tokens, first.cached_tokens) == (1259, 278, 0)
    assert open_paths(EXPORT).history(0).metrics == ()  # the exported dataset records none


# --- the summary cache ------------------------------------------------------------------------------


def test_a_reopen_reads_no_trajectory_when_nothing_changed(tmp_path):
    """Stamps, not contents: a running trial's files by size and mtime, a finished trial's result.json
    and the mtimes of its folders (harbor writes a finished trial's files whole, if ever again)."""
    jobs = copy_tree(JOBS, tmp_path / "jobs")
    first = open_paths(jobs)
    running = jobs / "2026-07-01__12-00-00" / RUNNING_TRIAL / "agent" / "trajectory.json"
    finished = jobs / "2026-07-01__09-00-00" / "s-fizz-buzz__fRDnSf2" / "agent"
    before = {name: (first.info(t).outcome, first.info(t).episodes) for name, t in by_name(first).items()}
    for path in (running, finished / "trajectory.json"):
        info = path.stat()
        path.write_bytes(b"x" * info.st_size)  # same size, and the same mtime again: a reopen cannot tell
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    os.utime(finished, ns=(finished.stat().st_atime_ns, finished.stat().st_mtime_ns))
    again = open_paths(jobs)
    assert {name: (again.info(t).outcome, again.info(t).episodes) for name, t in by_name(again).items()} == before
    info = running.stat()
    os.utime(running, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))  # a running trial's file changed
    (finished / "trajectory.cont-1.json").write_text("{}")  # a finished trial's folder changed
    changed = open_paths(jobs)  # on the kept summaries: the follower's first look stamps the trials
    follower = Follower(changed.datasets)
    assert poll_and_apply(follower, changed) is None  # unreadable now: perhaps halfway written
    assert poll_and_apply(follower, changed) is not None  # the same a poll later: taken
    names = by_name(changed)
    assert (
        changed.info(names[RUNNING_TRIAL]).outcome == "error"
        and changed.info(names["s-fizz-buzz__fRDnSf2"]).outcome == "error"
    )


def test_tracetui_cache_lists_and_clears_the_job_summaries(tmp_path, capsys):
    """The summaries kept for each job folder are listed (the job folder, "job summaries"), held while a
    process has the job open, and cleared by the job's path, its jobs root's, or with everything."""
    from tracetui.commands.cache import run as cache
    from tracetui.data import cache_folders

    jobs = copy_tree(JOBS, tmp_path / "jobs")
    open_paths(jobs)
    capsys.readouterr()
    assert cache(["--format", "csv"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0] == "source,kind,size,last_used"
    assert sorted(line.split(",")[:2] for line in listed[1:]) == [
        [str(jobs / name), "job summaries"] for name in ("2026-07-01__09-00-00", "2026-07-01__12-00-00")
    ]
    assert cache(["clear", str(jobs)]) == 0  # this process has them open: kept
    assert "kept 2 that a running tracetui has open" in capsys.readouterr().err
    for folder in list(cache_folders._held):  # as if that process had quit
        cache_folders.release(folder)
    assert cache(["clear", str(jobs / "2026-07-01__09-00-00")]) == 0
    assert capsys.readouterr().err.startswith("removed 1 from the cache")
    assert [entry.source for entry in cache_folders.entries()] == [str(jobs / "2026-07-01__12-00-00")]
    assert cache(["clear", f"{jobs}/"]) == 0 and cache_folders.entries() == []
    open_paths(jobs)
    assert len(cache_folders.entries()) == 2  # made again at the next open


def test_a_trials_files_are_listed_in_harbor_views_order_and_read_bounded(tmp_path, monkeypatch):
    from tracetui.data.jobs import trial_files as files

    folder = write_trial(write_job(tmp_path / "jobs" / "j"), "t__aaaaaaa")
    (folder / "trial.log").write_text("x" * 100)
    (folder / "exception.txt").write_text("Traceback\n")
    (folder / "config.lock").write_text("lock\n")
    (folder / "agent" / "sub").mkdir()
    (folder / "agent" / "sub" / "deep.log").write_text("deep\n")
    (folder / "agent" / "linked").symlink_to(tmp_path)  # a link to a folder: listed, not walked
    listed, more = files.trial_files(folder)
    assert [(f.kind, f.path) for f in listed] == [
        ("agent log", "agent/linked"),
        ("agent log", "agent/sub/deep.log"),
        ("verifier", "verifier/test-stdout.txt"),
        ("config", "config.json"),
        ("lock", "config.lock"),
        ("trial log", "trial.log"),
        ("exception", "exception.txt"),
        ("result", "result.json"),
        ("trajectory", "agent/trajectory.json"),
    ] and not more
    assert listed[0].link and files.read_page(folder, listed[0]).text is None
    monkeypatch.setattr(files, "PAGE_BYTES", 40)
    log = next(f for f in listed if f.kind == "trial log")
    page = files.read_page(folder, log)
    assert (
        page.text is not None
        and page.text.startswith("x" * 40 + "\n")
        and page.note == "trial.log: the first 40 B of 100 B shown."
    )
    monkeypatch.setattr(files, "MAX_FILES", 3)
    assert [len(found) for found, more in [files.trial_files(folder)] if more] == [3]


def test_a_reopen_with_the_summaries_kept_opens_before_the_first_frame(tmp_path):
    """Kept summaries, and no trial folder came since: the app opens the job before its first frame, as a
    converted dataset (no loading screen); a new trial folder means reading with progress again."""
    from tracetui.data import cache_folders
    from tracetui.data.jobs.trial import SUMMARY_VERSION
    from tracetui.data.session import all_cached, prepare

    jobs = copy_tree(JOBS, tmp_path / "jobs")
    sources = prepare([SourceSpec(str(jobs))])
    assert not all_cached(sources)
    open_paths(jobs)
    assert all_cached(sources)
    job = jobs / "2026-07-01__09-00-00"
    write_trial(job, "s-new-task__NewNew1")
    (kept,) = [entry.folder for entry in cache_folders.entries() if entry.source == str(job)]
    later = (kept / f"summaries-v{SUMMARY_VERSION}.json").stat().st_mtime_ns + 1  # the clock's tick may be coarse
    os.utime(job, ns=(later, later))
    assert not all_cached(sources)
    open_paths(jobs)
    assert all_cached(sources)


# --- bad input --------------------------------------------------------------------------------------


@pytest.fixture
def bad_job(tmp_path):
    job = write_job(tmp_path / "jobs" / "bad")
    write_trial(job, "good__aaaaaaa")
    (write_trial(job, "notjson__bbbbbbb") / "agent" / "trajectory.json").write_text('{"steps": [')
    write_json(
        write_trial(job, "schema__ccccccc") / "agent" / "trajectory.json", trajectory(1, schema_version="ATIF-v9.0")
    )
    (job / "empty__ddddddd").mkdir()
    (job / "loop__eeeeeee").symlink_to(job / "loop__eeeeeee")
    return job


def problems(session) -> dict[str, tuple[str, str | None]]:
    return {session.info(t).trial_name: (session.info(t).outcome, session.problem(t)) for t in range(len(session))}


def test_bad_trials_are_errors_with_one_line_and_the_rest_opens(bad_job):
    found = problems(open_paths(bad_job))
    assert found["good__aaaaaaa"] == ("pass", None)
    assert found["notjson__bbbbbbb"][0] == "error" and found["notjson__bbbbbbb"][1].startswith(
        "agent/trajectory.json: not JSON"
    )
    assert found["schema__ccccccc"] == (
        "error",
        "agent/trajectory.json: unknown schema_version 'ATIF-v9.0' (this reader knows ATIF-v1.0 to v1.8)",
    )
    assert found["empty__ddddddd"] == ("error", "no agent/trajectory.json and no result.json")
    assert found["loop__eeeeeee"][0] == "error" and "symbolic links" in found["loop__eeeeeee"][1]
    assert all("\n" not in (problem or "") for _, problem in found.values())


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder: run the suite as a user to check this one")
def test_an_unreadable_trial_folder_is_an_error(bad_job):
    locked = write_trial(bad_job, "locked__fffffff")
    locked.chmod(0o000)
    try:
        found = problems(open_paths(bad_job))
    finally:
        locked.chmod(0o755)
    assert found["locked__fffffff"] == ("error", "cannot be read (Permission denied)")
    assert found["good__aaaaaaa"] == ("pass", None)


def test_a_dangling_trial_link_is_an_error(bad_job):
    (bad_job / "gone__ggggggg").symlink_to(bad_job / "nowhere")
    found = problems(open_paths(bad_job))
    assert found["gone__ggggggg"] == ("error", "cannot be read (No such file or directory)")


def test_nothing_is_ever_written_into_the_job_folders(tmp_path, capsys):
    from tracetui.commands.export import run as export
    from tracetui.commands.findings import run as findings
    from tracetui.commands.stats import run as stats

    jobs = copy_tree(JOBS, tmp_path / "jobs")
    before = tree_state(jobs)
    for path in [jobs, *jobs.rglob("*")]:
        path.chmod(path.stat().st_mode & ~0o222)
    try:
        session = open_paths(jobs)
        for trial in range(len(session)):
            session.history(trial)
            session.verifier_output(trial)
        assert stats([str(jobs)]) == 0 and findings([str(jobs)]) == 0
        assert export([str(jobs), "-o", str(tmp_path / "out.parquet")]) == 0
        capsys.readouterr()
    finally:
        for path in [jobs, *jobs.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)
    after = tree_state(jobs)
    assert {k: v[1:] for k, v in after.items()} == {k: v[1:] for k, v in before.items()}  # modes aside (ours)


# --- export -----------------------------------------------------------------------------------------


def test_export_writes_the_rows_harbors_exporter_would(tmp_path, capsys):
    import pyarrow.parquet as pq

    from tracetui.commands.export import run as export

    out = tmp_path / "runs.parquet"
    assert export([str(JOBS), "-o", str(out)]) == 0
    assert "exported 3 trials (13 rows)" in capsys.readouterr().out  # the running trial is not exported
    written = pq.read_table(out)
    harbors = pq.read_table(next(EXPORT.rglob("*.parquet")))
    assert written.schema.names == [*harbors.schema.names, "tracetui_labels", "tracetui_note"]
    rows = [{k: v for k, v in r.items() if not k.startswith("tracetui_")} for r in written.to_pylist()]
    assert sorted(rows, key=row_key) == sorted(harbors.to_pylist(), key=row_key)
    assert export([str(JOBS), "--filter", "outcome=fail", "-o", str(tmp_path / "fail.jsonl")]) == 0
    failed = [json.loads(line) for line in (tmp_path / "fail.jsonl").read_text().splitlines()]
    assert {r["trial_name"] for r in failed} == {"s-fizz-buzz__fRDnSf2"} and len(failed) == 7


def test_export_of_the_golden_job_keeps_the_tool_definitions(tmp_path):
    import pyarrow.parquet as pq

    from tracetui.data.export import export_trials

    session = open_paths(ATIF / "jobs")
    out = tmp_path / "golden.parquet"
    assert export_trials(session, range(len(session)), out) == 28
    rows = [{k: v for k, v in r.items() if not k.startswith("tracetui_")} for r in pq.read_table(out).to_pylist()]
    expected = [json.loads(line) for line in (ATIF / "exported.rows.jsonl").read_text().splitlines()]
    with_tools = [r for r in rows if r["tool_definitions"]]
    assert len(with_tools) == 2 and with_tools[0]["tool_definitions"][0]["function"]["name"] == "execute_bash"
    assert sorted([r["conversations"] for r in rows], key=str) == sorted(
        [r["conversations"] for r in expected], key=str
    )


def test_stats_give_tokens_cost_and_time_per_group_only_when_recorded(capsys):
    from tracetui.commands.stats import run as stats

    assert stats([str(JOBS), "--format", "json"]) == 0
    records = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    claude = records["anthropic/claude-sonnet-4-5"]
    assert (claude["input_tokens"], claude["cached_tokens"], claude["output_tokens"]) == (15068, 7400, 1878)
    assert claude["cost_usd"] == pytest.approx(0.073374) and claude["mean_cost_usd"] == pytest.approx(0.036687)
    assert claude["cost_per_pass"] == pytest.approx(0.073374)  # one pass for the two trials' cost
    assert (claude["agent_seconds"], claude["mean_agent_seconds"]) == (230, 115)
    qwen = records["hosted_vllm/Qwen/Qwen3-8B"]
    assert qwen["cost_usd"] is None and qwen["cost_per_pass"] is None  # no cost recorded: nothing, not 0
    assert stats([str(EXPORT), "--format", "json"]) == 0
    assert not {"input_tokens", "cost_usd", "running"} & set(json.loads(capsys.readouterr().out)[0])


def test_pareto_of_cost_against_pass_rate(capsys):
    from tracetui.commands.stats import run as stats
    from tracetui.data.usage import pareto

    session = open_paths(JOBS, ATIF / "jobs")
    points = pareto(session, np.ones(len(session), dtype=bool))
    assert [(p.model, p.frontier) for p in points] == [
        ("gpt-4o", True),
        ("openai/gpt-4o", True),
        ("anthropic/claude-sonnet-4-5", False),  # dearer than openai/gpt-4o and no better
    ]
    assert stats([str(JOBS), str(ATIF / "jobs"), "--pareto", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "model,trials,mean_cost_usd,pass_rate,frontier" and lines[-1].endswith(",False")
    assert stats([str(EXPORT), "--pareto"]) == 2
    assert "no trial records a cost" in capsys.readouterr().err


def test_findings_command_counts_running_trials_apart(capsys):
    from tracetui.commands.findings import run as findings

    assert findings([str(JOBS)]) == 0
    assert capsys.readouterr().err.strip().endswith("; 1 of the trials read is still running")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="follows the server's processes in /proc")
def test_web_serves_job_folders_mixed_with_a_dataset():
    import urllib.request

    from .web_helpers import served

    with served(str(JOBS), str(EXPORT)) as server:
        page = urllib.request.urlopen(f"{server.url}/?token={server.token}", timeout=30)
        assert page.status == 200 and "tracetui" in page.read().decode()


def test_search_finds_the_trials_of_a_jobs_matching_messages():
    from tracetui.data.search import search

    session = open_paths(JOBS, ATIF / "jobs")
    for pattern in ("HELDOUT-JOBS step 1", "hello.txt", "SUBAGENT"):
        result = search(session, pattern)
        per_trial = [
            len(result.messages_in(session, t)) + len(result.subagent_messages_in(session, t))
            for t in range(len(session))
        ]
        assert sum(per_trial) > 0
        assert {t for t in range(len(session)) if result.trials[t]} == {t for t, n in enumerate(per_trial) if n}

"""Following harbor job folders while they change (issue 22, live): running trials grow and finish, new
trials appear, half-written files keep the last good reading, and every trial keeps its id."""

from __future__ import annotations

from tracetui.data.findings_index import build_findings_index
from tracetui.data.jobs.follow import Follower
from tracetui.data.session import Session
from tracetui.data.verifier_index import build_verifier_index

from .jobs_helpers import (
    PASSING_LOG,
    SAMPLE,
    by_name,
    copy_tree,
    grow,
    open_paths,
    trial_result,
    write_json,
    write_trial,
)

RUNNING = "s-fizz-buzz__Cs2qGvQ"


def running_folder(jobs):
    return jobs / "2026-07-01__12-00-00" / RUNNING


def finish(folder, reward: float = 1.0) -> None:
    (folder / "verifier").mkdir(exist_ok=True)
    (folder / "verifier" / "test-stdout.txt").write_text(PASSING_LOG)
    write_json(folder / "result.json", trial_result(folder.parent, folder.name, reward=reward, task="s-fizz-buzz"))


def poll_and_apply(follower: Follower, session: Session):
    changes = follower.poll()
    if changes is None:
        return None
    applied = session.apply(changes.updates, changes.new)
    follower.applied(changes)
    return applied


def test_nothing_changed_nothing_to_apply(tmp_path):
    session = open_paths(copy_tree(SAMPLE / "jobs", tmp_path / "jobs"))
    follower = Follower(session.datasets)
    assert follower.poll() is None and follower.poll() is None


def test_a_running_trial_grows_then_finishes_under_its_id(tmp_path):
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    session = open_paths(jobs)
    follower = Follower(session.datasets)
    trial = by_name(session)[RUNNING]
    names = {t: session.info(t).trial_name for t in range(len(session))}
    before = session.history(trial)

    grow(running_folder(jobs), 3)
    applied = poll_and_apply(follower, session)
    assert applied is not None and list(applied.changed) == [trial] and applied.added == 0
    info = session.info(trial)
    assert (info.outcome, info.episodes) == ("running", 5)
    history = session.history(trial)
    assert history.messages[: len(before.messages)] == before.messages and len(history.messages) > len(before.messages)

    finish(running_folder(jobs))
    applied = poll_and_apply(follower, session)
    assert applied is not None and list(applied.changed) == [trial]
    assert session.info(trial).outcome == "pass" and session.verifier_output(trial) == PASSING_LOG
    assert {t: session.info(t).trial_name for t in range(len(session))} == names  # every id kept
    assert follower.poll() is None


def test_new_trials_get_new_ids_and_the_indexes_follow(tmp_path):
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    session = open_paths(jobs, SAMPLE / "export" / "hub")  # the job first: its new trial must not shift the hub's
    follower = Follower(session.datasets)
    verifiers = build_verifier_index(session)
    findings = build_findings_index(session, verifiers=verifiers)
    hub = {t: session.info(t).trial_name for t in range(len(session)) if session.info(t).dataset == "hub"}

    write_trial(jobs / "2026-07-01__09-00-00", "s-new-task__NewNew1", replies=2)
    applied = poll_and_apply(follower, session)
    assert applied is not None and applied.added == 1 and list(applied.changed) == [len(session) - 1]
    new = len(session) - 1
    assert session.info(new).trial_name == "s-new-task__NewNew1" and session.info(new).dataset == "2026-07-01__09-00-00"
    assert {t: session.info(t).trial_name for t in hub} == hub
    verifiers = verifiers.updated(session, applied.changed)
    findings = findings.updated(session, applied.changed, verifiers)
    assert verifiers.short[new] == "1/1 tests" and len(findings.findings) == len(session)
    assert findings.findings == build_findings_index(Session(session.datasets, session.order)).findings

    recipes = [dataset.recipe() for dataset in session.datasets]  # how the findings workers reopen it
    reopened = Session([factory(*arguments) for factory, arguments in recipes], session.order)
    assert [repr(reopened.info(t)) for t in range(len(reopened))] == [
        repr(session.info(t)) for t in range(len(session))
    ]


def test_a_half_written_file_keeps_the_last_good_reading(tmp_path):
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    session = open_paths(jobs)
    follower = Follower(session.datasets)
    trial = by_name(session)[RUNNING]
    shown = session.history(trial)  # the pane shows it
    path = running_folder(jobs) / "agent" / "trajectory.json"
    whole = path.read_text()
    path.write_text(whole[: len(whole) // 2])  # harbor is halfway through rewriting it
    assert poll_and_apply(follower, session) is None
    assert session.info(trial).outcome == "running" and session.info(trial).episodes == 2
    assert session.history(trial) == shown
    path.write_text(whole)  # written whole again, and a step longer
    grow(running_folder(jobs), 1)
    applied = poll_and_apply(follower, session)
    assert applied is not None and session.info(trial).episodes == 3


def test_a_broken_file_that_stays_broken_is_an_error_at_last(tmp_path):
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    session = open_paths(jobs)
    follower = Follower(session.datasets)
    job = jobs / "2026-07-01__12-00-00"
    write_trial(job, "s-broken__Broken1", finished=False)
    (job / "s-broken__Broken1" / "agent" / "trajectory.json").write_text("{")
    assert poll_and_apply(follower, session) is None  # maybe harbor is writing it
    applied = poll_and_apply(follower, session)  # the same bytes a poll later: it is broken
    assert applied is not None and applied.added == 1
    assert session.info(len(session) - 1).outcome == "error"
    assert (session.problem(len(session) - 1) or "").startswith("agent/trajectory.json: not JSON")


def test_a_job_folder_new_in_the_jobs_root_joins_with_its_trials(tmp_path):
    from .jobs_helpers import write_job

    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    session = open_paths(jobs, SAMPLE / "export" / "hub")
    follower = Follower(session.datasets)
    before = {t: session.info(t).trial_name for t in range(len(session))}
    assert follower.poll() is None
    job = jobs / "2026-07-02__08-00-00"
    job.mkdir()  # harbor has just made it: not a job folder yet
    assert follower.poll() is None
    write_job(job, finished=False)
    write_trial(job, "s-new-task__JobTwo1")
    applied = poll_and_apply(follower, session)
    assert applied is not None and applied.added == 1 and list(applied.changed) == [len(session) - 1]
    assert {t: session.info(t).trial_name for t in before} == before  # every trial kept its id
    new = session.info(len(session) - 1)
    assert (new.trial_name, new.dataset, new.outcome) == ("s-new-task__JobTwo1", "2026-07-02__08-00-00", "pass")
    assert "2026-07-02__08-00-00" in session.facets.facets["dataset"].labels
    assert session.datasets[-1].source.display == f"{jobs}/2026-07-02__08-00-00"

    write_trial(job, "s-new-task__JobTwo2", finished=False)  # then it is followed like the others
    applied = poll_and_apply(follower, session)
    assert applied is not None and applied.added == 1 and session.info(len(session) - 1).outcome == "running"
    assert poll_and_apply(follower, session) is None


def test_only_a_jobs_root_grows_new_jobs(tmp_path):
    from .jobs_helpers import write_job

    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    session = open_paths(jobs / "2026-07-01__09-00-00")  # one job: its siblings are not the user's
    follower = Follower(session.datasets)
    write_trial(write_job(jobs / "2026-07-02__08-00-00"), "s-new-task__JobTwo1")
    assert follower.poll() is None and len(session.datasets) == 1

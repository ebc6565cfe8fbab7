"""Harbor job trees for the tests: copies of the fixtures in temp folders, and trials written on the spot."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from tracetui.data.session import Session, open_session, prepare
from tracetui.data.sources import SourceSpec

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = FIXTURES / "harbor-jobs"
"""A jobs root of two jobs written through harbor's models, and `export/hub`, harbor's export of it."""
ATIF = FIXTURES / "harbor-atif"
"""A job of harbor's golden trajectories, and `exported.rows.jsonl`, the rows harbor's exporter writes."""


def copy_tree(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    for path in target.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    return target


def open_paths(*paths: Path | str) -> Session:
    return open_session(prepare([SourceSpec(str(path)) for path in paths]))


def by_name(session: Session) -> dict[str, int]:
    return {session.info(t).trial_name: t for t in range(len(session))}


def write_json(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2))
    return path


def steps(replies: int, task: str = "hello") -> list[dict]:
    """A terminus-2 style trajectory's steps: the prompt, then `replies` agent steps with metrics."""
    found = [{"step_id": 1, "source": "user", "message": f"Solve {task}."}]
    for k in range(replies):
        found.append(
            {
                "step_id": k + 2,
                "source": "agent",
                "model_name": "openai/gpt-4o",
                "message": json.dumps({"analysis": f"turn {k}", "plan": "go", "commands": [], "task_complete": False}),
                "observation": {"results": [{"content": f"New Terminal Output:\nout {k}\n"}]},
                "metrics": {
                    "prompt_tokens": 100 * (k + 1),
                    "completion_tokens": 10,
                    "cached_tokens": 50 * k,
                    "cost_usd": 0.01,
                },
            }
        )
    return found


def trajectory(replies: int, **extra) -> dict:
    return {
        "schema_version": "ATIF-v1.5",
        "session_id": "s-1",
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "openai/gpt-4o"},
        "steps": steps(replies),
        **extra,
    }


def trial_config(job: Path, name: str, task: str = "hello") -> dict:
    return {
        "task": {"path": f"tasks/{task}"},
        "trial_name": name,
        "agent": {"name": "terminus-2", "model_name": "openai/gpt-4o"},
        "job_id": f"id-{job.name}",
    }


def trial_result(
    job: Path, name: str, reward: float | None = 1.0, exception: str | None = None, task: str = "hello"
) -> dict:
    return {
        "task_name": task,
        "trial_name": name,
        "config": trial_config(job, name, task),
        "agent_info": {
            "name": "terminus-2",
            "version": "2.0.0",
            "model_info": {"name": "gpt-4o", "provider": "openai"},
        },
        "agent_result": {"n_input_tokens": 1000, "n_cache_tokens": 400, "n_output_tokens": 50, "cost_usd": 0.02},
        "verifier_result": {"rewards": {"reward": reward}} if reward is not None else None,
        "exception_info": {
            "exception_type": exception,
            "exception_message": "",
            "exception_traceback": "",
            "occurred_at": "2026-08-01T10:01:00Z",
        }
        if exception
        else None,
        "started_at": "2026-08-01T10:00:00Z",
        "finished_at": "2026-08-01T10:02:00Z",
        "agent_execution": {"started_at": "2026-08-01T10:00:05Z", "finished_at": "2026-08-01T10:01:35Z"},
        "verifier": {"started_at": "2026-08-01T10:01:40Z", "finished_at": "2026-08-01T10:01:50Z"},
    }


PASSING_LOG = "collected 1 item\n\n../tests/test_outputs.py .  [100%]\n\nPASSED ../tests/test_outputs.py::test_ok\n==== 1 passed in 0.01s ====\n"


def write_trial(job: Path, name: str, replies: int = 2, finished: bool = True, **result) -> Path:
    """A trial folder: its config and trajectory, and when `finished` its result and verifier log."""
    folder = job / name
    write_json(folder / "config.json", trial_config(job, name, result.get("task", "hello")))
    write_json(folder / "agent" / "trajectory.json", trajectory(replies))
    if finished:
        write_json(folder / "result.json", trial_result(job, name, **result))
        (folder / "verifier").mkdir(exist_ok=True)
        (folder / "verifier" / "test-stdout.txt").write_text(PASSING_LOG)
    return folder


def grow(folder: Path, replies: int) -> None:
    """A running trial's trajectory, `replies` agent steps longer (rewritten in place, as harbor does)."""
    path = folder / "agent" / "trajectory.json"
    data = json.loads(path.read_text())
    data["steps"] = data["steps"] + trajectory(replies)["steps"][1:]
    for number, step in enumerate(data["steps"]):
        step["step_id"] = number + 1
    path.write_text(json.dumps(data))


def write_job(job: Path, finished: bool = True) -> Path:
    write_json(job / "config.json", {"job_name": job.name, "jobs_dir": str(job.parent)})
    (job / "job.log").write_text("")
    write_json(
        job / "result.json",
        {"id": f"id-{job.name}", "finished_at": "2026-08-01T11:00:00Z" if finished else None, "stats": {"evals": {}}},
    )
    return job


def tree_state(root: Path) -> dict[str, tuple]:
    """Every path under `root` with its mode, size, mtime and content hash: what a write would change."""
    state = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
        state[str(path.relative_to(root))] = (info.st_mode, info.st_size, info.st_mtime_ns, digest)
    return state

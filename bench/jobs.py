"""Harbor job folders at scale (issue 22): a generated jobs root of 5,000 trials against the dataset harbor's
exporter would make of it (written by `tracetui export`), measured in one run.

    python -m bench.jobs [--trials 5000] [--jobs 5] [--kb 1,4] [--reuse] [--idle 10] [--against ../main]

For each text scale (`--kb`: about that many KB per agent reply and per observation) it writes a jobs
root under bench/out/jobs-<trials>-<kb>k/ (deterministic, like the demo generator: terminus-2
trajectories of 3 to 25 episodes with step metrics, a context summarization in one trial of ten, the
verifier's log and reward, result.json with tokens, cost and timings; 1% of the last job still running),
exports it to a hub-layout dataset, then measures in fresh processes: the first open of each (reading
every trajectory; converting the dataset), the first screen of each once cached (median of `--repeat`,
the two interleaved, with the CPU time to it: on a shared machine the ratios are what to compare, and
the load average is recorded), memory at the first screen, and the CPU the app spends following the job
folders while nothing changes. `--against DIR`: another checkout of tracetui (with its own .venv) opens
the same jobs root too, interleaved with the others, with a cache of its own: an A/B of two versions'
reopens on a shared machine, each against the same exported dataset.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import measure

OUT = measure.ROOT / "bench" / "out"
MODELS = ("anthropic/claude-sonnet-4-5", "openai/gpt-5-mini", "hosted_vllm/Qwen/Qwen3-8B", "openai/gpt-4o")
WORDS = ("the", "file", "test", "output", "build", "parser", "config", "module", "function", "error", "value")
WORDS += ("check", "install", "script", "command", "python", "run", "pass", "fail", "fix", "read", "write", "path")


def _prose(rng: random.Random, size: int) -> str:
    out, length = [], 0
    while length < size:
        word = rng.choice(WORDS)
        out.append(word)
        length += len(word) + 1
    return " ".join(out).capitalize() + "."


def _terminal(rng: random.Random, size: int) -> str:
    lines, length = ["New Terminal Output:"], 0
    while length < size:
        line = f"root@c0ffee:/app# {rng.choice(WORDS)} --{rng.choice(WORDS)} {rng.randrange(10**6)}"
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines) + "\n"


def trajectory(rng: random.Random, task: str, model: str, episodes: int, kb: float) -> dict:
    size = int(kb * 1024)
    steps: list[dict] = [
        {"step_id": 1, "source": "user", "message": f"Task Description:\n{_prose(rng, 600)}\n({task})"}
    ]
    for k in range(episodes):
        reply = {
            "analysis": _prose(rng, size // 3),
            "plan": _prose(rng, size // 6),
            "commands": [
                {"keystrokes": f"cat > step{k}.py << 'EOF'\n{_prose(rng, size // 3)}\nEOF\n", "duration": 0.1}
            ],
            "task_complete": k == episodes - 1,
        }
        steps.append(
            {
                "step_id": len(steps) + 1,
                "source": "agent",
                "model_name": model,
                "message": json.dumps(reply, indent=2),
                "reasoning_content": _prose(rng, size // 2),
                "observation": {"results": [{"content": _terminal(rng, size)}]},
                "metrics": {
                    "prompt_tokens": 1000 + 400 * k,
                    "completion_tokens": 200 + rng.randrange(200),
                    "cached_tokens": 300 * k,
                    "cost_usd": round(0.002 + 0.001 * k, 6),
                },
            }
        )
    return {
        "schema_version": "ATIF-v1.5",
        "session_id": f"s-{rng.randrange(10**9)}",
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": model},
        "steps": steps,
    }


def write_trial(folder: Path, rng: random.Random, job_id: str, task: str, model: str, kb: float, running: bool) -> None:
    episodes = rng.randint(3, 25)
    data = trajectory(rng, task, model, episodes, kb)
    (folder / "agent").mkdir(parents=True)
    (folder / "agent" / "trajectory.json").write_text(json.dumps(data, indent=2))
    if rng.random() < 0.1:
        for kind in ("summary", "questions", "answers"):
            sub = trajectory(rng, task, model, 1, kb / 2)
            sub["agent"]["name"] = f"terminus-2-summarization-{kind}"
            (folder / "agent" / f"trajectory.summarization-1-{kind}.json").write_text(json.dumps(sub, indent=2))
    provider, _, name = model.partition("/")
    config = {
        "task": {"path": f"tasks/{task}"},
        "trial_name": folder.name,
        "agent": {"name": "terminus-2", "model_name": model},
        "job_id": job_id,
    }
    (folder / "config.json").write_text(json.dumps(config, indent=4))
    if running:
        return
    metrics = [s["metrics"] for s in data["steps"] if "metrics" in s]
    passed = rng.random() < 0.45
    timeout = not passed and rng.random() < 0.15
    log = f"collected 3 items\n\n../tests/test_outputs.py {'...' if passed else '.FF'}  [100%]\n"
    log += (
        "==== 3 passed in 0.3s ====\n"
        if passed
        else "FAILED ../tests/test_outputs.py::test_b - AssertionError\n==== 2 failed, 1 passed in 0.3s ====\n"
    )
    result = {
        "task_name": task,
        "trial_name": folder.name,
        "config": config,
        "agent_info": {"name": "terminus-2", "version": "2.0.0", "model_info": {"name": name, "provider": provider}},
        "agent_result": {
            "n_input_tokens": sum(m["prompt_tokens"] for m in metrics),
            "n_cache_tokens": sum(m["cached_tokens"] for m in metrics),
            "n_output_tokens": sum(m["completion_tokens"] for m in metrics),
            "cost_usd": None if provider == "hosted_vllm" else round(sum(m["cost_usd"] for m in metrics), 6),
        },
        "verifier_result": None if timeout else {"rewards": {"reward": 1.0 if passed else 0.0}},
        "exception_info": {
            "exception_type": "AgentTimeoutError",
            "exception_message": "",
            "exception_traceback": "",
            "occurred_at": "2026-08-02T10:20:00Z",
        }
        if timeout
        else None,
        "started_at": "2026-08-02T10:00:00Z",
        "finished_at": "2026-08-02T10:30:00Z",
        "agent_execution": {"started_at": "2026-08-02T10:00:10Z", "finished_at": "2026-08-02T10:25:00Z"},
        "verifier": None if timeout else {"started_at": "2026-08-02T10:25:10Z", "finished_at": "2026-08-02T10:29:00Z"},
    }
    (folder / "result.json").write_text(json.dumps(result, indent=4))
    if not timeout:
        (folder / "verifier").mkdir()
        (folder / "verifier" / "test-stdout.txt").write_text(log)
        (folder / "verifier" / "reward.txt").write_text("1.0" if passed else "0.0")


def write_jobs(root: Path, trials: int, jobs: int, kb: float, seed: int = 0) -> None:
    rng = random.Random(seed)
    tasks = [f"task-{n:03d}" for n in range(max(1, trials // (jobs * 2)))]
    for j in range(jobs):
        job = root / f"2026-08-02__{10 + j:02d}-00-00"
        job.mkdir(parents=True)
        job_id = f"00000000-0000-4000-8000-{j:012d}"
        (job / "config.json").write_text(json.dumps({"job_name": job.name, "jobs_dir": str(root)}))
        (job / "job.log").write_text("")
        last = j == jobs - 1
        (job / "result.json").write_text(
            json.dumps({"id": job_id, "finished_at": None if last else "2026-08-02T12:00:00Z", "stats": {"evals": {}}})
        )
        model = MODELS[j % len(MODELS)]
        for t in range(trials // jobs):
            task = tasks[t % len(tasks)]
            name = f"{task}__{rng.randrange(36**7):07x}"[: len(task) + 9]
            write_trial(job / name, rng, job_id, task, model, kb, running=last and t % 100 == 0)


def probe_idle(root: str, seconds: float) -> None:
    """The app on `root`, once its background work is done: its CPU time over `seconds` of nothing changing."""
    import asyncio

    from bench.apps import tracetui_app
    from bench.frames import FrameWatcher

    async def run() -> float:
        app, widgets = tracetui_app(Path(root))
        watcher = FrameWatcher(widgets)
        watcher.install(app)
        async with app.run_test(size=(120, 40)) as pilot:
            await settled_but_following(app, pilot, watcher)
            before = os.times()
            began = time.monotonic()
            await pilot.pause(seconds)
            after = os.times()
            return (after.user + after.system - before.user - before.system) / (time.monotonic() - began)

    async def settled_but_following(app, pilot, watcher) -> None:
        from tracetui.ui.screens.triage import TriageScreen

        while not isinstance(app.screen, TriageScreen):
            await pilot.pause(0.05)
        screen = app.screen
        while any(w.is_running and w.group != "follow-jobs" for w in screen.workers) or screen.findings.index is None:
            await pilot.pause(0.1)

    print("BENCH " + json.dumps({"cpu": asyncio.run(run())}), flush=True)


def _env(cache: Path) -> dict[str, str]:
    return measure.Data(0, Path(), cache).env()


def first_screen(source: Path, cache: Path, checkout: Path | None = None) -> dict:
    """The headless first screen of `source`, opened by this checkout's code or `checkout`'s."""
    if checkout is None:
        return measure.first_screen_headless(measure.Data(0, source, cache), "tracetui")
    began = time.monotonic()
    done = subprocess.run(
        [str(checkout / ".venv" / "bin" / "python"), "-m", "bench.probes", "first-screen", "tracetui", str(source)],
        cwd=checkout,
        env=_env(cache),
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("BENCH "))[6:])
    return {"seconds": result["painted_at"] - began, "cpu": result["cpu"], "memory": result["memory"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=5000)
    parser.add_argument("--jobs", type=int, default=5)
    parser.add_argument("--kb", default="1,4", help="text scales, KB per reply and per observation")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of following measured")
    parser.add_argument("--reuse", action="store_true", help="keep what an earlier run generated")
    parser.add_argument("--against", type=Path, help="another checkout whose code opens the jobs root too")
    args = parser.parse_args()
    rows = []
    for kb in [float(k) for k in args.kb.split(",")]:
        base = OUT / f"jobs-{args.trials}-{kb:g}k"
        root, dataset = base / "jobs", base / "dataset"
        if not (args.reuse and root.exists()):
            shutil.rmtree(base, ignore_errors=True)
            began = time.monotonic()
            write_jobs(root, args.trials, args.jobs, kb)
            print(f"wrote {root} in {time.monotonic() - began:.0f} s", flush=True)
        size = sum(p.stat().st_size for p in root.rglob("*.json"))
        if not (dataset / "data").exists():
            (dataset / "data").mkdir(parents=True)
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tracetui",
                    "export",
                    str(root),
                    "-o",
                    str(dataset / "data" / "train-00000-of-00001.parquet"),
                ],
                check=True,
                env=_env(base / "cache-export"),
            )
        sources = [
            ("jobs root", root, base / "cache-jobs", None),
            ("its exported dataset", dataset, base / "cache-dataset", None),
        ]
        if args.against is not None:
            sources.append((f"jobs root, {args.against}'s code", root, base / "cache-jobs-against", args.against))
        firsts, warm = {}, {name: [] for name, _, _, _ in sources}
        for name, source, cache, checkout in sources:
            shutil.rmtree(cache, ignore_errors=True)
            firsts[name] = first_screen(source, cache, checkout)
        load = os.getloadavg()[0]
        for _ in range(args.repeat):  # interleaved: a shared machine's load changes alike for all
            for name, source, cache, checkout in sources:
                warm[name].append(first_screen(source, cache, checkout))
        load = (load + os.getloadavg()[0]) / 2
        for name, _, _, _ in sources:
            rows.append(
                {
                    "source": f"{name}, {args.trials:,} trials, {kb:g} KB/message ({size / 1e6:.0f} MB of trajectories)",
                    "first open": firsts[name]["seconds"],
                    "first screen, cached": statistics.median(w["seconds"] for w in warm[name]),
                    "CPU to first screen, cached": statistics.median(w["cpu"] for w in warm[name]),
                    "peak RSS at first screen (MB)": statistics.median(w["memory"].get("VmHWM", 0) for w in warm[name]),
                    "load average": round(load, 1),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
        measured = rows[-len(sources) :]
        exported = measured[1]
        for (name, _, _, _), jobs in zip(sources, measured):
            if jobs is exported:
                continue
            ratios = {
                key: jobs[key] / exported[key]
                for key in ("first open", "first screen, cached", "CPU to first screen, cached")
            }
            print(f"{name} / dataset: {json.dumps({k: round(v, 2) for k, v in ratios.items()})}", flush=True)
            rows.append({"source": f"{name} / its exported dataset, {kb:g} KB/message", **ratios})
        out = subprocess.run(
            [sys.executable, "-m", "bench.jobs", "probe-idle", str(root), str(args.idle)],
            capture_output=True,
            text=True,
            env=_env(base / "cache-jobs"),
            cwd=measure.ROOT,
        )
        line = next((line for line in out.stdout.splitlines() if line.startswith("BENCH ")), None)
        cpu = json.loads(line[6:])["cpu"] if line else float("nan")
        print(f"following {root}: {cpu:.1%} of one core while nothing changes", flush=True)
        rows.append({"source": f"following the jobs root, {kb:g} KB/message", "CPU while idle": cpu})
    (OUT / f"jobs-{args.trials}.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "probe-idle":
        probe_idle(sys.argv[2], float(sys.argv[3]))
    else:
        main()

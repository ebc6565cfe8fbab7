"""Synthetic hub datasets for the remote-reading tests: realistic metadata and shape, small incompressible text.

Rows are episodes of trials (1–20 episodes, nested-prefix conversations of 2K+2 messages), in the
export's order, written as Hugging Face writes them: `data/train-0000K-of-0000N.parquet` shards of
row groups of up to 1,000 rows, snappy-compressed, dictionaries for the short columns only (as `tracetui
demo` writes them). Each message is `text` bytes of random hex, so the text does not shrink to nothing
and the ratio of metadata to text stays honest; trials are short (1–`episodes` episodes) to keep the
nested-prefix text small in memory.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

MODELS = [
    "openai/gpt-5-mini",
    "anthropic/claude-sonnet-4",
    "hosted_vllm/DCAgent/a1-e2egit",
    "gpt-4o",
    "together_ai/qwen3",
]
RESULTS = ["1.0", "0.0", "0.0", "1.0", "0.5", "AgentTimeoutError", None]
CARD = "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/train-*\n---\n# synthetic traces\n"


def trial_plan(rows: int, seed: int, longest: int) -> list[tuple[int, int]]:
    """(trial number, episodes) covering exactly `rows` rows."""
    rng = random.Random(seed)
    plan, left, number = [], rows, 0
    while left:
        episodes = min(left, rng.randint(1, longest))
        plan.append((number, episodes))
        left -= episodes
        number += 1
    return plan


def rows_of(rows: int, text: int = 100, seed: int = 0, episodes: int = 20) -> list[dict]:
    rng = random.Random(seed)
    plan = trial_plan(rows, seed, episodes)
    blob = os.urandom(sum(2 * e + 1 for _, e in plan) * text // 2 + 1).hex()
    position = 0
    out = []
    for number, count in plan:
        task = f"task-{number % 80:03d}"
        trial = f"{task}__{number:07d}"
        model = MODELS[number % len(MODELS)]
        result = RESULTS[rng.randrange(len(RESULTS))]
        verifier = f"collected 3 items\n{'.F.' if result == '0.0' else '...'}\n{blob[position : position + 4 * text]}\n"
        history = []
        for k in range(count):
            for role in (("user",) if k == 0 else ()) + ("assistant",):
                history.append({"role": role, "content": blob[position : position + text]})
                position += text
            out.append(
                {
                    "conversations": list(history),
                    "agent": "terminus-2",
                    "model": model,
                    "model_provider": model.split("/")[0],
                    "date": f"2026-07-{1 + number % 28:02d}T10:00:00Z",
                    "task": task,
                    "episode": f"episode-{k}",
                    "run_id": f"run-{number % 10}",
                    "trial_name": trial,
                    "result": result,
                    "verifier_output": verifier,
                    "trace_source": "main",
                }
            )
            history.append(
                {"role": "user", "content": f"New Terminal Output:\n{blob[position : position + text // 2]}"}
            )
            position += text // 2
    return out


def write_traces(
    folder: Path, rows: int, shards: int = 1, text: int = 100, episodes: int = 20, row_group: int = 1000, seed: int = 0
) -> Path:
    """A dataset folder in hub layout (README.md with its configs, data/train-*.parquet)."""
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows_of(rows, text, seed, episodes))
    short = [name for name in table.column_names if name != "conversations"]
    per_shard = -(-rows // shards)
    for shard in range(shards):
        pq.write_table(
            table.slice(shard * per_shard, per_shard),
            data / f"train-{shard:05d}-of-{shards:05d}.parquet",
            row_group_size=row_group,
            compression="snappy",
            use_dictionary=short,
        )
    (folder / "README.md").write_text(CARD)
    return folder

"""Writing a dataset: every row in `harbor traces export` order, into Hugging Face hub-named parquet shards.

Rows stream straight from the trial simulation into row groups, so memory stays flat at any size; the
sub-agent rows, which export puts after all main rows, are rebuilt from the trial seeds on a second pass.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from ..data.convert import HARBOR_COLUMNS, MESSAGE_TYPE
from .planning import Trial, plan
from .trials import Message, builder
from .verifier_logs import verifier_output

DEFAULT_ROWS = 1200
"""Rows of the bundled demo: every feature, two shards, written in about a second."""

SHARD_ROWS = 1000
SHARD_BYTES = 100 << 20
BATCH_ROWS = 100  # one parquet row group: small enough for cheap random access
BATCH_BYTES = 16 << 20

SCHEMA = pa.schema([("conversations", pa.list_(MESSAGE_TYPE))] + [(name, pa.string()) for name in HARBOR_COLUMNS])
_SHORT_COLUMNS = [name for name in SCHEMA.names if name != "conversations"]
_VERIFIER_COLUMN = SCHEMA.names.index("verifier_output")
_SHARD_NAME = re.compile(r"^train-\d{5}-of-\d{5}\.parquet$")

Progress = Callable[[int, int], None]


def _row(trial: Trial, conversation: list[Message], episode: int, verifier: str | None, source: str) -> tuple:
    run = trial.run
    return (
        conversation,
        run.model.agent,
        run.model.id,
        run.model.provider,
        trial.date,
        trial.task.name,
        f"episode-{episode}",
        run.run_id,
        trial.trial_name,
        trial.result,
        verifier,
        source,
    )


def _rows(trials: list[Trial]) -> Iterator[tuple]:
    """Every row in export order: main rows trial by trial, then sub-agent rows grouped by trace_source.

    Sub-agent rows are rebuilt from the trial seeds on a second pass (one pass per trace_source, in the
    order each first appears), which keeps memory flat however large the dataset is.
    """
    for trial in trials:
        verifier = verifier_output(trial)
        for episode, conversation in enumerate(builder(trial).main_rows()):
            yield _row(trial, conversation, episode, verifier, "main")
    sources = [
        f"summarization-{n}-{kind}"
        for n in range(1, 1 + max((len(t.restarts) for t in trials), default=0))
        for kind in ("summary", "questions", "answers")
    ]
    for source in sources:
        n = int(source.split("-")[1])
        for trial in trials:
            if len(trial.restarts) >= n:
                conversation = dict(builder(trial).sub_rows())[source]
                yield _row(trial, conversation, 0, verifier_output(trial), source)


class _ShardWriter:
    """Writes rows into hub-named parquet shards, one row group per batch, renaming once the count is known."""

    def __init__(self, data_dir: Path, total: int, progress: Progress | None):
        self.data_dir = data_dir
        self.total = total
        self.progress = progress
        self.batch: list[tuple] = []
        self.batch_bytes = 0
        self.shard_rows = 0
        self.shard_bytes = 0
        self.done = 0
        self.paths: list[Path] = []
        self.writer: pq.ParquetWriter | None = None

    def add(self, row: tuple) -> None:
        size = sum(len(m["content"]) for m in row[0]) + len(row[_VERIFIER_COLUMN] or "")
        self.batch.append(row)
        self.batch_bytes += size
        if len(self.batch) >= BATCH_ROWS or self.batch_bytes >= BATCH_BYTES:
            self._flush()

    def _flush(self) -> None:
        if not self.batch:
            return
        if self.writer is None:
            path = self.data_dir / f".train-{len(self.paths):05d}.parquet.partial"
            self.paths.append(path)
            self.writer = pq.ParquetWriter(
                path,
                SCHEMA,
                compression="zstd",
                use_dictionary=_SHORT_COLUMNS,
                write_statistics=_SHORT_COLUMNS,
            )
        columns = list(zip(*self.batch))
        arrays = [pa.array(columns[0], SCHEMA.field(0).type)] + [pa.array(c, pa.string()) for c in columns[1:]]
        self.writer.write_table(pa.Table.from_arrays(arrays, schema=SCHEMA))
        self.done += len(self.batch)
        self.shard_rows += len(self.batch)
        self.shard_bytes += self.batch_bytes
        self.batch, self.batch_bytes = [], 0
        if self.shard_rows >= SHARD_ROWS or self.shard_bytes >= SHARD_BYTES:
            self._close_shard()
        if self.progress is not None:
            self.progress(self.done, self.total)

    def _close_shard(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        self.shard_rows = self.shard_bytes = 0

    def close(self) -> list[Path]:
        self._flush()
        self._close_shard()
        count = len(self.paths)
        final = [self.data_dir / f"train-{i:05d}-of-{count:05d}.parquet" for i in range(count)]
        for partial, path in zip(self.paths, final):
            partial.replace(path)
        return final


def write_demo(out: Path, rows: int = DEFAULT_ROWS, seed: int = 0, progress: Progress | None = None) -> Path:
    """Write a dataset in Hugging Face hub layout under `out` and return `out`."""
    if rows < 1:
        raise ValueError("rows must be at least 1")
    out = Path(out)
    data_dir = out / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    for old in data_dir.iterdir():  # shards of an earlier demo would be read as part of this one
        if _SHARD_NAME.match(old.name):
            old.unlink()
    trials = plan(rows, seed)
    writer = _ShardWriter(data_dir, rows, progress)
    for row in _rows(trials):
        writer.add(row)
    shards = writer.close()
    (out / "README.md").write_text(_card(rows, seed, trials, len(shards)))
    return out


def _card(rows: int, seed: int, trials: list[Trial], shards: int) -> str:
    models = sorted({t.run.model.id for t in trials})
    return f"""---
license: apache-2.0
pretty_name: tracetui demo traces
tags:
- synthetic
- agent-traces
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train-*
---
# tracetui demo traces

Synthetic coding-agent traces in the layout written by `harbor traces export`, generated by
`tracetui.demo.write_demo(rows={rows}, seed={seed})`. Nothing here comes from a real run.

- {rows} rows (one per agent episode, nested prefixes; summarization sub-agent rows at the end)
- {len(trials)} trials over {len({t.task.name for t in trials})} tasks, {shards} parquet shard(s)
- models: {", ".join(models)}

One trial (task `hostile-content`) deliberately contains terminal escape sequences, Rich markup and
bidi / zero-width characters, to check that a viewer renders them inert.
"""

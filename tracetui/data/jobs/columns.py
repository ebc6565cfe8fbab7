"""A job's trial summaries as columns: what the row layout, the trials and the usage table are built from,
with no Python loop over the trials. Worked out from the summaries when they are read (or changed), and
kept beside them (`summaries.store`) in a file a reopen reads back as arrays over its bytes (no
numpy .npz: its zip entries cost more to open than the arrays to use), parsing only a small header.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from ..usage import FIELDS
from .trial import TrialSummary

MAGIC = b"tracetui-job-columns\n"
LABELS = ("agent", "model", "model_provider", "task", "run_id", "trial_name")
"""The summary labels that are trial columns as they are (`result` and `trace_source` are worked out)."""


@dataclass(slots=True)
class Columns:
    names: list[str]  # trial folder names, by position
    labels: dict[str, list[str | None]]  # per LABELS column and "result" (the trial's own) and "sub_source"
    codes: dict[str, np.ndarray]  # int32 codes into labels (-1: none), per trial (per sub-agent row for sub_source)
    date: list[str]
    problems: list[str | None]  # why each `error` trial is one
    finished: np.ndarray  # bool
    outcome: np.ndarray  # int8
    messages: np.ndarray  # int32
    size: np.ndarray  # int64
    restarts: np.ndarray  # int16
    mains: np.ndarray  # int64: episode rows
    subs: np.ndarray  # int64: sub-agent rows
    row_messages: np.ndarray  # int32, per row in layout order (a trial's episodes, then its sub-agents)
    usage: dict[str, np.ndarray]  # float64 per FIELDS (NaN: not recorded)
    key: str
    """A digest of the trials' names and stamps: which reading of the job this is (`index_folder`)."""

    @classmethod
    def of(cls, summaries: list[TrialSummary]) -> Columns:
        labels: dict[str, list[str | None]] = {}
        codes: dict[str, np.ndarray] = {}
        columns: dict[str, list[str | None]] = {c: [s.labels.get(c) for s in summaries] for c in LABELS}
        columns["result"] = [s.result for s in summaries]
        columns["sub_source"] = [source for s in summaries for source, _ in s.subs]
        for column, values in columns.items():
            labels[column], codes[column] = encode(values)
        count = len(summaries)
        return cls(
            names=[s.name for s in summaries],
            labels=labels,
            codes=codes,
            date=[str(s.labels.get("date") or "") for s in summaries],
            problems=[s.problem for s in summaries],
            finished=np.fromiter((s.finished for s in summaries), dtype=bool, count=count),
            outcome=np.fromiter((s.outcome for s in summaries), dtype=np.int8, count=count),
            messages=np.fromiter((s.messages for s in summaries), dtype=np.int32, count=count),
            size=np.fromiter((s.size for s in summaries), dtype=np.int64, count=count),
            restarts=np.fromiter((s.restarts for s in summaries), dtype=np.int16, count=count),
            mains=np.fromiter((len(s.rows) for s in summaries), dtype=np.int64, count=count),
            subs=np.fromiter((len(s.subs) for s in summaries), dtype=np.int64, count=count),
            row_messages=np.array([n for s in summaries for n in (*s.rows, *(n for _, n in s.subs))], dtype=np.int32),
            usage={f: np.array([s.usage.get(f, math.nan) for s in summaries], dtype=np.float64) for f in FIELDS},
            key=_key(summaries),
        )

    def label_values(self, column: str) -> list[str | None]:
        """The column's value for each trial (or sub-agent row)."""
        table = [*self.labels[column], None]  # code -1 picks the trailing None
        return [table[code] for code in self.codes[column].tolist()]

    def save(self, path: Path, extra: dict[str, Any], blob: bytes) -> None:
        """The columns, `extra` (JSON values) and `blob` as one file at `path`: a JSON header (the
        arrays' dtypes and places, the lists), then the arrays' bytes and the blob, read back with no
        parsing but the header's (`load`)."""
        arrays: dict[str, np.ndarray] = {}
        texts: dict[str, Any] = {"extra": extra}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                arrays[f.name] = value
            elif f.name in ("codes", "usage"):
                arrays.update({f"{f.name}.{name}": array for name, array in value.items()})
            else:
                texts[f.name] = value
        places, parts, offset = {}, [], 0
        for name, array in arrays.items():
            data = np.ascontiguousarray(array).tobytes()
            places[name] = [array.dtype.str, offset, len(array)]
            parts.append(data)
            offset += len(data)
        texts["arrays"], texts["blob"] = places, [offset, len(blob)]
        header = orjson.dumps(texts)
        path.write_bytes(b"".join([MAGIC, len(header).to_bytes(8, "little"), header, *parts, blob]))

    @classmethod
    def load(cls, path: Path) -> tuple[Columns, dict[str, Any], bytes]:
        """What `save` wrote: the columns, the extra values and the blob. Raises for a file that is
        absent, damaged or of another layout."""
        data = path.read_bytes()
        if not data.startswith(MAGIC):
            raise ValueError("not a columns file")
        size = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
        start = len(MAGIC) + 8 + size
        texts = orjson.loads(data[len(MAGIC) + 8 : start])
        payload = memoryview(data)[start:]
        arrays = {
            name: np.frombuffer(payload, dtype=np.dtype(dtype), count=count, offset=offset).copy()
            for name, (dtype, offset, count) in texts.pop("arrays").items()
        }
        at, length = texts.pop("blob")
        blob = bytes(payload[at : at + length])
        if len(blob) != length:
            raise ValueError("a columns file cut short")
        extra = texts.pop("extra")
        for group in ("codes", "usage"):
            texts[group] = {
                name.split(".", 1)[1]: arrays.pop(name) for name in list(arrays) if name.startswith(f"{group}.")
            }
        columns = cls(**texts, **arrays)
        if set(columns.usage) != set(FIELDS) or not set(LABELS) <= set(columns.codes):
            raise ValueError("columns of another layout")
        return columns, extra, blob


def encode(values: list[str | None]) -> tuple[list[str | None], np.ndarray]:
    """The distinct values in first-seen order, and each value's int32 code into them (-1: None)."""
    known: dict[str | None, int] = {}
    codes = np.fromiter(
        (-1 if v is None else known.setdefault(v, len(known)) for v in values), dtype=np.int32, count=len(values)
    )
    return list(known), codes


def _key(summaries: list[TrialSummary]) -> str:
    identity = [[s.name, s.stamp] for s in summaries]
    try:
        text = orjson.dumps(identity)
    except orjson.JSONEncodeError:  # a name that is not UTF-8 (surrogate-escaped)
        text = repr(identity).encode("utf-8", "surrogateescape")
    return hashlib.sha256(text).hexdigest()[:16]

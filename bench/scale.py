"""The 400,000-row dataset: the 40,000-row demo ten times over, with lighter text.

`tracetui demo --rows 400000` would write ~46 GB of text, and its conversion as much again: more than this
machine's disk can spare. So the benchmark takes the 40k demo (written by `tracetui demo --rows 40000`)
and writes its rows ten times, as ten more runs of the same tasks and models (run ids and trial names
made unique per copy), every message cut to its first `CAP` characters. That keeps the metadata and the
shape of 400k real rows (trials, episodes, message counts, sub-agent rows, verifier logs whole), with
about a tenth of the text per row. Row groups and shards keep the demo's layout.

    python -m bench.scale SOURCE OUT [--copies 10] [--cap 400]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

CAP = 400
"""Characters kept of each message."""
COPIES = 10
_SHARD = re.compile(r"^train-\d{5}-of-\d{5}\.parquet$")


def derive(source: Path, out: Path, copies: int = COPIES, cap: int = CAP) -> Path:
    """Write `copies` lighter copies of the hub-layout dataset `source` into `out` (same layout)."""
    shards = sorted(p for p in (source / "data").iterdir() if _SHARD.match(p.name))
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    for old in data.iterdir():
        old.unlink()
    total = copies * len(shards)
    for copy in range(copies):
        for number, shard in enumerate(shards):
            reader = pq.ParquetFile(shard)
            target = data / f"train-{copy * len(shards) + number:05d}-of-{total:05d}.parquet"
            short = [n for n in reader.schema_arrow.names if n != "conversations"]
            with pq.ParquetWriter(
                target, reader.schema_arrow, compression="zstd", use_dictionary=short, write_statistics=short
            ) as writer:
                for group in range(reader.metadata.num_row_groups):
                    writer.write_table(_lighter(reader.read_row_group(group), copy, cap))
    (out / "README.md").write_text((source / "README.md").read_text())
    return out


def _lighter(table: pa.Table, copy: int, cap: int) -> pa.Table:
    """One copy of a row group: its runs and trials renamed, its messages cut."""
    for name in ("run_id", "trial_name"):
        index = table.schema.get_field_index(name)
        table = table.set_column(index, name, pc.binary_join_element_wise(table.column(name), f"~{copy}", ""))
    index = table.schema.get_field_index("conversations")
    column = table.column(index).combine_chunks()
    messages = column.values
    content = pc.utf8_slice_codeunits(messages.field("content"), 0, cap)
    cut = pa.StructArray.from_arrays([messages.field("role"), content], fields=list(messages.type))
    lists = pa.ListArray.from_arrays(column.offsets, cut, type=column.type, mask=column.is_null())
    return table.set_column(index, "conversations", lists)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--copies", type=int, default=COPIES)
    parser.add_argument("--cap", type=int, default=CAP)
    args = parser.parse_args()
    derive(args.source, args.out, args.copies, args.cap)


if __name__ == "__main__":
    main()

"""Invalid UTF-8 made valid: a bad byte spoils its cell (it shows as U+FFFD), never the dataset.

Parquet and Arrow files do not guarantee that their string columns hold UTF-8 (a flipped byte in a page
gets through the reader), and Python refuses such a value when it is read. Checking costs one
validation pass over the buffers, in Arrow's C++; only a column that fails is looked into, by halving,
and only its invalid values are decoded again (with U+FFFD for each bad sequence).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from .compute import pc

_LEAF = 32
"""Below this many values, halving stops and each value is checked in Python."""
_BYTES = {"string": pa.binary(), "large_string": pa.large_binary()}
"""The binary type each string type is a view of."""


def valid_utf8(array: pa.Array) -> pa.Array:
    """`array` with every invalid UTF-8 string in it, at any depth, made valid; `array` itself when it
    is valid (the common case)."""
    if not _has_text(array.type):
        return array
    try:
        array.validate(full=True)
        return array
    except pa.ArrowInvalid:
        return _repair(array)


def valid_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """`batch` with each of its columns made valid (see `valid_utf8`)."""
    try:
        batch.validate(full=True)
        return batch
    except pa.ArrowInvalid:
        return pa.record_batch([valid_utf8(column) for column in batch.columns], schema=batch.schema)


def python_values(array: pa.Array) -> list[Any]:
    """`array.to_pylist()`, with invalid UTF-8 as U+FFFD instead of a UnicodeDecodeError (for data
    converted before it was checked)."""
    try:
        return array.to_pylist()
    except UnicodeDecodeError:
        return _repair(array).to_pylist()


def _has_text(kind: pa.DataType) -> bool:
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return True
    if pa.types.is_dictionary(kind):
        return _has_text(kind.value_type)
    return any(_has_text(kind.field(i).type) for i in range(kind.num_fields))


def _repair(array: pa.Array) -> pa.Array:
    kind = array.type
    if pa.types.is_string_view(kind):  # no kernel replaces into views: go through a plain string array
        array = array.cast(pa.large_string(), safe=False)
        kind = array.type
    if str(kind) in _BYTES:
        return _repair_strings(array)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        offsets = array.offsets  # a slice's: rebased to its own values (a null mask needs them at 0)
        first, last = offsets[0].as_py(), offsets[-1].as_py()
        values = valid_utf8(array.values.slice(first, last - first))
        rebased = pc.subtract(offsets, first).cast(offsets.type)
        return type(array).from_arrays(rebased, values, type=kind, mask=array.is_null())
    if pa.types.is_struct(kind):
        children = [valid_utf8(array.field(i)) for i in range(kind.num_fields)]
        names = [kind.field(i).name for i in range(kind.num_fields)]
        return pa.StructArray.from_arrays(children, names=names, mask=array.is_null())
    if pa.types.is_dictionary(kind):
        return pa.DictionaryArray.from_arrays(array.indices, valid_utf8(array.dictionary))
    bad = [i for i in range(len(array)) if not _readable(array[i])]  # maps, fixed-size lists…: null
    return pc.if_else(_mask(len(array), bad), pa.nulls(len(array), kind), array)


def _repair_strings(array: pa.Array) -> pa.Array:
    bad = _invalid(array)
    if not bad:
        return array
    raw = array.view(_BYTES[str(array.type)])
    fixed = pa.array([raw[i].as_py().decode("utf-8", "replace") for i in bad], array.type)
    return pc.replace_with_mask(array, _mask(len(array), bad), fixed)


def _mask(length: int, positions: list[int]) -> pa.Array:
    mask = np.zeros(length, dtype=bool)
    mask[positions] = True
    return pa.array(mask)


def _invalid(array: pa.Array) -> list[int]:
    """Positions of a string array's invalid values, found by halving (each check runs on buffers)."""
    found: list[int] = []
    spans = [(0, len(array))]
    while spans:
        start, stop = spans.pop()
        if _valid(array.slice(start, stop - start)):
            continue
        if stop - start <= _LEAF:
            found.extend(i for i in range(start, stop) if not _valid(array.slice(i, 1)))
        else:
            middle = (start + stop) // 2
            spans += [(middle, stop), (start, middle)]
    return sorted(found)


def _valid(array: pa.Array) -> bool:
    try:
        array.validate(full=True)
        return True
    except pa.ArrowInvalid:
        return False


def _readable(value: pa.Scalar) -> bool:
    try:
        value.as_py()
        return True
    except UnicodeDecodeError:
        return False

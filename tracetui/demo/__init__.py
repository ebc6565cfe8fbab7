"""A deterministic generator of realistic demo datasets of coding-agent traces.

The output follows `harbor traces export` (see the trace-format spec): one row per agent turn, the rows of a
trial are nested prefixes of one history, summarizations restart the history and add three sub-agent rows,
and rows are written in export order (all `main` rows trial by trial, then the sub-agent rows by type).

Text comes from templates with deterministic variation, so the data looks like real traces (terminus-2
prompts, `<think>` blocks, heredocs, ANSI terminal output, pytest / aider verifier logs). Everything streams: a
trial's history is built once and its rows are slices of it sharing the same string objects; sub-agent rows
are rebuilt at the end from the trial's seed rather than kept in memory.

One module per concern, in the order the data flows:

- `catalog`: the models, tasks and errors a dataset draws from
- `planning`: which trials exist, decided up front from the seed (this fixes the row count)
- `trials`: each trial's conversation (terminus-2, openhands), played from the trial's seed, with its text from
  `prompts` (the harness's fixed texts), `prose` (the model's words), `source_files` and `terminal`
- `verifier_logs`: the verifier's log in the task's test-runner style
- `writer`: rows in export order, into hub-named parquet shards; `write_demo` is the entry point

Tunables such as `writer.SHARD_ROWS` live in the module that reads them; patch them there.
"""

from .trials import Message
from .writer import DEFAULT_ROWS, MESSAGE_TYPE, SCHEMA, Progress, write_demo

__all__ = ["DEFAULT_ROWS", "MESSAGE_TYPE", "SCHEMA", "Message", "Progress", "write_demo"]

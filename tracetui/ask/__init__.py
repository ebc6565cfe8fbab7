"""Ask every trial a question through an OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp server):
a verdict per trial, the message that shows it and a quote checked against the trial, kept on disk as
data the facets, filters, stats and exports read.

- `endpoint`: where to ask (`--endpoint` / `--model`, `OPENAI_BASE_URL` / `OPENAI_API_KEY`, the
  config file's `[ask]` table) and how much a trial may take.
- `client`: the HTTP client (the standard library's `http.client`: nothing to install), its retries
  and its failures as one line each.
- `prompt`: the fixed template, and a trial as the reader sees it within a token budget.
- `verify`: the reply read defensively, and its quote looked for in the trial.
- `answers`: one question's answers on disk, which is also the cache (by trial content, question,
  model and template version).
- `index`: a question's answers on the trials of a session: the `ask:NAME` facet and the cells.
- `run`: asking many trials at once, with progress, cancellation and resumption.

Above the render layer (the model reads what the conversation pane shows) and below the UI: no
Textual, no Rich, no pyarrow here.
"""

from __future__ import annotations

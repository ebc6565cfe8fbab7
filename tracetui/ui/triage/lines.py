"""The triage screen's two information lines, as InfoBar versions (longest first; the bar shows the first
that fits): the header (sources, counts, pass rate, filters) and the position line (the trial, where the
conversation is). On narrow terminals they abbreviate before they drop, and what matters most stays."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...data.facets import FilterState
from ...data.session import Session
from ...data.trials import NOT_GRADED, PASS, RUNNING
from ..format import counted, episode_of, human_size, result_text
from ..widgets.bars import Part
from ..widgets.conversation import ConversationView


def filters_text(state: FilterState, model_names: dict[str, str], search_pattern: str | None) -> str:
    """The active filters as `facet=value|value`, models by their short names."""
    parts = [
        f"{facet}=" + "|".join(sorted(model_names.get(v, v) if facet == "model" else v for v in values))
        for facet, values in state.selected.items()
    ]
    if state.text:
        parts.append(f"name~{state.text}")
    if search_pattern is not None:
        parts.append(f"matches~{search_pattern}")
    return " ".join(parts)


def header_versions(
    session: Session, order: np.ndarray, filters: str, hacked: np.ndarray | None = None, unsaved: int = 0
) -> list[list[Part]]:
    """Sources, counts, pass rate and filters; the filters and pass rate stay the longest, a long local
    path shortens to its file or folder name before the sources drop. `hacked` (per trial, once the
    findings are in) adds the pass rate without reward hacks beside it; the counts of a list still growing
    (`Session.growing`) end in "+". Label and note changes held in
    memory (`unsaved`) lead every version, however narrow, until the disk takes them."""
    outcome = session.trials.outcome[order]
    rated = np.count_nonzero(~np.isin(outcome, NOT_GRADED))
    passed = np.count_nonzero(outcome == PASS)
    rate: Part = (f"{100 * passed / rated:.1f}%" if rated else "—", "bold green")
    hacked_passes = hacked[order] & (outcome == PASS) if hacked is not None else None
    long, mid, short = hack_free_parts(int(passed), int(rated), hacked_passes)
    running = int(np.count_nonzero(outcome == RUNNING))
    live: list[Part] = [(f"  ·  {running:,} running", "bold cyan")] if running else []
    short_live: list[Part] = [(f" · {running:,} running", "bold cyan")] if running else []
    names = [
        (ds.source.display or ds.label) + (f"@{ds.source.revision[:8]}" if ds.source.revision else "")
        for ds in session.datasets
    ]
    sources: Part = (", ".join(names), "cyan")
    # a local path as typed can be long: its last part names it well enough when room is short
    short_sources: Part = (
        ", ".join(
            n if ds.source.hub_files is not None else Path(n).name or n for n, ds in zip(names, session.datasets)
        ),
        "cyan",
    )
    tail: list[Part] = [("  ·  ", ""), (filters, "yellow")] if filters else []
    short_tail: list[Part] = [(" · ", ""), (filters, "yellow")] if filters else []
    counts = f"{len(order):,}/{len(session):,}" + ("+" if session.growing is not None else "")  # more to come
    rows = f"  ·  {session.num_rows:,} rows"
    versions: list[list[Part]] = [
        [("tracetui ", "bold"), sources, f"  ·  {counts} trials{rows}  ·  pass ", rate, *long, *live, *tail],
        [("tracetui ", "bold"), sources, f"  ·  {counts} trials{rows}  ·  pass ", rate, *mid, *live, *tail],
        [sources, f"  ·  {counts} trials  ·  pass ", rate, *mid, *live, *tail],
        [sources, f" · {counts} · pass ", rate, *short, *short_live, *short_tail],
        *(
            [[short_sources, f" · {counts} · pass ", rate, *short, *short_live, *short_tail]]
            if short_sources != sources
            else []
        ),
        [f"{counts} trials · pass ", rate, *short, *short_live, *short_tail],
        [f"{counts} · pass ", rate, *short, *short_live, *short_tail],
        *([[f"{counts} · pass ", rate, *short_live, *short_tail]] if short and filters else []),  # the filters first
    ]
    if not unsaved:
        return versions
    marker: Part = (f"⚠ {unsaved:,} unsaved", "bold white on red")
    return [[marker, " ", *version] for version in versions]


def hack_free_parts(passed: int, rated: int, hacked_passes: np.ndarray | None) -> tuple[list[Part], ...]:
    """The pass rate without reward hacks, long to short (`· 11.1% without hacks (4 hacked passes)`); nothing
    before the findings are in (`hacked_passes` None; else per listed trial, whether it is a hacked pass)."""
    if hacked_passes is None or not rated:
        return [], [], []
    hacks = int(np.count_nonzero(hacked_passes))
    clean: Part = (f"{100 * (passed - hacks) / rated:.1f}%", "bold yellow" if hacks else "bold green")
    count = f" ({hacks:,} hacked pass{'es' * (hacks != 1)})"
    return [" · ", clean, f" without hacks{count}"], [" · ", clean, " without hacks"], [" · ", clean, " w/o hacks"]


def position_versions(session: Session, trial: int, model: str, conversation: ConversationView) -> list[list[Part]]:
    """The trial, its model and result, and where the conversation pane is (episode, message). On a
    narrow terminal the trial goes by its attempt id (the list shows its task) before the sub-agent
    conversation shown, or where the pane is, is cut."""
    info = session.info(trial)
    episode, episodes = conversation.episode_position()
    trial_name = info.trial_name or info.task
    name: Part = (trial_name, "bold")
    attempt: Part = (trial_name.rsplit("__", 1)[-1], "bold")
    result = f"  {result_text(info.result, info.reward)}  "
    head: list[Part] = [name, f"  {model}", result]
    sub: list[Part] = []
    short_sub: list[Part] = []
    if conversation.title != "main":
        sub = [(f"[sub-agent: {conversation.title}]  ", "magenta")]
        short_sub = [(f"[{conversation.title}] ", "magenta")]
    where: list[Part] = []
    short_where: list[Part] = []
    if episode is not None:
        where.append(f"{episode_of(episode, episodes)}  ")
        short_where.append(f"{episode_of(episode, episodes, 'ep')} ")
    if conversation.messages:
        where.append(f"message {conversation.current + 1}/{len(conversation.messages)}  ")
        short_where.append(f"msg {conversation.current + 1}/{len(conversation.messages)}")
    history = conversation.history
    subs = len(history.subagents) if history else 0
    more: list[Part] = [(f"  ·  {counted(subs, 'sub-agent conversation')} (u)", "dim")] if subs else []
    return [
        [*head, *sub, *where, (human_size(info.size), "dim"), *more],
        [*head, *sub, *where, *([(f"· {counted(subs, 'sub-agent')} (u)", "dim")] if subs else [])],
        [*head, *sub, *short_where],
        [name, result, *sub, *short_where],
        [attempt, result, *sub, *short_where],
        [attempt, result, *short_sub, *short_where],
        [attempt, " ", *short_sub, *short_where],
    ]

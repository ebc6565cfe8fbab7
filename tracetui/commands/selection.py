"""Opening a command's sources and turning its --filter / --exclude into trials, shared by the app's
command line and every subcommand.

The facets that cost something are registered only when a filter or a grouping names them: `label`
(the label store), `failed_test` (the verifier index), `finding` (the findings index) and `task_health`
(the verifier index, for `same-failure`), the indexes read back from beside the conversion when they
were built before, and `ask:NAME` (the answers to a question asked with `tracetui ask`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..data.facets import ASK_PREFIX, FilterArg, FilterState, parse_filter_args, resolve_filters
from ..data.session import Session, open_session, prepare
from ..data.sources import ResolvedSource
from . import cache_size, end_progress, print_progress, source_specs
from .demo import demo_rows, demo_sources
from .output import print_note

if TYPE_CHECKING:  # imported where they are used, when a filter or a grouping needs them
    from ..ask.index import AskIndex
    from ..data.findings_index import FindingsIndex
    from ..data.task_health import TaskHealth
    from ..data.verifier_index import VerifierIndex
    from ..store.labels import LabelStore


def resolved_sources(args) -> list[ResolvedSource]:
    """What the command line's sources name; `demo` alone is the bundled demo dataset, as `tracetui demo`
    opens it (so `tracetui labels demo` lists what was labelled there)."""
    if args.sources == ["demo"]:
        return demo_sources(demo_rows(None), 0)
    return prepare(source_specs(args))


def open_sources(args) -> Session:
    """The session of the command line's sources, converting what is new with progress on stderr."""
    session = open_session(resolved_sources(args), print_progress, cache_size(args))
    end_progress()
    for note in session.notes:
        print_note(f"tracetui: {note}", file=sys.stderr)
    return session


def filter_args(args) -> list[FilterArg]:
    """The command's --filter and --exclude, checked for shape and facet names (before any download)."""
    return parse_filter_args(getattr(args, "filter", [])) + parse_filter_args(getattr(args, "exclude", []), "--exclude")


@dataclass
class Extras:
    """What a command opened along the way, so that it is opened once."""

    store: LabelStore | None = None
    records: dict = field(default_factory=dict)
    """Labels and notes by trial, once the label facet is registered."""
    labels: list[str] | None = None
    """The configured label names, once the label facet is registered."""
    findings: FindingsIndex | None = None
    verifiers: VerifierIndex | None = None
    health: TaskHealth | None = None
    asks: dict[str, AskIndex] = field(default_factory=dict)
    """The questions' answers registered as facets, by facet name (`ask:NAME`)."""


def filter_state(
    session: Session, filters: Sequence[FilterArg], extras: Extras | None = None, find: bool = True
) -> FilterState:
    """The FilterState `filters` mean, each value resolved against the data (SourceError when one
    matches nothing or several), after registering the facets they name; with `find` false, finding
    kinds and task health tags are checked by name only and their indexes are left for later (the app
    builds them in the background)."""
    extras = extras or Extras()
    needed = {f.facet for f in filters}
    known: dict[str, list[str]] = {}
    if "label" in needed:
        known["label"] = add_label_facet(session, extras)
    if "finding" in needed and find:
        findings_index(session, extras)
    elif "finding" in needed:
        from ..findings import KIND_NAMES

        known["finding"] = list(KIND_NAMES)
    if "failed_test" in needed:
        verifier_index(session, extras)
    if "task_health" in needed and find:
        task_health(session, extras)
    elif "task_health" in needed:
        from ..data.task_health import HEALTH

        known["task_health"] = list(HEALTH)
    for name in sorted(n for n in needed if n.startswith(ASK_PREFIX)):
        ask_index(session, extras, name)
    values = session.facets.values()
    for name, extra in known.items():
        values[name] = list(dict.fromkeys([*values.get(name, []), *extra]))
    return resolve_filters(filters, values)


def chosen_trials(session: Session, filters: Sequence[FilterArg], extras: Extras | None = None) -> np.ndarray:
    """Trial ids matching `filters` (see `filter_state`), in list order."""
    return np.nonzero(session.facets.apply(filter_state(session, filters, extras)).visible)[0]


def label_store(extras: Extras):
    """The label store (opened once), its warning, if any, on stderr."""
    if extras.store is None:
        from ..store.labels import LabelStore

        extras.store = LabelStore.open()
        warning = extras.store.pop_warning()
        if warning:
            print_note(f"tracetui: {warning}", file=sys.stderr)
    return extras.store


def add_label_facet(session: Session, extras: Extras) -> list[str]:
    """Register the label facet (once); returns the configured label names (valid filter values even
    before any trial has them)."""
    if extras.labels is None:
        from ..store.config import load_config
        from ..store.facets import label_facet
        from ..store.trial_keys import session_records

        store = label_store(extras)
        config, _ = load_config()
        extras.records = session_records(session, store)
        session.facets.add(label_facet(session, store, config.labels, extras.records))
        extras.labels = list(config.labels)
    return extras.labels


def findings_index(session: Session, extras: Extras):
    """The findings index (built with progress, or read back), its facet registered."""
    if extras.findings is None:
        from ..data.findings_index import build_findings_index

        progress = lambda fraction: print_progress(fraction, "finding what went wrong")  # noqa: E731
        extras.findings = build_findings_index(session, progress, verifiers=extras.verifiers)
        end_progress()
        session.facets.add(extras.findings.facet())
    return extras.findings


def ask_index(session: Session, extras: Extras, facet: str) -> AskIndex:
    """The answers to the question of facet `ask:NAME`, its facet registered; SourceError naming the
    questions asked when there is no such question."""
    if facet not in extras.asks:
        from ..ask.answers import named
        from ..ask.index import AskIndex

        index = extras.asks[facet] = AskIndex(named(facet[len(ASK_PREFIX) :]), session)
        session.facets.add(index.facet())
    return extras.asks[facet]


def verifier_index(session: Session, extras: Extras):
    """The verifier index (built with progress, or read back), its failed-test facet registered."""
    if extras.verifiers is None:
        from ..data.verifier_index import build_verifier_index

        progress = lambda fraction: print_progress(fraction, "reading verifier logs")  # noqa: E731
        extras.verifiers = build_verifier_index(session, progress)
        end_progress()
        session.facets.add(extras.verifiers.facet())
    return extras.verifiers


def task_health(session: Session, extras: Extras):
    """Every task's health (the verifier index built or read back for `same-failure`), its facet registered."""
    if extras.health is None:
        from ..data.task_health import task_health as health_of

        extras.health = health_of(session, verifier_index(session, extras))
        session.facets.add(extras.health.facet())
    return extras.health

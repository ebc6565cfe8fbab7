"""Task health on the triage screen: the facet (registered at once from the outcomes; again with
`same-failure` once the verifier index is in) and the trial list's health column."""

from __future__ import annotations

from rich.style import Style

from ..data.session import Session
from ..data.task_health import task_health
from ..data.verifier_index import VerifierIndex
from .widgets.columns import Column
from .widgets.trial_list import TrialList

COLUMN = "health"
WIDTH = 7
"""`always+`: the gravest tag's word, `+` when the task has more (the sidebar has them all)."""


def show_task_health(session: Session, trial_list: TrialList, verifiers: VerifierIndex | None = None) -> None:
    health = task_health(session, verifiers)
    session.facets.add(health.facet())
    trial_list.set_column(
        Column(
            COLUMN,
            "health",
            WIDTH,
            lambda trial, width: health.word(trial)[:width],
            give_way=((25, 0),),
            style=Style(dim=True),
        )
    )

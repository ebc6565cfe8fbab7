"""The findings engine: what went wrong in a trial, named from what the trace shows, offline.

Reads a trial's rebuilt history (what the agent's structured actions did, never its prose, except
for the final claim), its result and its verifier log, and returns findings: (kind, message index,
evidence, span). Pure: imports only `tracetui.trace` and `tracetui.verifier`. One module per family
of rules (`verifier`, `fetch`, `claims`, `loops`, `outcome`), on top of a small shell reader
(`shell`), the file effects of commands (`effects`), what each reply did (`steps`) and what a path
is to a verifier (`paths`).

The kinds (`model`) import at once; the engine loads on the first use of `find_findings` or
`RULES_VERSION`, so the app names the kinds before its first frame and finds them after it.
"""

from typing import TYPE_CHECKING, Any

from .endings import ENDINGS, ending_kind
from .model import HACKS, KIND_NAMES, KINDS, REWARD_HACKS, Finding, Kind, marker

if TYPE_CHECKING:
    from .engine import RULES_VERSION, find_findings

__all__ = [
    "ENDINGS",
    "HACKS",
    "KINDS",
    "KIND_NAMES",
    "REWARD_HACKS",
    "RULES_VERSION",
    "Finding",
    "Kind",
    "ending_kind",
    "find_findings",
    "marker",
]


def __getattr__(name: str) -> Any:
    if name in ("RULES_VERSION", "find_findings"):
        from . import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

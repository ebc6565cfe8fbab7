"""The findings engine: what went wrong in a trial, named from what the trace shows, offline.

Reads a trial's rebuilt history (what the agent's structured actions did, never its prose, except
for the final claim), its result and its verifier log, and returns findings: (kind, message index,
evidence, span). Pure: imports only `tracetui.trace` and `tracetui.verifier`. One module per family
of rules (`verifier`, `fetch`, `claims`, `loops`, `outcome`), on top of a small shell reader
(`shell`), the file effects of commands (`effects`), what each reply did (`steps`) and what a path
is to a verifier (`paths`).
"""

from .engine import RULES_VERSION, find_findings
from .model import HACKS, KIND_NAMES, KINDS, Finding, Kind, marker

__all__ = ["HACKS", "KINDS", "KIND_NAMES", "RULES_VERSION", "Finding", "Kind", "find_findings", "marker"]

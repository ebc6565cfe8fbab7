"""`pc`: pyarrow.compute, imported when a kernel is first called.

Importing pyarrow.compute wraps each of its ~300 kernels in a Python function (~40 ms, a tenth of the
first screen), and nothing on the way to the first screen computes: the trials and facets come from the
kept arrays. So the data layer calls kernels through `pc` from here, which imports the module on the
first attribute it is asked for (the import system's lock makes that safe from any thread). The app
has it imported in the background after its first screen (`load_soon`), so that its first search or
export does not wait for it either.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import threads

if TYPE_CHECKING:
    import pyarrow.compute as pc
else:

    class _OnFirstUse:
        def __getattr__(self, name: str) -> Any:
            return getattr(importlib.import_module("pyarrow.compute"), name)

    pc = _OnFirstUse()

__all__ = ["load_soon", "pc"]


def load_soon() -> None:
    """Import the kernels in a daemon thread (nobody waits for it; a kernel called meanwhile waits on
    the import lock, then runs)."""
    threads.detached(lambda: importlib.import_module("pyarrow.compute"), "tracetui-compute")

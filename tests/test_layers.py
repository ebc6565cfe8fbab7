"""The package layout is a stack of layers: a module imports from its own package and the layers below
it, never from one above (nor a sibling of its layer); inside the layers, contracts say who may import
what (CONTRACTS), and no imports run in a circle. Read from every module's import statements with
`ast`, lazy imports inside functions and TYPE_CHECKING blocks included (circles: those that run)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import tracetui

PACKAGE = Path(tracetui.__file__).parent
LAYERS = [
    {"", "trace", "verifier", "paths", "collector"},  # "" is the root package (__version__)
    {"findings"},
    {"data"},
    {"store", "render", "clipboard", "demo"},
    {"ask"},
    {"ui"},
    {"web"},
    {"commands"},
    {"cli"},
    {"__main__"},
]
"""Lowest first: the trace model and the verifier-log parser know nothing of ours; data knows nothing of
rendering or the UI; `ask` shows the model what the conversation pane shows; the command line is on top."""
FORBIDDEN = {
    "trace": {"rich", "textual", "pyarrow"},
    "verifier": {"rich", "textual", "pyarrow", "numpy", "orjson"},  # the standard library only
    "collector": {"rich", "textual", "pyarrow", "numpy", "orjson"},
    "findings": {"rich", "textual", "pyarrow"},
    "data": {"rich", "textual"},
    "store": {"rich", "textual"},  # and its SQLite store the standard library only: STDLIB_ONLY
    "render": {"textual"},
    "ask": {"rich", "textual", "pyarrow"},
    "ui": {"pyarrow"},  # widgets and screens read the data layer's arrays, never the files
}
"""Third-party packages a layer must not import."""


def layer_of(package: str) -> int:
    return next(index for index, names in enumerate(LAYERS) if package in names)


def modules() -> list[tuple[str, Path]]:
    """(dotted name, path) of every module of the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("tracetui", *path.relative_to(PACKAGE).with_suffix("").parts)
        found.append((".".join(parts[:-1] if parts[-1] == "__init__" else parts), path))
    return found


MODULES = {name for name, _ in modules()}


def imports(module: str, path: Path, typing: bool = True) -> set[str]:
    """Every absolute module name `module` imports (relative imports resolved; `from p import x` is
    module `p.x` when there is one, and `p` unless `x` is a module of `from . import x`); without `typing`, those of TYPE_CHECKING blocks
    left out (the imports that run)."""
    return imports_in(module, path, ast.parse(path.read_text(encoding="utf-8")), typing)


def imports_in(module: str, path: Path, tree: ast.AST, typing: bool = True) -> set[str]:
    """`imports` of the source `tree` of `module` (at `path`)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree if typing else _WithoutTypeChecking().visit(tree)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            submodules = {f"{target}.{a.name}" for a in node.names} & MODULES
            names |= submodules
            if node.module or len(submodules) < len(node.names):  # `from package import name`: the package too
                names.add(target)
    return names


class _WithoutTypeChecking(ast.NodeTransformer):
    def visit_If(self, node: ast.If) -> ast.AST | None:
        return None if "TYPE_CHECKING" in ast.unparse(node.test) else self.generic_visit(node)


def top_package(module: str) -> str:
    """`tracetui.data.facets` → "data"; `tracetui` (the root) → ""."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_package_has_a_layer():
    packages = {top_package(module) for module, _ in modules()}
    assert packages <= set().union(*LAYERS), packages - set().union(*LAYERS)


@pytest.mark.parametrize("module, path", modules(), ids=lambda value: value if isinstance(value, str) else "")
def test_imports_run_down_the_layers(module, path):
    source = top_package(module)
    upward = []
    for name in sorted(imports(module, path)):
        if name.split(".")[0] != "tracetui":
            continue
        target = top_package(name)
        if target != source and layer_of(target) >= layer_of(source):
            upward.append(name)
    assert not upward, f"{module} imports from its layer or above: {upward}"


@pytest.mark.parametrize("module, path", modules(), ids=lambda value: value if isinstance(value, str) else "")
def test_layers_keep_out_of_third_party_packages_above_them(module, path):
    forbidden = FORBIDDEN.get(top_package(module), set())
    found = {name.split(".")[0] for name in imports(module, path)} & forbidden
    assert not found, f"{module} imports {sorted(found)}"


def test_the_rules_see_what_they_check():
    """The reader finds lazy and relative imports, so a rule cannot pass for want of looking."""
    names = dict(modules())
    triage = imports("tracetui.ui.screens.triage", names["tracetui.ui.screens.triage"])
    assert {"tracetui.data.session", "tracetui.ui.widgets.bars", "tracetui.ui.screens.others"} <= triage
    others = imports("tracetui.ui.screens.others", names["tracetui.ui.screens.others"])
    assert "tracetui.ui.screens.stats" in others  # lazy: inside a method
    assert "tracetui.verifier" in imports("tracetui.render.verifier", names["tracetui.render.verifier"])
    assert "textual" in {name.split(".")[0] for name in triage}


STDLIB_ONLY = {"tracetui.store.records", "tracetui.store.sqlite", "tracetui.store.labels", "tracetui.store.unsaved"}
"""The SQLite label store: the standard library, each other and `tracetui.paths` (where the file lives)."""


@pytest.mark.parametrize("module", sorted(STDLIB_ONLY))
def test_the_sqlite_store_imports_only_the_standard_library(module):
    import sys

    names = dict(modules())
    allowed = STDLIB_ONLY | {"tracetui.paths", "__future__"}
    found = {name for name in imports(module, names[module]) if name not in allowed}
    assert {name.split(".")[0] for name in found} <= set(sys.stdlib_module_names), sorted(found)


# --- inside the packages ----------------------------------------------------------------------------

HUB = frozenset({"tracetui.data.hub", "tracetui.data.hub_reads"})
"""huggingface_hub and HTTP range reads: the network."""
HUB_KIND = HUB | {
    "tracetui.data.hub_sources",
    "tracetui.data.hub_metadata",
    "tracetui.data.remote",
    "tracetui.data.download",
}
"""The hub kind of source: resolving a hub id, reading a dataset remotely, downloading it."""


@dataclass(frozen=True)
class Contract:
    """Modules under `importers` (a module, or a package and all below it), but not under `exempt`,
    import nothing under `forbidden` unless it is under `allowed`."""

    rule: str
    importers: frozenset[str]
    forbidden: frozenset[str]
    exempt: frozenset[str] = frozenset()
    allowed: frozenset[str] = frozenset()

    def broken_by(self, module: str, imported: set[str]) -> list[str]:
        if not under(module, self.importers) or under(module, self.exempt):
            return []
        return sorted(n for n in imported if under(n, self.forbidden) and not under(n, self.allowed) and n != module)


def under(module: str, names: frozenset[str]) -> bool:
    return any(module == name or module.startswith(name + ".") for name in names)


CONTRACTS = [
    Contract(
        "job folders and recordings are read from their files: never through the session, the kinds of "
        "source or the commands",
        frozenset({"tracetui.data.jobs", "tracetui.data.recordings"}),
        frozenset({"tracetui.data.session", "tracetui.data.source_kinds", "tracetui.commands"}),
    ),
    Contract(
        "only the hub kind of source reaches the hub; the rest asks it (the UI asks data.download)",
        frozenset({"tracetui"}),
        HUB,
        exempt=HUB_KIND,
    ),
    Contract(
        "sources.py is what every kind of source shares, so it imports none of them (nor the rest of data)",
        frozenset({"tracetui.data.sources"}),
        frozenset({"tracetui.data"}),
    ),
    Contract(
        "the store reaches the data layer only through a session, its trials and facets (and the config "
        "through the cache's sizes), never its files, sources or the network",
        frozenset({"tracetui.store"}),
        frozenset({"tracetui.data"}),
        allowed=frozenset(
            {
                "tracetui.data.session",
                "tracetui.data.dataset",
                "tracetui.data.trials",
                "tracetui.data.facets",
                "tracetui.data.cache_folders",
            }
        ),
    ),
    Contract(
        "widgets are parts: they never import a screen, the triage screen's parts or the app",
        frozenset({"tracetui.ui.widgets"}),
        frozenset({"tracetui.ui.screens", "tracetui.ui.triage", "tracetui.ui.app"}),
    ),
    Contract(
        "the triage screen's parts (ui/triage/, findings and their evidence) see their screen through a "
        "host protocol: they import no screen and not the app",
        frozenset({"tracetui.ui.triage", "tracetui.ui.findings", "tracetui.ui.evidence"}),
        frozenset({"tracetui.ui.screens", "tracetui.ui.app"}),
    ),
    Contract(
        "the app imports every screen and part, so none of ui/ imports the app",
        frozenset({"tracetui.ui"}),
        frozenset({"tracetui.ui.app"}),
    ),
]
"""The rules inside the layers (lazy and type-only imports count)."""


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.rule.split(":")[0][:40])
def test_the_contracts_inside_the_packages_hold(contract):
    broken = {}
    for module, path in modules():
        found = contract.broken_by(module, imports(module, path))
        if found:
            broken[module] = found
    assert not broken, f"{contract.rule}: {broken}"


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `graph` (module -> the modules it imports): its strongly connected parts
    of more than one module, each sorted."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:  # Tarjan's algorithm; the package is a few hundred modules deep at most
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in graph[module]:
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            part = []
            while True:
                member = stack.pop()
                part.append(member)
                if member == module:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return found


def import_graph(typing: bool) -> dict[str, set[str]]:
    return {
        module: {name for name in imports(module, path, typing) if name in MODULES and name != module}
        for module, path in modules()
    }


def test_no_import_circles():
    """No module reaches itself through what it imports, lazy imports included (a lazy import is no way
    out of a circle); a type named under TYPE_CHECKING is not an import that runs, and may point back."""
    assert circles(import_graph(typing=False)) == []


def test_a_planted_violation_fails_each_rule():
    """Each kind of rule catches what it is there for: a lazy import of the session from a job module,
    an import of the hub from the UI, a circle through a function's import; a TYPE_CHECKING import
    counts for the contracts, not for circles."""
    names = dict(modules())
    follow = "tracetui.data.jobs.follow"
    planted = ast.parse("def poll():\n    from ..session import Session\n")
    jobs_rule, hub_rule = CONTRACTS[0], CONTRACTS[1]
    assert jobs_rule.broken_by(follow, imports_in(follow, names[follow], planted)) == ["tracetui.data.session"]
    typed = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..session import Session\n")
    assert jobs_rule.broken_by(follow, imports_in(follow, names[follow], typed)) == ["tracetui.data.session"]
    assert imports_in(follow, names[follow], typed, typing=False) == {"typing"}
    app = "tracetui.ui.app"
    assert hub_rule.broken_by(app, imports_in(app, names[app], ast.parse("from ..data import hub"))) == [
        "tracetui.data.hub"
    ]
    assert hub_rule.broken_by("tracetui.data.remote", {"tracetui.data.hub_reads"}) == []
    graph = import_graph(typing=False)
    graph["tracetui.data.sources"] = graph["tracetui.data.sources"] | {"tracetui.data.hub"}
    assert any({"tracetui.data.hub", "tracetui.data.sources"} <= set(circle) for circle in circles(graph))


def test_a_planted_violation_inside_ui_fails():
    """A part that reaches back into its screen (even lazily, for its types only), or to the app, and a
    widget that knows a part are caught; the screen may know its parts."""

    def broken(module: str, names: set[str]) -> list[str]:
        return sorted({name for contract in CONTRACTS for name in contract.broken_by(module, names)})

    part = "tracetui.ui.triage.planted"
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..screens.triage import TriageScreen\n"
    source += "def later():\n    from ...ui import app\n"
    names = imports_in(part, PACKAGE / "ui" / "triage" / "planted.py", ast.parse(source))
    assert broken(part, names) == ["tracetui.ui.app", "tracetui.ui.screens.triage"]
    widget = "tracetui.ui.widgets.planted"
    names = imports_in(
        widget, PACKAGE / "ui" / "widgets" / "planted.py", ast.parse("from ..triage.search import Search")
    )
    assert broken(widget, names) == ["tracetui.ui.triage.search"]
    assert broken("tracetui.ui.screens.triage", {"tracetui.ui.triage.search"}) == []

"""The package layout is a stack of layers: a module imports from its own package and the layers below
it, never from one above (nor a sibling of its layer). Read from every module's import statements with
`ast`, lazy imports inside functions and TYPE_CHECKING blocks included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tracetui

PACKAGE = Path(tracetui.__file__).parent
LAYERS = [
    {"", "trace", "verifier", "paths"},  # "" is the root package (__version__)
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


def imports(module: str, path: Path) -> set[str]:
    """Every absolute module name `module` imports (relative imports resolved; `from package import x`
    is module `x` too when there is one)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            submodules = {f"{target}.{a.name}" for a in node.names} & MODULES
            names.update(submodules)
            if node.module or len(submodules) < len(node.names):
                names.add(target)
    return names


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


UI_INSIDE = {
    "tracetui.ui.widgets": ("tracetui.ui.screens", "tracetui.ui.triage", "tracetui.ui.app"),
    "tracetui.ui.triage": ("tracetui.ui.screens", "tracetui.ui.app"),
    "tracetui.ui.findings": ("tracetui.ui.screens", "tracetui.ui.app"),
    "tracetui.ui.evidence": ("tracetui.ui.screens", "tracetui.ui.app"),
    "tracetui.ui": ("tracetui.ui.app",),
}
"""Inside `ui/`: the widgets know no screen, no part of one and not the app; the triage screen's parts
(`ui/triage/`, findings and their evidence) know no screen and not the app (each sees its screen through
a host protocol); nothing in `ui/` imports the app, which imports them all. Each module answers to the
rules of every package it is in."""


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def inside_violations(module: str, names: set[str]) -> list[str]:
    """The imports among `names` that `module` may not make by UI_INSIDE."""
    barred = [banned for package, rule in UI_INSIDE.items() if _within(module, package) for banned in rule]
    return sorted(name for name in names if module != name and any(_within(name, banned) for banned in barred))


@pytest.mark.parametrize(
    "module, path",
    [(name, path) for name, path in modules() if _within(name, "tracetui.ui")],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_ui_imports_keep_to_their_side(module, path):
    found = inside_violations(module, imports(module, path))
    assert not found, f"{module} imports {found}"


def test_a_planted_violation_fails(tmp_path):
    """A part that reaches back into its screen (even lazily, for its types only) and a widget that
    knows a part are caught; so is a data module that imports the UI."""
    part = tmp_path / "tracetui" / "ui" / "triage" / "planted.py"
    part.parent.mkdir(parents=True)
    part.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..screens.triage import TriageScreen\n"
        "def later():\n    from ...ui import app\n",
        encoding="utf-8",
    )
    names = imports("tracetui.ui.triage.planted", part)
    assert inside_violations("tracetui.ui.triage.planted", names) == ["tracetui.ui.app", "tracetui.ui.screens.triage"]
    widget = part.parent.parent / "widgets" / "planted.py"
    widget.parent.mkdir()
    widget.write_text("from ..triage.search import Search\n", encoding="utf-8")
    names = imports("tracetui.ui.widgets.planted", widget)
    assert inside_violations("tracetui.ui.widgets.planted", names) == ["tracetui.ui.triage.search"]
    assert inside_violations("tracetui.ui.screens.triage", {"tracetui.ui.triage.search"}) == []
    data = tmp_path / "tracetui" / "data" / "planted.py"
    data.parent.mkdir()
    data.write_text("import tracetui.ui.format\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="imports from its layer or above"):
        test_imports_run_down_the_layers("tracetui.data.planted", data)


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `graph` (module → the modules it imports): each a list of modules that all
    reach each other, lazy imports included (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for name in sorted(graph[module]):
            if name not in index:
                visit(name)
                low[module] = min(low[module], low[name])
            elif name in stack:
                low[module] = min(low[module], index[name])
        if low[module] == index[module]:
            component = [stack.pop()]
            while component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_ui_has_no_import_circle():
    ui = {name: path for name, path in modules() if _within(name, "tracetui.ui")}
    graph = {name: {n for n in imports(name, path) if n in ui and n != name} for name, path in ui.items()}
    assert circles(graph) == []
    graph["tracetui.ui.keymap"].add("tracetui.ui.app")  # planted: the app imports the keymap
    assert any({"tracetui.ui.app", "tracetui.ui.keymap"} <= set(circle) for circle in circles(graph))

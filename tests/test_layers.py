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
    """Every absolute module name `module` imports (relative imports resolved; `from . import x` is
    module `x` when there is one, else its package)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                if node.module:
                    names.add(target)
                else:
                    names.update(
                        f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names
                    )
            else:
                names.add(node.module or "")
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

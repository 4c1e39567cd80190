"""The package's folders show its architecture (docs/library.md): each folder imports only the folders listed
above it there, so no two folders import each other, and no module imports another in a circle."""

from __future__ import annotations

import ast
import re

from helpers import ROOT

SRC = ROOT / "workflow" / "src" / "stsq"


def documented_order() -> list[str]:
    """The folders and top modules in docs/library.md's tree, in its order."""
    text = (ROOT / "docs" / "library.md").read_text()
    tree = text.split("```", 2)[1]
    return re.findall(r"^  (\w+)(?:/|\.py)", tree, re.M)


def imports() -> dict[str, set[str]]:
    """Each module (dotted, under the package) -> the modules of the package it imports, anywhere in it."""
    mods = {".".join(p.relative_to(SRC).with_suffix("").parts) for p in SRC.rglob("*.py")
            if "__pycache__" not in p.parts and p.name != "__init__.py"}
    out = {}
    for m in mods:
        found = set()
        for n in ast.walk(ast.parse(SRC.joinpath(*m.split(".")).with_suffix(".py").read_text())):
            if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("stsq."):
                base = n.module[len("stsq."):]
                found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in n.names}
        out[m] = {f for f in found if f in mods}
    return out


def part(module: str) -> str:
    return module.split(".")[0]


def test_each_folder_imports_only_the_folders_above_it_in_the_docs():
    order = documented_order()
    found = {part(m) for m in imports()}
    assert found <= set(order), f"folders or modules the docs' tree does not list: {sorted(found - set(order))}"
    rank = {name: i for i, name in enumerate(order)}
    upward = sorted(f"{m} imports {t}" for m, ts in imports().items() for t in ts
                    if part(t) != part(m) and rank[part(t)] > rank[part(m)])
    print(f"\n[measured] {len(order)} parts, {sum(len(t) for t in imports().values())} imports, "
          f"{len(upward)} upward")
    assert not upward, upward


def test_no_module_imports_another_in_a_circle_at_import_time():
    mods = imports()
    top_level = {}
    for m in mods:
        found = set()
        for n in ast.parse(SRC.joinpath(*m.split(".")).with_suffix(".py").read_text()).body:
            if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("stsq."):
                base = n.module[len("stsq."):]
                found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in n.names}
        top_level[m] = {f for f in found if f in mods}
    state: dict[str, int] = {}
    circles = []

    def visit(m, path):
        state[m] = 1
        for t in top_level[m]:
            if state.get(t) == 1:
                circles.append(path[path.index(t):] + [t])
            elif t not in state:
                visit(t, [*path, t])
        state[m] = 2

    for m in sorted(top_level):
        if m not in state:
            visit(m, [m])
    assert not circles, circles

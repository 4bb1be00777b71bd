"""The layers of docs/architecture.md hold: no module imports from a higher layer, no
package imports a sibling on its own layer, and no import cycle exists between modules.

The layer table is read from the document itself (the block after `<!-- layers -->`),
so the picture users read and the rule CI enforces cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "tracerl"
DOC = ROOT / "docs" / "architecture.md"


def layers() -> dict[str, int]:
    """Package (or top-level module) name -> layer index, 0 = bottom."""
    text = DOC.read_text()
    block = text.split("<!-- layers -->", 1)[1].split("```", 2)[1]
    rows = [line.split("|")[0].split() for line in block.strip("\n").splitlines()]
    rows = [r for r in rows if r]
    table = {}
    for depth, names in enumerate(reversed(rows)):
        for name in names:
            table[name] = depth
    return table


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def unit_of(module: str) -> str:
    """The layer unit of a tracerl module: its top-level package (`cli` for the command
    and its subcommands, tracerl/cli/), or `tracerl` for the package's own top modules."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "tracerl"


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in SRC.rglob("*.py")}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes inside `if TYPE_CHECKING:` blocks (never run, so never a cycle)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                inside |= {id(n) for n in ast.walk(child)}
    return inside


def imports_of(path: Path, known: set[str], type_only: bool = True) -> set[str]:
    """tracerl modules imported anywhere in the file (inside functions too); with
    `type_only` False, imports under `if TYPE_CHECKING:` are left out."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = set() if type_only else _type_checking_nodes(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            if name.startswith("tracerl") and name in known:
                out.add(name)
    # A dotted string naming a module (lazy package exports) is a dependency too.
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if re.fullmatch(r"tracerl(\.\w+)+", node.value) and node.value in known:
                out.add(node.value)
    return out


def graph(type_only: bool = True) -> dict[str, set[str]]:
    mods = all_modules()
    known = set(mods)
    return {m: imports_of(p, known, type_only) - {m} for m, p in mods.items()}


def test_the_layer_table_covers_every_package():
    table = layers()
    units = {unit_of(m) for m in all_modules()} - {"tracerl"}
    assert units - set(table) == set(), "packages missing from docs/architecture.md layers"


def test_no_module_imports_from_a_higher_layer_or_a_sibling_package():
    table = layers()
    bad = []
    for mod, deps in graph().items():
        here = unit_of(mod)
        if here == "tracerl":
            continue
        for dep in deps:
            there = unit_of(dep)
            if there == here or there == "tracerl":
                continue
            if table[there] >= table[here]:
                bad.append(f"{mod} (layer {here}) imports {dep} (layer {there})")
    assert bad == [], "\n".join(sorted(bad))


def test_no_import_cycles():
    # Imports under `if TYPE_CHECKING:` count: a cycle of type-only imports still ties
    # the files together for a reader, and is one runtime import away from a real one.
    g = graph(type_only=True)
    # Each package's __init__ is implied by importing its modules; lazy exports are
    # strings resolved on first use, so an __init__ pointing at its own modules is no
    # cycle at import time: leave those edges out.
    for mod, deps in g.items():
        if all_modules()[mod].name == "__init__.py":
            g[mod] = {d for d in deps if not d.startswith(mod + ".")}
    cycles = _cycles(g)
    assert cycles == [], "\n".join(" -> ".join(c) for c in cycles)


def _cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_the_cli_is_one_package_at_the_top_and_nothing_imports_it():
    """Every entry point lives in tracerl/cli/ (none as a cli_*.py inside a lower
    package, where it would import upward), and no module outside it imports it."""
    stray = [m for m in all_modules() if m.split(".")[-1].startswith("cli_")]
    assert stray == [], f"entry points outside tracerl/cli/: {stray}"
    users = sorted(f"{m} imports {d}" for m, deps in graph().items() if unit_of(m) != "cli"
                   for d in deps if unit_of(d) == "cli")
    assert users == [], "\n".join(users)


def test_no_import_cycle_between_packages():
    """Packages as units (imports inside functions and type-only ones counted)."""
    g: dict[str, set[str]] = {}
    for mod, deps in graph().items():
        here = unit_of(mod)
        g.setdefault(here, set()).update(unit_of(d) for d in deps if unit_of(d) != here)
    cycles = _cycles(g)
    assert cycles == [], "\n".join(" -> ".join(c) for c in cycles)


def test_the_checker_sees_a_violation(tmp_path):
    """The cycle finder and the layer rule are not vacuous."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    table = layers()
    assert table["train"] > table["rollout"] > table["types"]
    assert unit_of("tracerl.cli.eval") == "cli"

"""The test tree's layout (docs/testing.md): no test module imports another module of the
tree, every test folder is a package, and file names say what they test rather than
repeating the folder they sit in, so the tree can mirror src/tracerl/ name for name."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

TESTS = Path(__file__).parent

# Known exceptions, each with its reason. An exception that no longer applies fails the
# test below it: delete its line when its cause goes.
IMPORTS_ALLOWED: dict[str, str] = {}
NAMES_ALLOWED: dict[str, str] = {}
NOT_PACKAGES_ALLOWED: dict[str, str] = {}


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def cross_imports(root: Path) -> dict[str, list[str]]:
    """{file: modules it imports from the tree} for every .py file under `root`.

    A module of the tree is one reached by a relative import, through the `tests` package,
    or by the bare name of any file under `root` (how `from credit_fixtures import play`
    worked while folders were put on sys.path). Imports inside functions count too."""
    local = {"tests"} | {p.stem for p in root.rglob("*.py") if p.stem != "__init__"}
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        names = []
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names += [a.name for a in node.names if a.name.split(".")[0] in local]
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level or module.split(".")[0] in local:
                    names.append("." * node.level + module)
        if names:
            found[_rel(path, root)] = names
    return found


def folder_prefixed(root: Path) -> dict[str, str]:
    """{file: folder} for test files whose name starts with a folder they sit in
    (credit/test_credit_x.py, tools/test_tool_x.py)."""
    bad = {}
    for path in sorted(root.rglob("test_*.py")):
        for folder in path.relative_to(root).parts[:-1]:
            if any(path.name.startswith(f"test_{w}_") for w in (folder, folder.removesuffix("s"))):
                bad[_rel(path, root)] = folder
    return bad


def not_packages(root: Path) -> dict[str, str]:
    """{folder: why} for folders holding test files but no __init__.py: pytest would import
    their modules by bare name, so two test files of one name in two such folders clash."""
    folders = {p.parent for p in root.rglob("test_*.py")} | {root}
    return {_rel(d, root): "no __init__.py" for d in sorted(folders)
            if not (d / "__init__.py").exists()}


def _check(found: Mapping[str, object], allowed: dict[str, str]) -> None:
    unexpected = {k: v for k, v in found.items() if k not in allowed}
    assert not unexpected, unexpected
    stale = sorted(set(allowed) - set(found))
    assert not stale, f"no longer needed, delete from tests/{Path(__file__).name}: {stale}"


def test_no_test_module_imports_another() -> None:
    _check(cross_imports(TESTS), IMPORTS_ALLOWED)


def test_file_names_do_not_repeat_their_folder() -> None:
    _check(folder_prefixed(TESTS), NAMES_ALLOWED)


def test_every_test_folder_is_a_package() -> None:
    _check(not_packages(TESTS), NOT_PACKAGES_ALLOWED)


def test_the_checks_catch_a_bad_tree(tmp_path: Path) -> None:
    files = {
        "__init__.py": "",
        "a/__init__.py": "",
        "a/conftest.py": "import pytest\n",
        "a/helpers.py": "X = 1\n",
        "a/test_a_thing.py": "from helpers import X\n",
        "a/test_fine.py": "import json\n\nimport tracerl\nfrom tracerl.types import Task\n",
        "b/__init__.py": "",
        "b/test_rel.py": "from ..a import conftest\n",
        "b/test_late.py": "def f():\n    import tests.a.helpers\n",
        "tools/test_tool_x.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cross_imports(tmp_path) == {"a/test_a_thing.py": ["helpers"],
                                       "b/test_late.py": ["tests.a.helpers"],
                                       "b/test_rel.py": ["..a"]}
    assert folder_prefixed(tmp_path) == {"a/test_a_thing.py": "a", "tools/test_tool_x.py": "tools"}
    assert list(not_packages(tmp_path)) == ["tools"]

"""Code metrics: syntax, banned imports and calls found in the syntax tree (not by text
search), and hidden tests in the real sandbox."""

from __future__ import annotations

import pytest

from tracerl.evals.metric import score
from tracerl.evals.metrics import BannedCode, CodeTests, PythonSyntax


def test_syntax_of_fenced_or_bare_code(item):
    assert PythonSyntax()(item("```python\nx = [1, 2]\n```")).passed
    assert PythonSyntax()(item("def f():\n    return 1\n")).passed
    bad = PythonSyntax()(item("```python\nif x\n    pass\n```"))
    assert not bad.passed and bad.details["error"].startswith("line 1:")


@pytest.mark.parametrize("text", ["", "   \n", "```python\n```", "x = 1\x00"])
def test_empty_or_unparseable_code_is_wrong(item, text):
    assert PythonSyntax()(item(text)).score == 0.0
    assert BannedCode()(item(text)).score == 0.0  # cannot be shown clean


@pytest.mark.parametrize(("code", "violation"), [
    ("import os", "line 1: import os"),
    ("import os.path as p", "line 1: import os.path"),
    ("from subprocess import run as r\nr(['ls'])", "line 1: from subprocess import ..."),
    ("x = 1\neval('2')", "line 2: call eval()"),
    ("import importlib as il\nil.import_module('json')", "line 2: call importlib.import_module()"),
    ("from os import system\nsystem('ls')", "line 2: call os.system()"),
])
def test_banned_code_found_through_aliases(item, code, violation):
    result = BannedCode()(item(code))
    assert result.score == 0.0 and violation in result.details["violations"]


@pytest.mark.parametrize("code", [
    "import osmosis", "# import os\nx = 1", "s = 'eval(1); import os'", "model.eval()",
    "import json\njson.dumps({})",
])
def test_text_that_only_looks_banned_is_clean(item, code):
    assert BannedCode()(item(code)).passed, code


def test_dynamic_import_of_a_banned_module_with_the_call_allowed(item):
    metric = BannedCode(calls=())
    result = metric(item("__import__('socket').socket()"))
    assert result.details["violations"] == ["line 1: __import__('socket')"]


def test_code_tests_without_tests_is_unjudged(item):
    result = score(CodeTests(), item("def f(): return 1"))
    assert result.score is None and "tests" in result.details["unjudged"]


def test_code_tests_in_the_sandbox(item):
    tests = "assert add(1, 2) == 3\nassert add(-1, 1) == 0"
    good = CodeTests()(item("```python\ndef add(a, b):\n    return a + b\n```", tests=tests))
    wrong = CodeTests()(item("```python\ndef add(a, b):\n    return a - b\n```", tests=tests))
    assert good.score == 1.0 and wrong.score is not None and wrong.score < 1.0
    assert CodeTests()(item("", tests=tests)).score == 0.0

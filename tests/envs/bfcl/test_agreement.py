"""tracerl's BFCL scorer against verdicts recorded from BFCL's own checker.

Each case's `bfcl` verdict was recorded on 2026-12-06 by running bfcl-eval 2026.3.23 in
a throwaway venv (as benchmarks/bfcl_agreement.py sets it up): single-turn cases through
`bfcl_eval.eval_checker.ast_eval.ast_checker.ast_checker` (model name
`Qwen/Qwen3-0.6B-FC`, Python), after `is_function_calling_format_output`, and for the
irrelevance category `is_empty_output`; multi-turn cases through
`bfcl_eval.eval_checker.eval_runner._evaluate_single_multi_turn_entry` with an identity
decoder (the runner drops steps without a call, then calls `multi_turn_checker`). The
cases are small and made by hand, each aimed at one of BFCL's rules or quirks; the
benchmark holds the same checker against thousands of outputs on BFCL's own data.

One recorded verdict tracerl does not follow, on purpose: BFCL's harness `eval()`s calls
in a namespace with Python's builtins, so `str(object=<the result a call would give>)`
satisfies its response check without touching a simulator; tracerl runs only the
simulators' public methods, so that episode fails here.
"""

import pytest

bfcl = pytest.importorskip("tracerl.envs.bfcl", reason="the scorer lands with branch bfcl")

AREA = {"name": "area", "description": "", "parameters": {"type": "dict", "properties": {
    "radius": {"type": "float", "description": ""},
    "scales": {"type": "array", "items": {"type": "float"}, "description": ""},
    "unit": {"type": "string", "description": ""},
    "count": {"type": "integer", "description": ""}}, "required": ["radius"]}}
AREA_ANSWER = [{"area": {"radius": [5.0], "scales": [[1.0, 2.0], ""],
                         "unit": ["square meters", ""], "count": [3, ""]}}]
GCD = {"name": "math.gcd", "description": "", "parameters": {"type": "dict", "properties": {
    "a": {"type": "integer", "description": ""}, "b": {"type": "integer", "description": ""}},
    "required": ["a", "b"]}}
GCD_ANSWER = [{"math.gcd": {"a": [12], "b": [18]}}]
SET_X = {"name": "set_x", "description": "", "parameters": {"type": "dict", "properties": {
    "x": {"type": "integer", "description": ""}}, "required": ["x"]}}
SCALE = {"name": "scale", "description": "", "parameters": {"type": "dict", "properties": {
    "factors": {"type": "array", "items": {"type": "float"}, "description": ""}},
    "required": ["factors"]}}
OVERLAP = [{"set_x": {"x": [1, 2]}}, {"set_x": {"x": [1]}}]

# (name, category, functions, accepted answer, decoded output, BFCL's verdict)
SINGLE = [
    ("int_for_float", "simple_python", [AREA], AREA_ANSWER, [{"area": {"radius": 5}}], True),
    ("int_in_float_list_optional", "simple_python", [AREA], AREA_ANSWER,
     [{"area": {"radius": 5.0, "scales": [1, 2]}}], True),
    ("int_in_float_list_required", "simple_python", [SCALE],
     [{"scale": {"factors": [[1.0, 2.0]]}}], [{"scale": {"factors": [1, 2]}}], False),
    ("bool_for_int", "simple_python", [AREA], AREA_ANSWER,
     [{"area": {"radius": 5.0, "count": True}}], False),
    ("string_standardised", "simple_python", [AREA], AREA_ANSWER,
     [{"area": {"radius": 5.0, "unit": "Square-Meters."}}], True),
    ("string_other_word", "simple_python", [AREA], AREA_ANSWER,
     [{"area": {"radius": 5.0, "unit": "square feet"}}], False),
    ("unknown_param", "simple_python", [AREA], AREA_ANSWER,
     [{"area": {"radius": 5.0, "colour": "red"}}], False),
    ("null_for_optional", "simple_python", [AREA], AREA_ANSWER,
     [{"area": {"radius": 5.0, "count": None}}], False),
    ("dotted_name_exact", "simple_python", [GCD], GCD_ANSWER,
     [{"math.gcd": {"a": 12, "b": 18}}], True),
    ("dotted_name_underscored", "simple_python", [GCD], GCD_ANSWER,
     [{"math_gcd": {"a": 12, "b": 18}}], False),
    ("numeral_string_for_int", "simple_python", [GCD], GCD_ANSWER,
     [{"math.gcd": {"a": "12", "b": 18}}], False),
    ("two_calls_in_simple", "simple_python", [GCD], GCD_ANSWER,
     [{"math.gcd": {"a": 12, "b": 18}}] * 2, False),
    ("parallel_any_order", "parallel", [SET_X], [{"set_x": {"x": [1]}}, {"set_x": {"x": [2]}}],
     [{"set_x": {"x": 2}}, {"set_x": {"x": 1}}], True),
    # BFCL matches parallel calls greedily: a matching exists, but it is not found
    ("parallel_greedy_misses_a_matching", "parallel", [SET_X], OVERLAP,
     [{"set_x": {"x": 1}}, {"set_x": {"x": 2}}], False),
    ("parallel_greedy_other_order", "parallel", [SET_X], OVERLAP,
     [{"set_x": {"x": 2}}, {"set_x": {"x": 1}}], True),
    ("variable_name_for_int", "simple_python", [SET_X], [{"set_x": {"x": ["n"]}}],
     [{"set_x": {"x": "n"}}], True),
    ("irrelevance_no_call", "irrelevance", [SET_X], [], [], True),
    ("irrelevance_a_call", "irrelevance", [SET_X], [], [{"set_x": {"x": 1}}], False),
    ("irrelevance_empty_call", "irrelevance", [SET_X], [], [{}], True),
]

ENTRY = {"id": "multi_turn_base_900", "involved_classes": ["GorillaFileSystem"],
         "initial_config": {"GorillaFileSystem": {"root": {"alex": {
             "type": "directory",
             "contents": {"notes.txt": {"type": "file", "content": "hello world"}}}}}}}
TRUTH = [["mkdir(dir_name='temp')"], ["cat(file_name='notes.txt')"]]
MKDIR, CAT = "mkdir(dir_name='temp')", "cat(file_name='notes.txt')"
FORGED = "str(object='{\"file_content\": \"hello world\"}')"

# (name, decoded turns as BFCL's runner passes them on, BFCL's verdict)
MULTI = [
    ("correct", [[[MKDIR]], [[CAT]]], True),
    ("state_not_reached", [[["ls()"]], [[CAT]]], False),
    ("extra_read_only_call", [[[MKDIR]], [["ls()", CAT]]], True),
    ("extra_state_change", [[[MKDIR, "touch(file_name='x.txt')"]], [[CAT]]], False),
    ("done_early_then_no_call", [[[MKDIR, CAT]], []], False),
    # the response check looks at the results of all turns so far
    ("done_early_then_other_call", [[[MKDIR, CAT]], [["ls()"]]], True),
    ("turn_missing", [[[MKDIR]]], False),
    ("call_raises", [[["mkdir(name='temp')"]], [[CAT]]], False),
    ("steps_split", [[[MKDIR]], [["ls()"], [CAT]]], True),
]


@pytest.mark.parametrize(("name", "category", "functions", "answer", "decoded", "expected"),
                         SINGLE, ids=[c[0] for c in SINGLE])
def test_single_turn_verdict_is_bfcls(name, category, functions, answer, decoded, expected):
    assert bfcl.check_single_turn(category, functions, answer, decoded).valid is expected


@pytest.mark.parametrize(("name", "turns", "expected"), MULTI, ids=[c[0] for c in MULTI])
def test_multi_turn_verdict_is_bfcls(name, turns, expected):
    assert bfcl.check_multi_turn(ENTRY, TRUTH, turns).valid is expected


def test_result_forged_by_a_builtin_fails_though_bfcl_passes_it():
    # BFCL's recorded verdict: valid (its eval() resolves `str`)
    assert not bfcl.check_multi_turn(ENTRY, TRUTH, [[[MKDIR]], [[FORGED]]]).valid

"""The one scorer on BFCL's real data: accepted answers pass, each rule fails what it should."""

import json

import pytest

from tracerl.envs.bfcl import check_multi_turn, check_single_turn, turn_verdicts
from tracerl.envs.bfcl.answers import canonical_calls, decoded
from tracerl.envs.bfcl.data import MULTI_TURN, entry_by_id, load_category

DOC = {"name": "area", "parameters": {"type": "dict", "required": ["base"], "properties": {
    "base": {"type": "float"}, "unit": {"type": "string"},
    "sides": {"type": "array", "items": {"type": "integer"}},
    "opts": {"type": "dict", "properties": {"k": {"type": "string"}}}}}}
ANSWER = [{"area": {"base": [10.0], "unit": ["square meters", ""], "sides": [[1, 2], ""],
                    "opts": ["", {"k": ["Fast Mode"]}]}}]


def st(output, category="simple_python", answer=ANSWER):
    return check_single_turn(category, [DOC], answer, output)


def test_ground_truth_of_every_multi_turn_entry_is_valid():
    for category in MULTI_TURN:
        for e in load_category(category)[:25]:
            steps = [[calls] if calls else [] for calls in e.answer]
            assert check_multi_turn(e.raw, e.answer, steps).valid, e.id


def test_canonical_single_turn_answers_pass_after_a_json_round_trip():
    for category in ("simple_python", "multiple", "parallel", "parallel_multiple"):
        passed = [check_single_turn(category, list(e.functions), e.answer,
                                    json.loads(json.dumps(decoded(canonical_calls(e.answer)))))
                  .valid for e in load_category(category)]
        # a few accepted answers break BFCL's own rules
        assert sum(passed) >= len(passed) - 2, category


def test_int_is_promoted_to_float_and_optional_params_may_be_left_out():
    assert st([{"area": {"base": 10}}]).valid


def test_types_are_exact_and_bool_is_not_a_number():
    assert st([{"area": {"base": "10"}}]).kind == "type_error:simple"
    assert not st([{"area": {"base": True}}]).valid


def test_strings_compare_standardised():
    assert st([{"area": {"base": 10.0, "unit": "Square-Meters"}}]).valid
    assert st([{"area": {"base": 10.0, "unit": "square feet"}}]).kind == "value_error:string"


def test_list_and_dict_values():
    assert st([{"area": {"base": 10.0, "sides": [1, 2]}}]).valid
    assert not st([{"area": {"base": 10.0, "sides": [2, 1]}}]).valid
    assert st([{"area": {"base": 10.0, "opts": {"k": "fast mode"}}}]).valid
    assert not st([{"area": {"base": 10.0, "opts": {"k": "slow"}}}]).valid


def test_wrong_name_missing_required_unexpected_param_and_counts():
    assert st([{"volume": {"base": 10.0}}]).kind.endswith("wrong_func_name")
    assert st([{"area": {"unit": "square meters"}}]).kind.endswith("missing_required")
    assert st([{"area": {"base": 10.0, "colour": "red"}}]).kind.endswith("unexpected_param")
    assert st([{"area": {"base": 10.0}}, {"area": {"base": 10.0}}]).kind.endswith("wrong_count")
    assert not st([]).valid


def test_parallel_is_order_free_and_counts_exactly():
    answer = [{"area": {"base": [1.0]}}, {"area": {"base": [2.0]}}]
    ok = [{"area": {"base": 2.0}}, {"area": {"base": 1.0}}]
    assert st(ok, "parallel", answer).valid
    assert not st(ok + ok[:1], "parallel", answer).valid  # a duplicate is not paid
    assert not st(ok[:1] + ok[:1], "parallel", answer).valid


def test_undecodable_and_badly_shaped_replies():
    assert st(None).kind == "ast_decoder:decoder_failed"
    assert st([{"area": 3}]).kind == "ast_decoder:decoder_wrong_output_format"


def test_relevance_categories_judge_whether_a_call_was_made():
    assert check_single_turn("irrelevance", [DOC], [], []).valid
    assert check_single_turn("irrelevance", [DOC], [], None).valid
    assert not check_single_turn("irrelevance", [DOC], [], [{"area": {"base": 1}}]).valid
    assert check_single_turn("live_relevance", [DOC], [], [{"area": {}}]).valid
    assert not check_single_turn("live_relevance", [DOC], [], [{}]).valid


@pytest.fixture(scope="module")
def base0():
    return entry_by_id("multi_turn_base", "multi_turn_base_0")


def test_multi_turn_state_response_and_turn_count(base0):
    gt = base0.answer
    good = [[turn] for turn in gt]
    assert check_multi_turn(base0.raw, gt, good).valid
    assert check_multi_turn(base0.raw, gt, good[:-1]).kind == "multi_turn:force_terminated"
    no_call = [*good[:2], [], *good[3:]]
    assert check_multi_turn(base0.raw, gt, no_call).kind == "multi_turn:empty_turn_model_response"
    wrong_state = [[["cd(folder='document')", "mkdir(dir_name='tmp')"]], *good[1:]]
    assert check_multi_turn(base0.raw, gt, wrong_state).kind == "multi_turn:instance_state_mismatch"
    # the same state without the grep result: the response check fails
    no_grep = [good[0], [["cd(folder='temp')"]], *good[2:]]
    assert (check_multi_turn(base0.raw, gt, no_grep).kind
            == "multi_turn:execution_response_mismatch")


def test_calls_never_reach_eval(base0):
    hostile = [[["__import__('os').system('touch /tmp/pwned')", "cd(folder=__file__)",
                 "os.system('x')"], *[[c] for c in base0.answer[0]]]]
    steps = hostile + [[turn] for turn in base0.answer[1:]]
    assert check_multi_turn(base0.raw, base0.answer, steps).valid  # errors, no state change


def test_turn_verdicts_judge_each_user_turn(base0):
    steps = [[turn] for turn in base0.answer]
    steps[1] = [["pwd()"]]
    verdicts = turn_verdicts(base0.raw, base0.answer, steps)
    assert [v.valid for v in verdicts][:2] == [True, False]

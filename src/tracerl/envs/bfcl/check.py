"""The BFCL verdicts: one scorer for the reward, the step evaluator and the agreement check.

`check_single_turn` and `check_multi_turn` take what BFCL's own checkers take, in BFCL's
decoded formats, so that the agreement benchmark can hand the same inputs to BFCL's
checker and to these, and agreement measured there is agreement of the reward (the
family's Reward and step evaluator call nothing else).

Single-turn (`decoded = [{function_name: {param: value}}]`, or None when decoding the
model's reply failed):
- relevance categories (irrelevance, live_irrelevance: valid iff no call; live_relevance:
  valid iff some call), where an empty or undecodable reply is "no call";
- otherwise BFCL's AST rules (envs/bfcl/ast_match.py); an undecodable reply, or one not
  shaped `[{name: {params}}]`, fails.

Multi-turn (`decoded_turns[turn][step] = [call strings]`, BFCL's decoded form, with the
steps whose decoding failed already left out, as BFCL's runner leaves them out):
- a reply with another number of user turns than the ground truth fails (BFCL's runner:
  force-terminated);
- the model's calls run on fresh simulator instances and the ground truth's on another
  fresh set, both kept across turns; after each turn whose ground truth is not empty:
  the turn must hold at least one non-empty step, every instance's public attributes
  must equal the ground truth instance's (state check), and every result of the ground
  truth's calls of this turn must appear among the model's results of all turns so far,
  counted with multiplicity and in any order (response check).

Calls run through envs/bfcl/simulators.py (parsed, never eval'd). Where BFCL's `eval`
would have run an expression that is not a plain call with literal arguments (a nested
call, a variable), this refuses it with an error result instead: none occurs in BFCL's
ground truth or in the calls tracerl writes from JSON tool calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracerl.envs.bfcl.ast_match import check_ast
from tracerl.envs.bfcl.data import is_relevance
from tracerl.envs.bfcl.simulators import Simulation


@dataclass(frozen=True)
class Verdict:
    """BFCL's verdict on one answer: `valid`, else the first `error` found."""

    valid: bool
    error: str = ""
    kind: str = ""
    """BFCL's error type (e.g. `multi_turn:instance_state_mismatch`); '' when valid."""


VALID = Verdict(True)


def is_call_format(decoded: Any) -> bool:
    """`[{name: {params}}]`: a list of one-key dicts whose value is a dict ([] too)."""
    return isinstance(decoded, list) and all(
        isinstance(item, dict) and len(item) == 1 and isinstance(next(iter(item.values())), dict)
        for item in decoded)


def has_call(decoded: list[dict[str, dict[str, Any]]] | None) -> bool:
    """Whether a decoded reply holds a call (BFCL: [] and [{}] do not; neither does a
    reply that failed to decode or is not in call format)."""
    if decoded is None or not is_call_format(decoded):
        return False
    return not (len(decoded) == 0 or (len(decoded) == 1 and len(decoded[0]) == 0))


def check_single_turn(category: str, functions: list[dict[str, Any]],
                      possible_answer: list[dict[str, Any]],
                      decoded: list[dict[str, dict[str, Any]]] | None) -> Verdict:
    """BFCL's verdict on a single-turn reply (see the module docstring)."""
    if is_relevance(category):
        wanted = "irrelevance" not in category
        if has_call(decoded) == wanted:
            return VALID
        if wanted:
            return Verdict(False, "no function call where one was expected",
                           "relevance_error:decoder_failed")
        return Verdict(False, "a function call where none should be made",
                       "irrelevance_error:decoder_success")
    if decoded is None:
        return Verdict(False, "the reply could not be decoded into function calls",
                       "ast_decoder:decoder_failed")
    if not is_call_format(decoded):
        return Verdict(False, "the reply is not in [{name: {params}}] form",
                       "ast_decoder:decoder_wrong_output_format")
    mismatch = check_ast(category, functions, decoded, possible_answer)
    if mismatch is None:
        return VALID
    return Verdict(False, mismatch.message, mismatch.kind)


def _is_empty_turn(steps: list[list[str]]) -> bool:
    return len(steps) == 0 or (len(steps) == 1 and len(steps[0]) == 0)


def _missing(expected: list[str], got: list[str]) -> list[str]:
    """Items of `expected` not found in `got`, each found item used once."""
    pool = list(got)
    out = []
    for item in expected:
        if item in pool:
            pool.remove(item)
        else:
            out.append(item)
    return out


def _state_error(model: Simulation, truth: Simulation) -> str | None:
    for class_name, expected in truth.instances.items():
        got = model.instances[class_name]
        diff = [k for k in vars(expected) if not k.startswith("_")
                and getattr(got, k) != getattr(expected, k)]
        if diff:
            return f"{class_name} state differs from the ground truth's in {diff}"
    return None


def turn_verdicts(entry: dict[str, Any], ground_truth: list[list[str]],
                  decoded_turns: list[list[list[str]]]) -> list[Verdict]:
    """Each user turn's verdict (state and response check of that turn alone, on the
    runs of all turns so far); turns whose ground truth is empty are VALID. The episode
    is valid iff all are (and the turn counts agree: `check_multi_turn`)."""
    model, truth = Simulation.for_entry(entry), Simulation.for_entry(entry)
    model_results: list[str] = []
    out = []
    for turn, expected_calls in enumerate(ground_truth):
        steps = decoded_turns[turn] if turn < len(decoded_turns) else []
        for step in steps:
            model_results.extend(model.execute_all(step))
        expected = truth.execute_all(expected_calls)
        if not expected_calls:
            out.append(VALID)
        elif _is_empty_turn(steps):
            out.append(Verdict(False, f"no function call in turn {turn}",
                               "multi_turn:empty_turn_model_response"))
        elif (state := _state_error(model, truth)) is not None:
            out.append(Verdict(False, f"turn {turn}: {state}",
                               "multi_turn:instance_state_mismatch"))
        elif missing := _missing(expected, model_results):
            out.append(Verdict(False, f"turn {turn}: results of the ground truth missing from "
                               f"the model's: {[m[:80] for m in missing]}",
                               "multi_turn:execution_response_mismatch"))
        else:
            out.append(VALID)
    return out


def check_multi_turn(entry: dict[str, Any], ground_truth: list[list[str]],
                     decoded_turns: list[list[list[str]]]) -> Verdict:
    """BFCL's verdict on a multi-turn episode (see the module docstring)."""
    if len(decoded_turns) != len(ground_truth):
        return Verdict(False, f"{len(decoded_turns)} user turns answered of "
                       f"{len(ground_truth)} (force-terminated)", "multi_turn:force_terminated")
    return next((v for v in turn_verdicts(entry, ground_truth, decoded_turns) if not v.valid),
                VALID)

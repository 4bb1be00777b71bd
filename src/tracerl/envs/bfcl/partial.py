"""Partial credit on single-turn AST answers: a denser training reward than BFCL's verdict.

BFCL's verdict is all or nothing: a call with the right function and four of five
arguments right scores what prose scores. Under GRPO a group whose samples all miss
gives no gradient, and on a small model most groups do (docs/benchmarks.md, BFCL
attempts one to eight). `task.bfcl.reward=partial` pays 1.0 where BFCL accepts and,
where it does not, at most PARTIAL_CAP for how much of the accepted answer the calls
get right; the fine-grained tool-call rewards of ToolRL (Qian et al. 2025) reward the
same parts: the function, the parameter names, their values.

Credit is given only to answers of the right shape, so that none of the hacks the
all-or-nothing reward refuses (envs/bfcl/hacks.py) is paid here either. Zero for:
- an undecodable reply, or one not in `[{name: {params}}]` form;
- another number of calls than the category asks for (extra, duplicate and flooding
  calls, and a prose answer with no call);
- a call to a function the task does not offer;
- two identical calls (unless the accepted answer holds two identical calls);
- the relevance categories and multi-turn episodes (there the verdict alone: a partial
  state or a turn passed by read-only calls is not progress to pay for).

Otherwise each accepted call is paired with one output call (the pairing that gets most
right: tracerl.algorithms.bipartite) and scores the share of its parameter slots that are
right. The slots are the parameters the accepted call needs (those it lists without
BFCL's optional marker `""`) and every parameter the output call gives; a slot is right
when it is given and BFCL's rule for that parameter accepts the value (the same
`param_check` the verdict applies). A left-out optional parameter is no slot: an empty
call earns nothing for the optional parameters it happens not to give. A call to another
function scores 0. The reward is PARTIAL_CAP times the mean over accepted calls.
Evaluation is unchanged: success is a reward of 1.0, which only BFCL's acceptance pays.
"""

from __future__ import annotations

import json
from typing import Any

from tracerl.algorithms.bipartite import max_weight_assignment
from tracerl.envs.bfcl.ast_match import find_doc, param_check, wanted_calls
from tracerl.envs.bfcl.check import is_call_format
from tracerl.envs.bfcl.data import is_relevance

PARTIAL_CAP = 0.5
"""The most a rejected answer earns: below any accepted one by a margin GRPO's group
normalisation keeps (an accepted sample in a group of near misses still stands out)."""


def call_credit(doc: dict[str, Any] | None, output: dict[str, Any],
                answer: dict[str, Any]) -> float:
    """The share of parameter slots one decoded call `{name: params}` gets right against
    one accepted call `{name: {param: [accepted values]}}`; 0 for another function."""
    name = next(iter(answer))
    if doc is None or name not in output or not isinstance(output[name], dict):
        return 0.0
    params, accepted = output[name], answer[name]
    properties = doc.get("parameters", {}).get("properties", {})
    slots = {p for p, values in accepted.items() if "" not in values} | set(params)
    if not slots:
        return 1.0
    right = sum(slot in params and slot in accepted and slot in properties
                and param_check(slot, params[slot], properties[slot], accepted[slot]) is None
                for slot in slots)
    return right / len(slots)


def _signature(call: dict[str, Any]) -> str:
    return json.dumps(call, sort_keys=True, default=repr)


def partial_credit(category: str, functions: list[dict[str, Any]],
                   answers: list[dict[str, Any]],
                   decoded: list[dict[str, dict[str, Any]]] | None) -> float:
    """The partial reward of a single-turn reply BFCL rejected (module docstring); in
    [0, PARTIAL_CAP]."""
    if is_relevance(category) or decoded is None or not is_call_format(decoded):
        return 0.0
    if not answers or len(decoded) != wanted_calls(category, answers):
        return 0.0
    offered = {f.get("name") for f in functions}
    if any(next(iter(call), None) not in offered for call in decoded):
        return 0.0
    allowed_repeats = len(answers) - len({_signature(a) for a in answers})
    if len(decoded) - len({_signature(c) for c in decoded}) > allowed_repeats:
        return 0.0
    weights = [[call_credit(find_doc(functions, next(iter(answer))), call, answer)
                for answer in answers] for call in decoded]
    pairs = max_weight_assignment(weights)
    total = sum(weights[i][j] for i, j in enumerate(pairs) if j >= 0)
    return PARTIAL_CAP * total / len(answers)

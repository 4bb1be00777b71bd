"""Model outputs for the BFCL agreement benchmark: right answers built from BFCL's
accepted answers, and seeded, systematic ways of getting them wrong.

Every output is the text a policy would write, in the Hermes / Qwen layout
(`<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>`), so both scorers
start from the same bytes: tracerl parses it its way, BFCL its own way. Single-turn
outputs are one text; multi-turn outputs are, per user turn, the texts of the steps
the agent took (a step with calls, then a closing prose step, as BFCL records them).

The perturbations aim at each rule BFCL's checkers apply: values (wrong, accepted
alternatives, int / float / numeral strings, booleans, string case, spacing and
punctuation), parameters (required missing, optional omitted or given, unknown, known
to the schema but not to the answer), calls (wrong name, dotted name written with an
underscore, dropped, duplicated, swapped, an extra function), no call or a call when
none is wanted, and text that does not decode (broken JSON, unterminated blocks,
arguments as a JSON string, Python syntax, no tags). Multi-turn adds missing steps,
extra and reordered steps, calls that raise, calls to unknown functions, state-changing
calls made early, calls in a turn whose answer is "no call", and dropped turns.

Nothing here scores anything; which outputs are right is for the checkers to say.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from tracerl.envs.bfcl.answers import as_tool_call
from tracerl.envs.bfcl.data import BfclEntry, load_category
from tracerl.envs.bfcl.simulators import Simulation

Call = tuple[str, dict[str, Any]]

PROSE = "I can't help with that using the tools I have."


@dataclass(frozen=True)
class Output:
    """One model output to score: a single-turn text or multi-turn step texts."""

    uid: str
    category: str
    id: str
    perturbation: str
    text: str | None = None
    turns: list[list[str]] | None = None


# -- rendering -----------------------------------------------------------------------

def block(name: str, args: Any) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


def render(calls: list[Call]) -> str:
    return "\n".join(block(n, a) for n, a in calls)


# -- single-turn ---------------------------------------------------------------------

def _realize(option: Any) -> Any:
    """An accepted option made into a value: dicts inside answers map keys to lists of
    accepted values; keys whose only accepted value is "" (optional) are left out."""
    if isinstance(option, dict):
        return {k: _realize(_first(v)) for k, v in option.items() if _first(v) != ""}
    if isinstance(option, list) and option and all(isinstance(x, dict) for x in option):
        return [_realize(x) for x in option]
    return option


def _first(accepted: Any) -> Any:
    if not isinstance(accepted, list):
        return accepted
    return next((a for a in accepted if a != ""), "")


def answer_calls(answer: list[dict], *, optional: bool, last: bool = False) -> list[Call]:
    """The calls of an accepted answer: the first (or `last`) accepted value of each
    parameter; parameters that may be omitted are given only when `optional`."""
    calls = []
    for item in answer:
        (name, params), = item.items()
        args = {}
        for p, accepted in params.items():
            options = [a for a in accepted if a != ""]
            if options and (optional or "" not in accepted):
                args[p] = _realize(options[-1] if last else options[0])
        calls.append((name, args))
    return calls


def _wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 1.5
    if isinstance(value, str):
        return value + " extra"
    if isinstance(value, list):
        return value[:-1] if value else ["extra"]
    if isinstance(value, dict):
        return {**value, "extra_key": "x"}
    return "wrong"


def _retypes(value: Any) -> dict[str, Any]:
    """Same value, other type or spelling: the cases where type and string rules bite."""
    out: dict[str, Any] = {"null": None}
    if isinstance(value, bool):
        out.update(bool_as_str=str(value).lower(), bool_as_int=int(value))
    elif isinstance(value, int):
        out.update(int_as_float=float(value), int_as_numeral=str(value), int_as_bool=bool(value))
    elif isinstance(value, float):
        out["float_as_numeral"] = str(value)
        if value.is_integer():
            out["float_as_int"] = int(value)
    elif isinstance(value, str) and value:
        out.update(str_upper=value.upper(), str_spaced=f" {value.replace(' ', '  ')} ",
                   str_punct=value.replace(" ", "-") + ".", str_nospace=value.replace(" ", ""),
                   str_in_list=[value])
        if "'" in value:
            out["str_quote_swapped"] = value.replace("'", '"')
    elif isinstance(value, list):
        out["list_as_str"] = json.dumps(value)
        if len(value) > 1:
            out["list_reversed"] = value[::-1]
        if value and all(type(v) is int for v in value):
            out.update(list_ints_as_floats=[float(v) for v in value],
                       list_ints_as_numerals=[str(v) for v in value])
        if value and all(type(v) is float and v.is_integer() for v in value):
            out["list_floats_as_ints"] = [int(v) for v in value]
        if value and all(type(v) is str for v in value):
            out["list_strs_upper"] = [v.upper() for v in value]
    elif isinstance(value, dict) and value:
        key = next(iter(value))
        out.update(dict_key_dropped={k: v for k, v in value.items() if k != key},
                   dict_value_upper={k: v.upper() if isinstance(v, str) else v
                                     for k, v in value.items()})
    return out


def _example(schema: dict) -> Any:
    return {"string": "example", "integer": 3, "float": 2.5, "boolean": True, "array": ["a"],
            "tuple": ["a"], "dict": {"k": "v"}, "any": "example"}.get(schema.get("type"), "x")


def _pick_arg(rng: random.Random, calls: list[Call]) -> tuple[int, str] | None:
    spots = [(i, p) for i, (_, args) in enumerate(calls) for p in args]
    return rng.choice(spots) if spots else None


def _with_arg(calls: list[Call], i: int, p: str, value: Any) -> list[Call]:
    out = deepcopy(calls)
    out[i][1][p] = value
    return out


def _without_arg(calls: list[Call], i: int, p: str) -> list[Call]:
    out = deepcopy(calls)
    del out[i][1][p]
    return out


def _renamed(calls: list[Call], i: int, name: str) -> list[Call]:
    out = deepcopy(calls)
    out[i] = (name, out[i][1])
    return out


def ast_variants(rng: random.Random, functions: list[dict], answer: list[dict]
                 ) -> Iterator[tuple[str, str]]:
    """(perturbation, text) for one AST entry."""
    docs = {f["name"]: f for f in functions}
    good = answer_calls(answer, optional=True)
    yield "correct", render(good)
    yield "correct_optional_omitted", render(answer_calls(answer, optional=False))
    alt = answer_calls(answer, optional=True, last=True)
    if alt != good:
        yield "correct_other_accepted", render(alt)
    yield "prose_before_call", "Let me call the tool.\n" + render(good)
    spot = _pick_arg(rng, good)
    if spot:
        i, p = spot
        yield "wrong_value", render(_with_arg(good, i, p, _wrong(good[i][1][p])))
    for i, (_, args) in enumerate(good):
        for p, value in args.items():
            for tag, other in _retypes(value).items():
                yield f"{tag}:{i}:{p}", render(_with_arg(good, i, p, other))
    i = rng.randrange(len(good))
    name, args = good[i]
    schema = docs.get(name, {}).get("parameters", {})
    required = [p for p in schema.get("required", []) if p in args]
    if required:
        yield "missing_required", render(_without_arg(good, i, rng.choice(required)))
    accepted = answer[i][name]
    needed = [p for p in args if p not in required and "" not in accepted.get(p, [""])]
    if needed:
        yield "missing_needed_optional", render(_without_arg(good, i, rng.choice(needed)))
    yield "extra_unknown_param", render(_with_arg(good, i, "unknown_param", 1))
    unlisted = [p for p in schema.get("properties", {}) if p not in accepted]
    if unlisted:
        p = rng.choice(unlisted)
        yield "extra_schema_param", render(_with_arg(good, i, p, _example(schema["properties"][p])))
    yield "wrong_func_name", render(_renamed(good, i, name + "_v2"))
    yield "func_name_case", render(_renamed(good, i, name.upper()))
    if "." in name:
        yield "dotted_name_underscored", render(_renamed(good, i, name.replace(".", "_")))
    yield "duplicated_call", render(good + [good[i]])
    if len(good) > 1:
        yield "dropped_call", render(good[:i] + good[i + 1:])
        yield "swapped_order", render(good[::-1])
    others = [f for f in functions if f["name"] not in {n for n, _ in good}]
    if others:
        f = rng.choice(others)
        extra = {p: _example(s) for p, s in f["parameters"]["properties"].items()
                 if p in f["parameters"].get("required", [])}
        yield "extra_other_function", render(good + [(f["name"], extra)])
        yield "only_other_function", render([(f["name"], extra)])
    yield from malformed_variants(good)


def malformed_variants(good: list[Call]) -> Iterator[tuple[str, str]]:
    """Texts that do not decode, or decode differently than they look."""
    name, args = good[0]
    body = json.dumps({"name": name, "arguments": args})
    yield "prose_only", PROSE
    yield "empty", ""
    yield "empty_name", block("", args)
    yield "broken_json", f"<tool_call>\n{body[:-1]}\n</tool_call>"
    yield "good_plus_broken", render(good) + f"\n<tool_call>\n{body[:-2]}\n</tool_call>"
    yield "unterminated", f"<tool_call>\n{body}\n"
    yield "no_newlines", "".join(f"<tool_call>{json.dumps({'name': n, 'arguments': a})}"
                                 "</tool_call>" for n, a in good)
    yield "args_as_json_string", "\n".join(
        "<tool_call>\n" + json.dumps({"name": n, "arguments": json.dumps(a)}) + "\n</tool_call>"
        for n, a in good)
    yield "no_arguments_key", "\n".join(
        "<tool_call>\n" + json.dumps({"name": n}) + "\n</tool_call>" for n, _ in good)
    yield "args_not_object", "<tool_call>\n" + json.dumps({"name": name, "arguments": [1]}) \
        + "\n</tool_call>"
    yield "untagged_json", body
    yield "python_syntax", "[" + ", ".join(
        f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})" for n, a in good) + "]"


def irrelevance_variants(rng: random.Random, functions: list[dict]) -> Iterator[tuple[str, str]]:
    """(perturbation, text) for an entry whose right answer is no call at all."""
    f = rng.choice(functions)
    props = f["parameters"].get("properties", {})
    args = {p: _example(props[p]) for p in f["parameters"].get("required", []) if p in props}
    yield "no_call_prose", PROSE
    yield "call_when_none_wanted", render([(f["name"], args)])
    yield "call_unknown_function", render([("not_a_listed_function", {"q": "x"})])
    yield "empty_object_block", "<tool_call>\n{}\n</tool_call>"
    yield from ((t, x) for t, x in malformed_variants([(f["name"], args)])
                if t not in {"prose_only", "good_plus_broken"})


# -- multi-turn ----------------------------------------------------------------------

def _turn_texts(calls: list[Call], *, per_call: bool = False) -> list[str]:
    if not calls:
        return [PROSE]
    steps = [render([c]) for c in calls] if per_call else [render(calls)]
    return steps + ["Done."]


def _texts(turns: list[list[Call]], per_call: bool = False) -> list[list[str]]:
    return [_turn_texts(t, per_call=per_call) for t in turns]


MultiVariant = Callable[[random.Random, list[list[Call]]], list[list[str]] | None]


def _some_turn(rng: random.Random, turns: list[list[Call]], least: int = 1) -> int | None:
    found = [i for i, t in enumerate(turns) if len(t) >= least]
    return rng.choice(found) if found else None


def _edit(turns: list[list[Call]], t: int, calls: list[Call]) -> list[list[str]]:
    out = deepcopy(turns)
    out[t] = calls
    return _texts(out)


def _drop_call(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    t = _some_turn(rng, turns)
    if t is None:
        return None
    i = rng.randrange(len(turns[t]))
    return _edit(turns, t, turns[t][:i] + turns[t][i + 1:])


def _skip_turn(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    t = _some_turn(rng, turns)
    return None if t is None else _edit(turns, t, [])


def _reorder(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    t = _some_turn(rng, turns, least=2)
    return None if t is None else _edit(turns, t, turns[t][::-1])


def _duplicate(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    t = _some_turn(rng, turns)
    if t is None:
        return None
    i = rng.randrange(len(turns[t]))
    return _edit(turns, t, turns[t][: i + 1] + turns[t][i:])


def _raising_extra(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    t = _some_turn(rng, turns)
    if t is None:
        return None
    name, args = rng.choice(turns[t])
    return _edit(turns, t, [(name, {**args, "no_such_param": 1})] + turns[t])


def _raising_instead(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    t = _some_turn(rng, turns)
    if t is None:
        return None
    i = rng.randrange(len(turns[t]))
    calls = deepcopy(turns[t])
    calls[i] = (calls[i][0], {**calls[i][1], "no_such_param": 1})
    return _edit(turns, t, calls)


def _unknown_function(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    t = _some_turn(rng, turns)
    return None if t is None else _edit(turns, t, turns[t] + [("not_a_function", {"x": 1})])


def _early_call(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    """A later turn's first call made one turn early too: state changes before asked."""
    found = [i for i in range(len(turns) - 1) if turns[i + 1]]
    if not found:
        return None
    t = rng.choice(found)
    return _edit(turns, t, turns[t] + [turns[t + 1][0]])


def _wrong_value(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    spots = [(t, i, p) for t, calls in enumerate(turns) for i, (_, a) in enumerate(calls)
             for p, v in a.items() if isinstance(v, str | int | float)]
    if not spots:
        return None
    t, i, p = rng.choice(spots)
    calls = deepcopy(turns[t])
    calls[i][1][p] = _wrong(calls[i][1][p])
    return _edit(turns, t, calls)


def _calls_in_empty_turn(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    """Where the answer is "no call" (a missing parameter or function), act anyway."""
    found = [i for i in range(len(turns) - 1) if not turns[i] and turns[i + 1]]
    if not found:
        return None
    t = found[0]
    return _edit(turns, t, turns[t + 1])


def _malformed_step(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    t = _some_turn(rng, turns)
    if t is None:
        return None
    out = _texts(turns)
    out[t][0] = out[t][0].replace("}\n</tool_call>", "\n</tool_call>", 1)
    return out


def _moved_early(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    """A later turn's first call made one turn early instead of in its own turn."""
    found = [i for i in range(len(turns) - 1) if turns[i + 1]]
    if not found:
        return None
    t = rng.choice(found)
    out = deepcopy(turns)
    out[t].append(out[t + 1].pop(0))
    return _texts(out)


def _early_then_broken(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    """All of a later turn's calls made early; in its own turn only a broken call and
    prose (a turn whose steps all decode to nothing is an empty turn to BFCL)."""
    found = [i for i in range(len(turns) - 1) if turns[i + 1]]
    if not found:
        return None
    t = rng.choice(found)
    out = deepcopy(turns)
    out[t] += out[t + 1]
    texts = _texts(out)
    texts[t + 1] = ['<tool_call>\n{"name": "ls", "arguments": {\n</tool_call>', "Done."]
    return texts


def _renamed_call(rng: random.Random, turns: list[list[Call]], sim: Simulation,
                  how: str) -> list[list[str]] | None:
    t = _some_turn(rng, turns)
    if t is None:
        return None
    i = rng.randrange(len(turns[t]))
    calls = deepcopy(turns[t])
    name = calls[i][0]
    owner = next(c for c, obj in sim.instances.items() if hasattr(obj, name))
    calls[i] = (f"{owner}.{name}" if how == "qualified" else f" {name}", calls[i][1])
    return _edit(turns, t, calls)


def _retyped_arg(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
    """A number given as a string, or a numeral string as a number."""
    spots = [(t, i, p) for t, calls in enumerate(turns) for i, (_, a) in enumerate(calls)
             for p, v in a.items() if type(v) in (int, float)
             or (isinstance(v, str) and v.replace(".", "", 1).isdigit())]
    if not spots:
        return None
    t, i, p = rng.choice(spots)
    calls = deepcopy(turns[t])
    v = calls[i][1][p]
    calls[i][1][p] = float(v) if isinstance(v, str) else str(v)
    return _edit(turns, t, calls)


def _extra(name: str, args: dict[str, Any]) -> MultiVariant:
    def make(rng: random.Random, turns: list[list[Call]]) -> list[list[str]] | None:
        t = _some_turn(rng, turns)
        return None if t is None else _edit(turns, t, turns[t] + [(name, args)])
    return make


def forged_results(entry: dict, truth: list[list[str]], turns: list[list[Call]]
                   ) -> list[list[str]] | None:
    """The last acting turn's calls replaced by `str(object=<the result its call would
    give>)`: a Python builtin that returns the ground truth's result without touching
    any simulator. BFCL's harness eval()s calls in a namespace that has builtins; the
    response check then finds the results it wants."""
    acting = [t for t, calls in enumerate(turns) if calls]
    if not acting:
        return None
    last = acting[-1]
    sim = Simulation.for_entry(entry)
    for t in range(last):
        sim.execute_all(truth[t])
    forged = [("str", {"object": r}) for r in sim.execute_all(truth[last])]
    return _edit(turns, last, forged)


def _last_turn_dropped(rng: random.Random, turns: list[list[Call]]) -> list[list[str]]:
    return _texts(turns)[:-1]


def _extra_turn(rng: random.Random, turns: list[list[Call]]) -> list[list[str]]:
    return _texts(turns) + [[PROSE]]


MULTI_VARIANTS: dict[str, MultiVariant] = {
    "correct": lambda rng, turns: _texts(turns),
    "correct_step_per_call": lambda rng, turns: _texts(turns, per_call=True),
    "dropped_call": _drop_call, "turn_without_calls": _skip_turn, "reordered_calls": _reorder,
    "duplicated_call": _duplicate, "raising_extra_call": _raising_extra,
    "raising_call_instead": _raising_instead, "unknown_function": _unknown_function,
    "state_change_too_early": _early_call, "wrong_value": _wrong_value,
    "calls_where_none_wanted": _calls_in_empty_turn, "malformed_step": _malformed_step,
    "prose_only": lambda rng, turns: [[PROSE] for _ in turns],
    "call_moved_early": _moved_early, "turn_done_early_then_broken": _early_then_broken,
    "number_type_swapped": _retyped_arg,
    "private_method": _extra("_load_scenario", {"scenario": {}}),
    "refused_name": _extra("exit", {}),
    "builtin_call": _extra("dict", {"a": 1}),
    "last_turn_missing": _last_turn_dropped, "extra_turn": _extra_turn,
}


def multi_variants(rng: random.Random, entry: dict, truth: list[list[str]]
                   ) -> Iterator[tuple[str, list[list[str]]]]:
    sim = Simulation.for_entry(entry)  # names positional arguments by the methods' signatures
    turns = [[(c.name, dict(c.arguments)) for c in (as_tool_call(x, sim) for x in turn)]
             for turn in truth]
    made = {tag: make(rng, turns) for tag, make in MULTI_VARIANTS.items()}
    made["class_qualified_name"] = _renamed_call(rng, turns, sim, "qualified")
    made["name_with_leading_space"] = _renamed_call(rng, turns, sim, "spaced")
    made["forged_results_via_builtin"] = forged_results(entry, truth, turns)
    yield from ((tag, texts) for tag, texts in made.items() if texts is not None)


# -- the set -------------------------------------------------------------------------

def build_outputs(categories: list[str], per_category: int, seed: int) -> list[Output]:
    """Every variant of `per_category` seeded ids of each category, from BFCL's data."""
    outputs: list[Output] = []
    for category in categories:
        rng = random.Random(f"{seed}:{category}")
        entries = load_category(category)
        for k in sorted(rng.sample(range(len(entries)), min(per_category, len(entries)))):
            entry = entries[k]
            for tag, payload in _variants(rng, entry):
                uid, kind = f"{entry.id}/{tag}", tag.split(":")[0]
                if isinstance(payload, str):
                    outputs.append(Output(uid, category, entry.id, kind, text=payload))
                else:
                    outputs.append(Output(uid, category, entry.id, kind, turns=payload))
    return outputs


def _variants(rng: random.Random, entry: BfclEntry
              ) -> Iterator[tuple[str, str | list[list[str]]]]:
    if entry.multi_turn:
        yield from multi_variants(rng, entry.raw, entry.answer)
    elif "irrelevance" in entry.category:
        yield from irrelevance_variants(rng, list(entry.functions))
    else:
        yield from ast_variants(rng, list(entry.functions), entry.answer)

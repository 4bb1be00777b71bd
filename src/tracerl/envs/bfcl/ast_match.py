"""BFCL's single-turn AST rules (Python categories), written here from its checker's logic.

A decoded answer is `[{function_name: {param: value}}]`; the accepted answer lists, per
call, each parameter's accepted values (`""` among them marks the parameter optional).
The rules, as BFCL v4's `ast_checker` applies them, quirks included, because a score
that differs from BFCL's is not a BFCL score:

- Category shape: a category with "parallel" in its name matches calls in any order
  (each accepted call, in order, takes the first unmatched output call that fits: a
  greedy matching, not a search); "multiple" needs as many calls as accepted (one),
  checked against the first accepted call and its doc; the rest (simple) need exactly
  one call, checked against the first function doc.
- A call: the name must be the accepted one; every `required` parameter present; no
  parameter outside the doc or outside the accepted answer; a parameter the accepted
  answer lists without `""` must be present.
- Types are exact Python types (`type(v) == t`: a bool is not an int); an int is promoted
  to float where the doc says float, but not inside lists; `tuple` takes a list; `any`
  takes a string. A value whose type is the accepted values' type instead (BFCL treats
  that as a variable name) is compared by plain equality.
- Arrays are type-checked one level deep against each accepted list (an accepted `""`
  passes that check; a failure there fails the call even where the variable rule would
  pass it).
- Strings compare after standardisation: spaces and `,./-_*^` removed, lower case, `'`
  read as `"`. Lists standardise their string elements and must equal an accepted list;
  dicts compare key by key (string values standardised); lists of dicts compare element
  by element, in order.
- Anything else must be `in` the accepted values (Python equality: 1 == 1.0).

Functions return None when the rule passes, else an `Mismatch` with BFCL's error type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

PYTHON_TYPES: dict[str, type] = {"string": str, "integer": int, "float": float,
                                 "boolean": bool, "array": list, "tuple": list, "dict": dict,
                                 "any": str}
NESTED_TYPES = ("array", "tuple")
_STANDARDISE = re.compile(r"[ ,./\-_*^]")


@dataclass(frozen=True)
class Mismatch:
    """Why a decoded answer fails, with BFCL's error type (e.g. `type_error:simple`)."""

    kind: str
    message: str


def standardize(text: str) -> str:
    return _STANDARDISE.sub("", text).lower().replace("'", '"')


def _std(value: Any) -> Any:
    return standardize(value) if type(value) is str else value


def _answer_type(accepted: list[Any]) -> type | None:
    """The type of the first accepted value that is not the optional marker."""
    return next((type(a) for a in accepted if a != ""), None)


def _type_check(param: str, value: Any, accepted: list[Any], expected: type,
                nested: type | None) -> tuple[Mismatch | None, bool]:
    """(mismatch or None, is_variable)."""
    answer_type = _answer_type(accepted)
    is_variable = answer_type is not None and answer_type is not expected
    if type(value) is expected:
        if nested is None:
            return None, is_variable
        for option in accepted:
            fits = True
            if type(option) is list:
                fits = all(_type_check(param, v, option, nested, None)[0] is None
                           for v in value)
            if fits:
                return None, is_variable
        # BFCL keeps the nested failure even when the value could be a variable
        return Mismatch("type_error:nested", f"Nested type check failed for {param!r}: "
                        f"expected {expected.__name__} of {nested.__name__}, got {value!r}"
                        ), is_variable
    if answer_type is not None and type(value) is answer_type:
        return None, True
    return Mismatch("type_error:simple", f"Incorrect type for parameter {param!r}: expected "
                    f"{expected.__name__}, got {type(value).__name__} {value!r}"), is_variable


def _string_check(param: str, value: str, accepted: list[Any]) -> Mismatch | None:
    if _std(value) in [standardize(a) for a in accepted if type(a) is str]:
        return None
    return Mismatch("value_error:string", f"Invalid value for {param!r}: {value!r}; "
                    f"expected one of {accepted}")


def _list_check(param: str, value: list[Any], accepted: list[Any]) -> Mismatch | None:
    try:
        options = [[_std(x) for x in option] for option in accepted]
    except TypeError:  # an accepted value that is not a sequence matches no list
        options = []
    if [_std(x) for x in value] in options:
        return None
    return Mismatch("value_error:list/tuple", f"Invalid value for {param!r}: {value!r}; "
                    f"expected one of {accepted}")


def _dict_fits(value: dict[Any, Any], option: Any) -> bool:
    for key, v in value.items():
        if key not in option:
            return False
        if _std(v) not in [_std(a) for a in option[key]]:
            return False
    return all(key in value or "" in accepted for key, accepted in option.items())


def _dict_check(param: str, value: Any, accepted: list[Any]) -> Mismatch | None:
    try:
        if any(_dict_fits(value, option) for option in accepted if option != ""):
            return None
    except (AttributeError, TypeError):  # not a dict where one is compared
        pass
    return Mismatch("value_error:dict_value", f"Invalid value for {param!r}: {value!r}; "
                    f"expected one of {accepted}")


def _list_of_dicts_check(param: str, value: list[Any], accepted: list[Any]) -> Mismatch | None:
    for option in accepted:
        try:
            if len(value) != len(option):
                continue
            if all(_dict_check(param, v, [o]) is None for v, o in zip(value, option,
                                                                        strict=True)):
                return None
        except TypeError:
            continue
    return Mismatch("value_error:list_dict", f"Invalid value for {param!r}: {value!r}; "
                    f"expected one of {accepted}")


def _value_check(param: str, value: Any, accepted: list[Any], expected: type,
                 nested: type | None) -> Mismatch | None:
    if expected is dict:
        return _dict_check(param, value, accepted)
    if expected is list and nested is dict:
        return _list_of_dicts_check(param, value, accepted)
    if expected is str:
        return _string_check(param, value, accepted)
    if expected is list:
        return _list_check(param, value, accepted)
    return None if value in accepted else Mismatch(
        "value_error:others", f"Invalid value for {param!r}: {value!r}; expected one of "
        f"{accepted}")


def param_check(param: str, value: Any, doc: dict[str, Any], accepted: list[Any]
                 ) -> Mismatch | None:
    kind = doc.get("type")
    if kind not in PYTHON_TYPES:
        return Mismatch("type_error:unknown", f"parameter {param!r} has BFCL type {kind!r}, "
                        "which the Python checker does not know")
    expected = PYTHON_TYPES[kind]
    nested = None
    if kind in NESTED_TYPES:
        inner = (doc.get("items") or {}).get("type")
        nested = PYTHON_TYPES.get(inner) if inner is not None else None
    if kind == "tuple" and type(value) is tuple:
        value = list(value)
    if kind == "float" and type(value) is int:
        value = float(value)
    mismatch, is_variable = _type_check(param, value, accepted, expected, nested)
    if mismatch is not None:
        return mismatch
    if not is_variable and (expected in (dict, str, list)):
        return _value_check(param, value, accepted, expected, nested)
    return None if value in accepted else Mismatch(
        "value_error:others", f"Invalid value for {param!r}: {value!r}; expected one of "
        f"{accepted}")


def check_call(doc: dict[str, Any] | None, output: dict[str, Any],
               answer: dict[str, Any]) -> Mismatch | None:
    """One decoded call `{name: params}` against one accepted call `{name: {p: [...]}}`."""
    if doc is None:
        return Mismatch("simple_function_checker:no_doc",
                        f"no function doc for accepted call {list(answer)}")
    accepted = next(iter(answer.values()))
    name = doc["name"]
    if name not in output:
        return Mismatch("simple_function_checker:wrong_func_name",
                        f"function {name!r} not found in the output {list(output)}")
    params = output[name]
    properties = doc.get("parameters", {}).get("properties", {})
    for param in doc.get("parameters", {}).get("required", []):
        if param not in params:
            return Mismatch("simple_function_checker:missing_required",
                            f"missing required parameter {param!r}")
    for param, value in params.items():
        if param not in properties or param not in accepted:
            return Mismatch("simple_function_checker:unexpected_param",
                            f"unexpected parameter {param!r}")
        mismatch = param_check(param, value, properties[param], accepted[param])
        if mismatch is not None:
            return mismatch
    for param, values in accepted.items():
        if param not in params and "" not in values:
            return Mismatch("simple_function_checker:missing_optional",
                            f"parameter {param!r} is not optional and was not given")
    return None


def find_doc(functions: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((f for f in functions if f.get("name") == name), None)


def check_parallel(functions: list[dict[str, Any]], output: list[dict[str, Any]],
                   answers: list[dict[str, Any]]) -> Mismatch | None:
    """Order-free, by BFCL's greedy matching (each accepted call takes the first fit)."""
    if len(output) != len(answers):
        return Mismatch("parallel_function_checker_no_order:wrong_count",
                        f"{len(output)} calls for {len(answers)} expected")
    used: set[int] = set()
    for i, answer in enumerate(answers):
        doc = find_doc(functions, next(iter(answer)))
        hit = next((j for j, call in enumerate(output)
                    if j not in used and check_call(doc, call, answer) is None), None)
        if hit is None:
            return Mismatch("parallel_function_checker_no_order:cannot_find_match",
                            f"no output call matches expected call {i} ({next(iter(answer))})")
        used.add(hit)
    return None


def wanted_calls(category: str, answers: list[dict[str, Any]]) -> int:
    """How many calls an accepted reply of an AST category holds: one per accepted call
    (parallel, multiple), or one (simple)."""
    return len(answers) if "parallel" in category or "multiple" in category else 1


def check_ast(category: str, functions: list[dict[str, Any]], output: list[dict[str, Any]],
              answers: list[dict[str, Any]]) -> Mismatch | None:
    """BFCL's `ast_checker` dispatch by category name."""
    if "parallel" in category:
        return check_parallel(functions, output, answers)
    wanted = wanted_calls(category, answers)
    if len(output) != wanted:
        kind = "multiple" if "multiple" in category else "simple"
        return Mismatch(f"{kind}_function_checker:wrong_count",
                        f"{len(output)} calls; expected {wanted}")
    # simple: BFCL checks against the first doc; multiple: against the accepted call's doc
    doc = find_doc(functions, next(iter(answers[0]))) if "multiple" in category else (
        functions[0] if functions else None)
    return check_call(doc, output[0], answers[0])

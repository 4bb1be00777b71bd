"""BFCL's own verdicts on model outputs; run by benchmarks/bfcl_agreement.py inside a
throwaway venv that has bfcl-eval installed (never tracerl's venv: bfcl-eval pins
numpy 1.26 and a dozen provider SDKs).

    BFCL_PROJECT_ROOT=/tmp/x VENV/bin/python bfcl_agreement_runner.py IN.jsonl OUT.jsonl

It imports nothing from tracerl. Each input line is one output to score:

    {"uid", "category", "id", "text": str}                      single-turn
    {"uid", "category", "id", "turns": [[str, ...], ...]}        multi-turn (step texts)
    plus "decoded" and "env_decoded" (BFCL's decoded form: single-turn
    [{name: {param: value}}] or None, multi-turn [turn][step] -> [call string]) and
    "episode" (whether "env_decoded" exists).

Each output line says what BFCL makes of it, each time through the functions its own
eval runner calls per entry (`_evaluate_single_ast_entry`, `..._relevance_entry`,
`..._multi_turn_entry`, which wrap `ast_checker` / `multi_turn_checker` with the
format checks and the irrelevance rule):
- `text_*`: from the raw text, decoded by BFCL's decoder for Hermes-style
  `<tool_call>` output (the Qwen FC handler's; the format tracerl's policies write);
- `decoded_*`: from every call the text holds as tracerl parses it, passed through an
  identity decoder, so a disagreement there is one of the checkers alone;
- `env_*`: the same for what tracerl's reward scored after playing the text through
  its env (refused calls left out), when the text could be played.
Entries and accepted answers come from the installed package's data via its own
loaders (`load_dataset_entry`, `load_ground_truth_entry`).

BFCL keeps multi-turn simulator instances in a module global keyed by model name and
entry id, so every output gets a model name of its own and its instances are dropped
after it is scored (otherwise the second output of an entry would start from the
first one's state).
"""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

from bfcl_eval.constants.enums import Language, ReturnFormat
from bfcl_eval.eval_checker.eval_runner import (
    _evaluate_single_ast_entry,
    _evaluate_single_multi_turn_entry,
    _evaluate_single_relevance_entry,
)
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
from bfcl_eval.model_handler.local_inference.qwen_fc import QwenFCHandler
from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

# A registry name whose handler is QwenFCHandler and whose underscore_to_dot is False
# (function names with dots are compared as written, as tracerl passes them).
MODEL = "Qwen/Qwen3-0.6B-FC"


class Identity:
    """A handler whose decoders return what they are given (already decoded)."""

    def decode_ast(self, result: Any, *_: Any, **__: Any) -> Any:
        return result

    def decode_execute(self, result: Any, *_: Any, **__: Any) -> Any:
        return result


def _load(categories: set[str]) -> tuple[dict[str, dict], dict[str, Any]]:
    entries: dict[str, dict] = {}
    answers: dict[str, Any] = {}
    for category in sorted(categories):
        prompt = load_dataset_entry(
            category, include_prereq=False, include_language_specific_hint=False
        )
        entries.update({e["id"]: e for e in prompt})
        if "irrelevance" not in category:
            truth = load_ground_truth_entry(category)
            # BFCL aligns prompts and answers by index, not id (eval_runner.py)
            answers.update({p["id"]: t["ground_truth"] for p, t in zip(prompt, truth, strict=True)})
    return entries, answers


def _single(handler: Any, rec: dict, result: Any, entry: dict, answer: Any) -> dict:
    category = rec["category"]
    if "irrelevance" in category:
        return _evaluate_single_relevance_entry(
            handler, rec["id"], result, copy.deepcopy(entry), MODEL, category
        )
    return _evaluate_single_ast_entry(
        handler, rec["id"], result, answer, copy.deepcopy(entry), MODEL, category,
        language=Language.PYTHON, return_format=ReturnFormat.PYTHON,
    )


def _multi(handler: Any, rec: dict, turns: Any, entry: dict, answer: Any, tag: str) -> dict:
    name = f"agree{tag}"
    try:
        return _evaluate_single_multi_turn_entry(
            handler, rec["id"], turns, answer, copy.deepcopy(entry), name, rec["category"]
        )
    finally:
        for key in [k for k in vars(multi_turn_utils) if k.startswith(name + "_")]:
            delattr(multi_turn_utils, key)


def _error(result: dict) -> str:
    if result["valid"]:
        return ""
    err = result.get("error")
    if isinstance(err, dict):
        return f"{err.get('error_type', '')}: {err.get('error_message', '')}"
    return f"{result.get('error_type', '')}: {json.dumps(err, default=str)[:300]}"


def _decode_text(handler: QwenFCHandler, rec: dict) -> Any:
    """What BFCL's decoder makes of the text (an error text where it raises); for
    multi-turn, per step, a step that fails to decode as None."""
    def attempt(decode: Any, *args: Any) -> Any:
        try:
            return decode(*args)
        except Exception as e:  # noqa: BLE001 -- BFCL's runner treats any decode error alike
            return f"<decode error: {type(e).__name__}: {e}>"
    if "turns" in rec:
        return [[s if isinstance(s, list) else None
                 for s in (attempt(handler.decode_execute, t, False) for t in turn)]
                for turn in rec["turns"]]
    return attempt(handler.decode_ast, rec["text"], ReturnFormat.PYTHON, False)


def score(rec: dict, n: int, entries: dict, answers: dict, qwen: QwenFCHandler) -> dict:
    entry, answer = entries[rec["id"]], answers.get(rec["id"])
    identity = Identity()
    if "turns" in rec:
        def judge(handler: Any, result: Any, tag: str) -> dict:
            return _multi(handler, rec, result, entry, answer, f"{n}{tag}")
    else:
        def judge(handler: Any, result: Any, tag: str) -> dict:
            return _single(handler, rec, result, entry, answer)
    text = judge(qwen, rec["turns"] if "turns" in rec else rec["text"], "t")
    dec = judge(identity, rec["decoded"], "d")
    env = judge(identity, rec["env_decoded"], "e") if rec["episode"] else None
    return {
        "uid": rec["uid"],
        "text_valid": bool(text["valid"]), "text_error": _error(text),
        "decoded_valid": bool(dec["valid"]), "decoded_error": _error(dec),
        "env_valid": None if env is None else bool(env["valid"]),
        "env_error": "" if env is None else _error(env),
        "bfcl_decoded": _decode_text(qwen, rec),
    }


def main(src: str, dst: str) -> None:
    with open(src) as f:
        records = [json.loads(line) for line in f]
    entries, answers = _load({r["category"] for r in records})
    qwen = QwenFCHandler(MODEL, temperature=0, registry_name=MODEL, is_fc_model=True)
    with open(dst, "w") as out:
        for n, rec in enumerate(records):
            out.write(json.dumps(score(rec, n, entries, answers, qwen), default=repr) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

"""BFCL v4's task data, read from the pinned `bfcl-eval` wheel (never installed here).

The wheel's `bfcl_eval/data/` holds one JSON-lines file per category
(`BFCL_v4_<category>.json`: id, question, function or involved_classes ...), the
accepted answers in `possible_answer/` (same ids, same order), and for the multi-turn
categories the function docs of each API class in `multi_turn_func_doc/`. Multi-turn
entries carry no `function` field: like BFCL's own loader, the docs of every involved
class are offered, and a miss_func entry's held-back functions are taken out of that
list and offered at the turn `missed_function` names (where the user message is empty
and BFCL sends its fixed "I have updated some more functions" line).

`excluded_function` is metadata BFCL's harness never reads (its ground truth avoids
those functions, the model is offered them); it is kept on the entry, not applied.
"""

from __future__ import annotations

import copy
import fnmatch
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from tracerl.util.wheels import WheelData, wheel_data

DISTRIBUTION, VERSION = "bfcl-eval", "2026.3.23"
DATA = WheelData(DISTRIBUTION, VERSION, "bfcl_eval/data")

SINGLE_TURN = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
               "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
               "live_irrelevance", "live_relevance")
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
              "multi_turn_long_context")
CATEGORIES = SINGLE_TURN + MULTI_TURN
"""Every category this family loads (BFCL v4's Python and multi-turn sets; the Java and
JavaScript sets, memory, web search and format sensitivity are not loaded)."""

ADDED_FUNCTIONS_PROMPT = "I have updated some more functions you can choose from. What about now?"
"""BFCL's user message at a miss_func turn that adds the held-back functions."""

FUNC_DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json", "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json", "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json", "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json", "VehicleControlAPI": "vehicle_control.json",
}
"""The multi-turn API classes and their function-doc files."""


def is_multi_turn(category: str) -> bool:
    return category.startswith("multi_turn")


def is_relevance(category: str) -> bool:
    """Categories checked by whether a call was made at all (BFCL's relevance runner)."""
    return "relevance" in category  # irrelevance, live_irrelevance, live_relevance


@dataclass(frozen=True)
class BfclEntry:
    """One BFCL test entry with its accepted answer."""

    id: str
    category: str
    turns: tuple[tuple[dict[str, str], ...], ...]
    """User (and system) messages of each user turn, in BFCL's order."""
    functions: tuple[dict[str, Any], ...]
    """Function docs offered from the first turn (BFCL's format)."""
    answer: list[Any]
    """possible_answer's ground truth: `[{func: {param: [accepted...]}}]` for single-turn
    AST categories, `[[call_str, ...] per turn]` for multi-turn, [] for relevance ones."""
    involved_classes: tuple[str, ...] = ()
    initial_config: dict[str, Any] = field(default_factory=dict)
    added_functions: dict[int, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    """miss_func: turn index -> the held-back function docs offered from that turn."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    """The question entry as BFCL ships it (what `check_multi_turn` takes)."""

    @property
    def multi_turn(self) -> bool:
        return is_multi_turn(self.category)

    def functions_at(self, turn: int) -> list[dict[str, Any]]:
        """The function docs offered during user turn `turn`."""
        out = list(self.functions)
        for at, docs in sorted(self.added_functions.items()):
            if at <= turn:
                out.extend(docs)
        return out


def expand_categories(names: list[str] | tuple[str, ...]) -> list[str]:
    """Category names with shell patterns (`live_*`) expanded, in CATEGORIES order."""
    chosen: set[str] = set()
    for name in names:
        hits = fnmatch.filter(CATEGORIES, name)
        if not hits:
            raise ValueError(f"bfcl: unknown category {name!r}; known: {', '.join(CATEGORIES)} "
                             "(shell patterns such as live_* work)")
        chosen.update(hits)
    return [c for c in CATEGORIES if c in chosen]


def data_dir() -> Path:
    """The wheel's `bfcl_eval/data` folder (fetched and unpacked once)."""
    return wheel_data(DATA)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@cache
def func_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    """The function docs of one multi-turn API class."""
    if class_name not in FUNC_DOC_FILES:
        raise ValueError(f"bfcl: unknown API class {class_name!r}; known: {sorted(FUNC_DOC_FILES)}")
    return tuple(_jsonl(data_dir() / "multi_turn_func_doc" / FUNC_DOC_FILES[class_name]))


def _multi_turn_functions(raw: dict[str, Any]
                          ) -> tuple[list[dict[str, Any]], dict[int, tuple[dict[str, Any], ...]]]:
    docs = [copy.deepcopy(d) for c in raw["involved_classes"] for d in func_docs(c)]
    added: dict[int, tuple[dict[str, Any], ...]] = {}
    for turn, names in raw.get("missed_function", {}).items():
        held = [d for d in docs if d["name"] in names]
        docs = [d for d in docs if d["name"] not in names]
        added[int(turn)] = tuple(held)
    return docs, added


def _entry(category: str, raw: dict[str, Any], answer: list[Any]) -> BfclEntry:
    if is_multi_turn(category):
        functions, added = _multi_turn_functions(raw)
    else:
        functions, added = raw["function"], {}
    turns = tuple(tuple(m for m in turn) for turn in raw["question"])
    return BfclEntry(id=raw["id"], category=category, turns=turns, functions=tuple(functions),
                     answer=answer, involved_classes=tuple(raw.get("involved_classes", ())),
                     initial_config=raw.get("initial_config", {}), added_functions=added,
                     raw=raw)


@cache
def _load(category: str) -> tuple[BfclEntry, ...]:
    root = data_dir()
    questions = _jsonl(root / f"BFCL_v4_{category}.json")
    if is_relevance(category):
        answers: list[list[Any]] = [[] for _ in questions]
    else:
        rows = _jsonl(root / "possible_answer" / f"BFCL_v4_{category}.json")
        if [r["id"] for r in rows] != [q["id"] for q in questions]:
            raise ValueError(f"bfcl {category}: possible_answer ids do not follow the questions'")
        answers = [r["ground_truth"] for r in rows]
    return tuple(_entry(category, q, a) for q, a in zip(questions, answers, strict=True))


def load_category(category: str) -> list[BfclEntry]:
    """Every entry of one category, in the file's order."""
    if category not in CATEGORIES:
        raise ValueError(f"bfcl: unknown category {category!r}; known: {', '.join(CATEGORIES)}")
    return list(_load(category))


def load_entries(categories: list[str] | tuple[str, ...]) -> list[BfclEntry]:
    """Entries of the named categories (patterns allowed), category by category."""
    return [e for c in expand_categories(categories) for e in load_category(c)]


@cache
def _by_id(category: str) -> dict[str, BfclEntry]:
    return {e.id: e for e in _load(category)}


def entry_by_id(category: str, entry_id: str) -> BfclEntry:
    """One entry by its category and id (a Task carries both)."""
    if category not in CATEGORIES:
        raise ValueError(f"bfcl: unknown category {category!r}")
    try:
        return _by_id(category)[entry_id]
    except KeyError:
        raise ValueError(f"bfcl {category}: no entry {entry_id!r}") from None

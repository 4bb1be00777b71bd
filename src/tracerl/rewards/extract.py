"""Pull the part a reward judges out of a completion: a code block or a final answer."""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)
_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_ANSWER_LINE = re.compile(r"(?:final answer|answer)\s*(?:is)?\s*[:=]\s*(.+)", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)*(?:/\d+)?(?:[eE][-+]?\d+)?")
PY_LANGS = ("", "python", "py", "python3")


def extract_code(text: str) -> str:
    """The last fenced Python (or unlabelled) code block, else the whole text."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    python = [body for lang, body in blocks if lang in PY_LANGS]
    if python:
        return python[-1]
    return text


_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")


def all_boxed(text: str) -> list[str]:
    r"""Contents of every `\boxed{...}` / `\fbox{...}`, braces balanced, in order."""
    out = []
    for m in _BOX.finditer(text):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        if depth == 0:
            out.append(text[m.end() : j - 1].strip())
    return out


def last_boxed(text: str) -> str | None:
    r"""Content of the last `\boxed{...}` (or `\fbox{...}`)."""
    boxes = all_boxed(text)
    return boxes[-1] if boxes else None


def distinct_final_answers(text: str) -> int:
    """How many different boxed answers (or, without boxes, <answer> tags) a text gives.

    More than one is hedging ("\\boxed{41} or \\boxed{42}"): a reward that reads only the
    last (or any) of them can be farmed by listing candidates.
    """
    found = all_boxed(text) or [t.strip() for t in _TAG.findall(text)]
    return len({re.sub(r"\s+", "", a) for a in found if a.strip()})


def extract_answer(text: str) -> tuple[str | None, str]:
    """The final answer and how it was found: boxed, tag, answer_line, last_number, none."""
    boxed = last_boxed(text)
    if boxed:
        return boxed, "boxed"
    tags = _TAG.findall(text)
    if tags and tags[-1].strip():
        inner = tags[-1].strip()
        return (last_boxed(inner) or inner), "tag"
    lines = _ANSWER_LINE.findall(text)
    if lines:
        return lines[-1].strip().rstrip(".").strip(), "answer_line"
    numbers = _NUMBER.findall(text)
    if numbers:
        return numbers[-1], "last_number"
    return None, "none"

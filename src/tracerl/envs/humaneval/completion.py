"""A model's reply to a HumanEval prompt, as the completion HumanEval's harness appends.

HumanEval scores `prompt + completion + test`: the completion continues the prompt, which
ends inside the entry point's docstring-only stub. Chat models answer in other shapes,
and all of them are accepted, each turned into the text that continues the prompt:

- the code is the last fenced ```python (or unlabelled) block, else the whole reply; a
  block cut off before its closing fence (the turn ran out of tokens) counts as a block;
- `function`: the code defines the entry point at column 0 (a whole function, perhaps
  with imports and helpers): it follows the prompt, whose stub it replaces;
- `body`: the code starts indented: it is the stub's body, as HumanEval expects;
- `module`: unindented code that compiles as a module but does not define the entry point
  runs at module level after the stub (exactly what HumanEval would do with it);
- `unindented_body`: unindented code that does not compile (`return x` at
  column 0) is a body its writer forgot to indent: it is indented by four spaces. This is
  the one shape where we are more lenient than HumanEval, which would fail it.

The completion is what benchmarks/humaneval_agreement.py hands HumanEval's own
`check_correctness`, so both harnesses judge the same program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tracerl.rewards.extract import extract_code

Shape = Literal["function", "body", "module", "unindented_body"]
_OPEN_FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n", re.IGNORECASE)


@dataclass(frozen=True)
class Completion:
    """The text that continues the prompt, and the shape the reply was read as."""

    text: str
    shape: Shape


def reply_code(reply: str) -> str:
    """The code of a reply: its last complete fenced block, else what follows an
    unclosed opening fence, else the whole reply."""
    code = extract_code(reply)
    if code is not reply:
        return code
    opened = list(_OPEN_FENCE.finditer(reply))
    return reply[opened[-1].end():] if opened else reply


def _defines(code: str, entry_point: str) -> bool:
    pattern = rf"^(?:async[ \t]+)?def[ \t]+{re.escape(entry_point)}[ \t]*\("
    return re.search(pattern, code, re.MULTILINE) is not None


def _compiles(code: str) -> bool:
    """Compiles as a module (`compile`, not `ast.parse`: `return` outside a function is
    an error only the compiler raises)."""
    try:
        compile(code, "<reply>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def completion_of(reply: str, entry_point: str) -> Completion:
    """The completion HumanEval's harness would append after the prompt (see module)."""
    code = reply_code(reply).replace("\r\n", "\n")
    if not code.strip():
        return Completion("", "body")
    if _defines(code, entry_point):
        return Completion("\n" + code, "function")
    first = next((line for line in code.splitlines() if line.strip()), "")
    if first[:1] in (" ", "\t"):
        return Completion(code, "body")
    if _compiles(code):
        return Completion("\n" + code, "module")
    indented = "".join(("    " + line if line.strip() else line) + "\n"
                       for line in code.splitlines())
    return Completion(indented, "unindented_body")

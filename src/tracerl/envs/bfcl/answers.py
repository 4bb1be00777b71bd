"""Ground truth as calls an agent could make: for demonstrations and for audit hacks.

Single-turn accepted answers list accepted values per parameter; the canonical call
takes each parameter's first accepted value, and leaves the parameter out where that is
the optional marker `""` (inside dict values too, which list accepted values per key).
Multi-turn ground truth is call strings, some with positional arguments
(`sort('final_report.pdf')`); as JSON tool calls those are named from the simulator
method's signature.
"""

from __future__ import annotations

from typing import Any

from tracerl.envs.bfcl.calls import parse_call
from tracerl.envs.bfcl.simulators import Simulation
from tracerl.types import ToolCall


def _pick(value: Any) -> Any:
    """An accepted value with the accepted values nested in it resolved: a dict
    parameter's accepted value lists accepted values per key, and so does each dict of
    a list of dicts."""
    if isinstance(value, dict) and all(isinstance(v, list) for v in value.values()):
        return {k: _pick(v[0]) for k, v in value.items() if v and v[0] != ""}
    if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
        return [_pick(x) for x in value]
    return value


def canonical_calls(answer: list[dict[str, dict[str, list[Any]]]]) -> list[ToolCall]:
    """One ToolCall per accepted call, with the first accepted value of each parameter."""
    calls = []
    for i, accepted in enumerate(answer):
        name, params = next(iter(accepted.items()))
        args = {p: _pick(values[0]) for p, values in params.items()
                if values and values[0] != ""}
        calls.append(ToolCall(name, args, id=f"call_{i}"))
    return calls


def as_tool_call(text: str, simulation: Simulation, index: int = 0) -> ToolCall:
    """A ground-truth call string as a JSON tool call (positional arguments named)."""
    parsed = parse_call(text)
    args = dict(parsed.kwargs)
    if parsed.args:
        names = simulation.parameter_names(parsed.name)
        args = {**dict(zip(names, parsed.args, strict=False)), **args}
    return ToolCall(parsed.name, args, id=f"call_{index}")


def decoded(calls: list[ToolCall]) -> list[dict[str, dict[str, Any]]]:
    """Calls in BFCL's decoded single-turn form `[{name: {params}}]`."""
    return [{c.name: dict(c.arguments)} for c in calls]

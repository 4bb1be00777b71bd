"""BFCL's multi-turn API simulators, loaded from the pinned wheel and driven without eval.

The simulator classes (file system, trading bot, travel booking, vehicle control,
messaging, posting, ticketing, math) are BFCL's own Python code, shipped in the wheel
under `bfcl_eval/eval_checker/multi_turn_eval/func_source_code/`. They are executed as
the reference they are (their state is what BFCL's checker compares), imported from the
unpacked wheel without installing `bfcl-eval` or its dependencies: every `__init__.py` on
that package path is empty, so when the package is not installed its parents are
registered as bare packages whose path is the unpacked folder.

A `Simulation` holds one episode's instances (`_load_scenario` from a deep copy of the
entry's `initial_config`, as BFCL does) and runs call strings on them with BFCL's rules
for what a call returns: a string as it is, a dict as JSON (str() when it is not
serialisable), anything else through str(), and an exception as
`Error during execution: <message>`. Method names are looked up among the instances'
public methods, a later class winning a clash as in BFCL's lookup table; BFCL's short
list of refused names (kill, exit, remove, ...) is refused the same way.
"""

from __future__ import annotations

import copy
import importlib
import importlib.machinery
import importlib.util
import inspect
import json
import sys
import threading
import types
from collections.abc import Iterable
from contextlib import nullcontext
from functools import cache
from pathlib import Path
from typing import Any

from tracerl.envs.bfcl.calls import CallSyntaxError, ParsedCall, parse_call
from tracerl.envs.bfcl.data import DISTRIBUTION, VERSION
from tracerl.util.wheels import WheelData, wheel_data

PACKAGE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
SOURCE = WheelData(DISTRIBUTION, VERSION, PACKAGE.replace(".", "/"))
MODULES = {
    "GorillaFileSystem": "gorilla_file_system", "MathAPI": "math_api",
    "MessageAPI": "message_api", "TwitterAPI": "posting_api", "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot", "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
STATELESS = frozenset({"MathAPI"})
"""Classes BFCL builds without loading a scenario."""
REFUSED_NAMES = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
"""Names BFCL's harness refuses to run, whatever class they would belong to."""
ERROR_PREFIX = "Error during execution: "
PROCESS_STATE = frozenset({"MathAPI"})
"""Classes whose methods set process-wide state: MathAPI.logarithm sets mpmath's global
precision before it computes, so two episodes' calls in two threads could each compute
at the other's precision. Their calls take one lock."""
_PROCESS_LOCK = threading.Lock()


def _register_packages(folder: Path) -> None:
    """Make `PACKAGE` importable from `folder` when bfcl-eval is not installed."""
    parts = PACKAGE.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        if name in sys.modules:
            continue
        path = str(folder.parents[len(parts) - depth - 1] if depth < len(parts) else folder)
        module = types.ModuleType(name)
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        module.__spec__.submodule_search_locations = [path]
        module.__path__ = [path]
        sys.modules[name] = module


@cache
def simulator_class(class_name: str) -> type:
    """The simulator class named `class_name` (e.g. GorillaFileSystem)."""
    if class_name not in MODULES:
        raise ValueError(f"bfcl: unknown API class {class_name!r}; known: {sorted(MODULES)}")
    if "bfcl_eval" not in sys.modules and importlib.util.find_spec("bfcl_eval") is None:
        _register_packages(wheel_data(SOURCE))
    module = importlib.import_module(f"{PACKAGE}.{MODULES[class_name]}")
    return getattr(module, class_name)


def result_text(value: Any) -> str:
    """What BFCL records as a call's execution result."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


class Simulation:
    """One episode's simulator instances (fresh from the scenario) and their methods."""

    def __init__(self, involved_classes: Iterable[str], initial_config: dict[str, Any],
                 long_context: bool = False) -> None:
        self.instances: dict[str, Any] = {}
        self.methods: dict[str, Any] = {}
        self.owner: dict[str, str] = {}
        """Method name -> the class it runs on (a later class wins a clash, as in BFCL)."""
        for class_name in involved_classes:
            instance = simulator_class(class_name)()
            if class_name not in STATELESS:
                scenario = copy.deepcopy(initial_config.get(class_name, {}))
                instance._load_scenario(scenario, long_context=long_context)
            self.instances[class_name] = instance
            for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self.methods[name] = method
                    self.owner[name] = class_name

    @classmethod
    def for_entry(cls, entry: dict[str, Any]) -> Simulation:
        """The simulation of a raw BFCL question entry (long_context from its id)."""
        category = str(entry["id"]).rsplit("_", 1)[0]
        return cls(entry["involved_classes"], entry.get("initial_config", {}),
                   long_context="long_context" in category or "composite" in category)

    def call(self, parsed: ParsedCall) -> str:
        """Run one parsed call; failures come back as BFCL's error text."""
        if parsed.name in REFUSED_NAMES:
            return f"{ERROR_PREFIX}Function call {parsed.name} is not allowed."
        method = self.methods.get(parsed.name)
        if method is None:
            return f"{ERROR_PREFIX}name '{parsed.name}' is not defined"
        lock = _PROCESS_LOCK if self.owner[parsed.name] in PROCESS_STATE else nullcontext()
        try:
            with lock:
                return result_text(method(*parsed.args, **parsed.kwargs))
        except Exception as e:  # the simulator's own failure is the call's result
            return f"{ERROR_PREFIX}{e}"

    def execute(self, text: str) -> str:
        """Run one call string (never eval'd: envs/bfcl/calls.py)."""
        try:
            parsed = parse_call(text)
        except CallSyntaxError as e:
            return f"{ERROR_PREFIX}{e}"
        return self.call(parsed)

    def execute_all(self, calls: Iterable[str]) -> list[str]:
        return [self.execute(c) for c in calls]

    def state(self) -> dict[str, dict[str, Any]]:
        """Each instance's public attributes (what BFCL's state check compares)."""
        return {name: {k: v for k, v in vars(obj).items() if not k.startswith("_")}
                for name, obj in self.instances.items()}

    def parameter_names(self, method_name: str) -> list[str]:
        """The parameter names of a method, in order (to name positional arguments)."""
        return list(inspect.signature(self.methods[method_name]).parameters)

"""Prompt optimization: search for a better prompt on the agent's real rollouts, within
a budget of model calls and tokens (docs/optimize.md).

Names are imported on first use: the config and the optimizers need no torch.
"""

from tracerl.util.lazy import lazy_exports

_EXPORTS = {
    "optimize": "tracerl.optimize.run",
    "Optimization": "tracerl.optimize.run",
    "OptimizeResult": "tracerl.optimize.run",
    "OptimizationInterrupted": "tracerl.optimize.run",
    "OptimizeConfig": "tracerl.optimize.config",
    "Prompt": "tracerl.optimize.prompt",
    "apply_prompt": "tracerl.optimize.prompt",
    "Budget": "tracerl.optimize.budget",
    "BudgetExhausted": "tracerl.optimize.budget",
    "Evaluation": "tracerl.optimize.history",
    "read_history": "tracerl.optimize.history",
    "SearchData": "tracerl.optimize.data",
    "PerTurnMean": "tracerl.optimize.objective",
    "OPTIMIZERS": "tracerl.optimize.optimizers",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

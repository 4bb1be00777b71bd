"""Turn-level credit: step evaluators, Monte Carlo branching and evaluator calibration."""

from tracerl.credit.calibration import CalibrationReport, calibrate, sample_states, spearman
from tracerl.credit.evaluators import (
    JudgeStepEvaluator,
    StepEvaluator,
    SubgoalEvaluator,
    ToolValidityEvaluator,
)
from tracerl.credit.montecarlo import MonteCarloEvaluator

__all__ = ["CalibrationReport", "JudgeStepEvaluator", "MonteCarloEvaluator", "StepEvaluator",
           "SubgoalEvaluator", "ToolValidityEvaluator", "calibrate", "sample_states", "spearman"]

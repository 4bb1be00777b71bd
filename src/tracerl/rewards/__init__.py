"""Verifiable rewards: programmatic checks, composition, adapters and audits."""

from tracerl.rewards.audit import AuditReport, HackResult, audit, resolve_reward
from tracerl.rewards.base import Reward, RewardResult
from tracerl.rewards.code import CodeTestsReward, code_tests
from tracerl.rewards.compose import FormatReward, FunctionReward, Gate, PerTurn, WeightedSum
from tracerl.rewards.extract import extract_answer, extract_code
from tracerl.rewards.math import MathAnswerReward, math_answer
from tracerl.rewards.testspec import IOCase, parse_tests
from tracerl.rewards.trl import trl_reward_func

__all__ = [
    "AuditReport",
    "CodeTestsReward",
    "FormatReward",
    "FunctionReward",
    "Gate",
    "HackResult",
    "IOCase",
    "MathAnswerReward",
    "PerTurn",
    "Reward",
    "RewardResult",
    "WeightedSum",
    "audit",
    "code_tests",
    "extract_answer",
    "extract_code",
    "math_answer",
    "parse_tests",
    "resolve_reward",
    "trl_reward_func",
]

"""Verifiable rewards: programmatic checks, composition, adapters and audits.

Names are imported on first use (a module's own imports stay its own)."""

from tracerl.util.lazy import lazy_exports

_EXPORTS = {
    "AuditReport": "tracerl.rewards.audit",
    "CodeTestsReward": "tracerl.rewards.code",
    "FormatReward": "tracerl.rewards.compose",
    "FunctionReward": "tracerl.rewards.compose",
    "Gate": "tracerl.rewards.compose",
    "HackResult": "tracerl.rewards.audit",
    "IOCase": "tracerl.rewards.testspec",
    "MathAnswerReward": "tracerl.rewards.math",
    "PerTurn": "tracerl.rewards.compose",
    "Reward": "tracerl.rewards.base",
    "RewardResult": "tracerl.rewards.base",
    "WeightedSum": "tracerl.rewards.compose",
    "as_reward": "tracerl.rewards.compose",
    "audit": "tracerl.rewards.audit",
    "code_tests": "tracerl.rewards.code",
    "extract_answer": "tracerl.rewards.extract",
    "extract_code": "tracerl.rewards.extract",
    "math_answer": "tracerl.rewards.math",
    "math_answer_batch": "tracerl.rewards.math",
    "parse_tests": "tracerl.rewards.testspec",
    "resolve_reward": "tracerl.rewards.audit",
    "trl_reward_func": "tracerl.rewards.trl",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

"""BFCL v4 (Berkeley Function Calling Leaderboard) as a task family, scored by its rules.

`check_single_turn` / `check_multi_turn` (envs/bfcl/check.py) are the one scorer: the
family's reward, its per-turn step evaluator and the agreement benchmark against BFCL's
own checker all go through them. docs/bfcl.md describes the family.
"""

from tracerl.envs.bfcl.check import Verdict, check_multi_turn, check_single_turn, turn_verdicts

__all__ = ["Verdict", "check_multi_turn", "check_single_turn", "turn_verdicts"]

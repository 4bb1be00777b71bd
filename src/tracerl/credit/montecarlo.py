"""Monte Carlo step values by branching rollouts from intermediate states.

The value of the state after turn j is the mean outcome reward of `samples`
continuations sampled by the current policy from there (the real RolloutRunner,
replaying the prefix in a fresh env: `RolloutRunner.run_from`). Turn k's advantage is
V(after k) - V(after k-1): the Monte Carlo estimate VinePPO (Kazemnejad et al. 2024)
uses in place of a critic. It is unbiased given enough samples and costs rollouts,
which is why it serves as the reference that cheaper step evaluators are calibrated
against. Branches whose reward could not be judged are left out of the mean.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracerl.rollout.runner import Prefix, RolloutRunner
from tracerl.types import Trajectory


@dataclass
class MonteCarloEvaluator:
    """Turn advantages from branched rollouts; score = (1 + V_after - V_before) / 2.

    The score mapping assumes outcome rewards in [0, 1] (so advantages lie in [-1, 1]).
    """

    runner: RolloutRunner
    samples: int = 4
    name: str = "monte_carlo"

    def values(self, prefixes: list[Prefix]) -> list[float | None]:
        """Mean outcome of `samples` continuations from each prefix (one batched run)."""
        if not prefixes:
            return []
        groups = self.runner.run_from(prefixes, self.samples)
        out: list[float | None] = []
        for g in groups:
            judged = [t.outcome_reward for t in g.trajectories if t.outcome_reward is not None]
            out.append(sum(judged) / len(judged) if judged else None)
        return out

    def advantages(self, states: list[tuple[Trajectory, int]]) -> list[float | None]:
        """V(after turn k) - V(before turn k) for each (trajectory, k), in one batch."""
        prefixes = [Prefix(t, k + d) for t, k in states for d in (0, 1)]
        values = self.values(prefixes)
        out: list[float | None] = []
        for i in range(len(states)):
            before, after = values[2 * i], values[2 * i + 1]
            out.append(None if before is None or after is None else after - before)
        return out

    def __call__(self, trajectory: Trajectory, turn_index: int) -> float | None:
        (adv,) = self.advantages([(trajectory, turn_index)])
        return None if adv is None else (1.0 + adv) / 2.0

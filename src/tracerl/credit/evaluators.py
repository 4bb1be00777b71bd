"""Step evaluators: `(trajectory, turn_index) -> float | None`, how much one turn helped.

Convention: a score in [0, 1], higher when the turn moved the episode towards success
(0.5 = neutral); None = the evaluator abstains (cannot judge this turn), and that turn
then gets no turn-level term, never a made-up one. Turn-level credit is only as good
as its evaluator, so `tracerl.credit.calibration` measures one against Monte Carlo
outcome estimates before training trusts it.

Built-ins: tool-call validity (`ToolValidityEvaluator`), task-provided sub-goal checks
(`SubgoalEvaluator`), Monte Carlo branching (`tracerl.credit.montecarlo`) and an LLM
judge through any OpenAI-compatible endpoint (`JudgeStepEvaluator`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from tracerl.evals.judges import JudgeConfig, JudgeParseError, parse_json_reply, render_transcript
from tracerl.types import Trajectory, assistant_message
from tracerl.util.http import EndpointError

log = logging.getLogger(__name__)


@runtime_checkable
class StepEvaluator(Protocol):
    name: str

    def __call__(self, trajectory: Trajectory, turn_index: int) -> float | None: ...


def _check_index(trajectory: Trajectory, turn_index: int) -> None:
    if not 0 <= turn_index < len(trajectory.turns):
        raise IndexError(f"turn_index {turn_index} outside 0..{len(trajectory.turns) - 1} "
                         f"for task {trajectory.task.id}")


@dataclass(frozen=True)
class ToolValidityEvaluator:
    """1.0 when every tool call of the turn ran (`ToolResult.ok`), 0.0 if any failed;
    None for a turn without tool calls (a final answer: validity says nothing)."""

    name: str = "tool_validity"

    def __call__(self, trajectory: Trajectory, turn_index: int) -> float | None:
        _check_index(trajectory, turn_index)
        results = trajectory.turns[turn_index].tool_results
        if not results:
            return None
        return float(all(r.ok for r in results))


SubgoalCheck = Callable[[Trajectory, int], "float | None"]


@dataclass(frozen=True)
class SubgoalEvaluator:
    """A task family's own intermediate check (e.g. `MazeFamily.subgoal`)."""

    check: SubgoalCheck
    name: str = "subgoal"

    def __call__(self, trajectory: Trajectory, turn_index: int) -> float | None:
        _check_index(trajectory, turn_index)
        value = self.check(trajectory, turn_index)
        if value is not None and not 0.0 <= value <= 1.0:
            raise ValueError(f"sub-goal check returned {value}, expected a score in [0, 1]")
        return value


STEP_JUDGE_SYSTEM = (
    "You judge one step of an AI agent's episode: did the marked step move the agent "
    "towards solving the task? Reply with only a JSON object "
    '{{"score": <number from {low:g} to {high:g}>, "explanation": "..."}}.')


@dataclass(frozen=True)
class JudgeStepEvaluator:
    """An LLM judge scores turn k given the episode up to and including it.

    Endpoint failures and unparseable replies return None (abstain) and are counted in
    `failures`: an unreachable judge must not turn into a verdict on the policy.
    """

    config: JudgeConfig
    name: str = "llm_judge"

    def __post_init__(self) -> None:
        object.__setattr__(self, "failures", [0])

    def prompt(self, trajectory: Trajectory, turn_index: int) -> str:
        before = list(trajectory.task.messages)
        for t in trajectory.turns[:turn_index]:
            before.append(assistant_message(t))
            before.extend(t.observations)
        step = trajectory.turns[turn_index]
        after = [assistant_message(step), *step.observations]
        return (f"Episode so far:\n{render_transcript(before)}\n\n"
                f"Step to judge:\n{render_transcript(after)}")

    def __call__(self, trajectory: Trajectory, turn_index: int) -> float | None:
        _check_index(trajectory, turn_index)
        system = STEP_JUDGE_SYSTEM.format(low=self.config.low, high=self.config.high)
        try:
            reply = parse_json_reply(self.config.ask(system, self.prompt(trajectory, turn_index)))
            if "score" not in reply:
                raise JudgeParseError(f"judge reply has no 'score': {reply!r:.200}")
            return self.config.normalise(reply["score"])
        except (EndpointError, JudgeParseError) as e:
            self.failures[0] += 1  # type: ignore[attr-defined]
            log.warning("step judge abstains on %s turn %d: %s", trajectory.task.id,
                        turn_index, e)
            return None

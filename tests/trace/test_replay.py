"""Rebuilding trajectories from their traces and re-scoring them with a new Reward."""

from __future__ import annotations

import pytest

from tracerl.trace import Tracer, TraceStore, load_trajectory, replay_reward
from tracerl.types import Trajectory


@pytest.fixture
def stored(tmp_path, trajectory) -> tuple[TraceStore, str]:
    with Tracer(tmp_path / "t.sqlite") as tracer:
        trace_id = tracer.record_trajectory(trajectory, run="r", step=1)
    return TraceStore(tmp_path / "t.sqlite"), trace_id


def test_rebuilt_trajectory_keeps_tokens(stored, trajectory):
    rebuilt = load_trajectory(*stored)
    assert rebuilt.token_ids() == trajectory.token_ids()
    assert rebuilt.loss_mask() == trajectory.loss_mask()
    assert rebuilt.behaviour_logprobs() == trajectory.behaviour_logprobs()


def test_rebuilt_trajectory_keeps_messages_and_task(stored, trajectory):
    rebuilt = load_trajectory(*stored)
    assert rebuilt.messages() == trajectory.messages()
    assert (rebuilt.task.answer, rebuilt.task.metadata) == ("42", {"family": "arith"})


def test_rebuilt_trajectory_keeps_tool_results(stored, trajectory):
    results = load_trajectory(*stored).turns[0].tool_results
    assert [(r.call, r.content, r.ok, r.error) for r in results] == [
        (r.call, r.content, r.ok, r.error) for r in trajectory.turns[0].tool_results]


def test_rebuilt_trajectory_keeps_rewards_and_labels(stored, trajectory):
    rebuilt = load_trajectory(*stored)
    assert rebuilt.reward_parts == {"correct": 1.0, "format": None}
    assert (rebuilt.turns[0].reward, rebuilt.policy_version, rebuilt.metrics) == (
        0.5, 3, {"num_tool_calls": 2.0})


class NoFailedTools:
    """A changed reward: penalise any failed tool call (the recorded one failed)."""

    name = "no_failed_tools"

    def __call__(self, trajectory: Trajectory) -> float | None:
        ok = all(r.ok for t in trajectory.turns for r in t.tool_results)
        return 1.0 if ok else 0.0


def test_replay_scores_recorded_trajectory_with_new_reward(stored):
    store, trace_id = stored
    (result,) = replay_reward(store, NoFailedTools(), [trace_id])
    assert (result.recorded, result.replayed, result.error) == (1.0, 0.0, None)


def test_replay_contains_a_raising_reward(stored):
    store, trace_id = stored

    class Broken:
        name = "broken"

        def __call__(self, trajectory: Trajectory) -> float | None:
            raise RuntimeError("judge down")

    (result,) = replay_reward(store, Broken(), [trace_id])
    assert (result.replayed, result.error) == (None, "RuntimeError: judge down")


def test_rebuilt_trajectory_keeps_token_advantages(stored, trajectory):
    assert load_trajectory(*stored).advantages == trajectory.advantages


def test_a_trajectory_never_trained_on_is_rebuilt_without_advantages(tmp_path, trajectory):
    trajectory.advantages = None
    with Tracer(tmp_path / "a.sqlite") as tracer:
        trace_id = tracer.record_trajectory(trajectory, run="r", step=1)
    assert load_trajectory(TraceStore(tmp_path / "a.sqlite"), trace_id).advantages is None

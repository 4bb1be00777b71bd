import pytest

from tracerl.types import Message, Status, Task, ToolCall, Trajectory, Turn


def _traj() -> Trajectory:
    task = Task(id="t0", messages=(Message("user", "hi"),))
    turns = [
        Turn(action_ids=[5, 6], action_logprobs=[-0.1, -0.2], action_text="ab",
             observation_ids=[7, 8, 9]),
        Turn(action_ids=[10], action_logprobs=[-0.3], action_text="c"),
    ]
    return Trajectory(task=task, prompt_ids=[1, 2], turns=turns, status=Status.DONE)


def test_mask_covers_exactly_the_action_tokens():
    t = _traj()
    assert t.response_ids() == [5, 6, 7, 8, 9, 10]
    assert t.loss_mask() == [1, 1, 0, 0, 0, 1]
    assert t.behaviour_logprobs() == [-0.1, -0.2, 0.0, 0.0, 0.0, -0.3]
    assert t.token_ids() == [1, 2, 5, 6, 7, 8, 9, 10]
    assert t.num_action_tokens == 3


def test_turn_rejects_misaligned_logprobs():
    with pytest.raises(ValueError, match="action_logprobs"):
        Turn(action_ids=[1, 2], action_logprobs=[-0.1], action_text="x")


def test_message_round_trips_openai_format():
    m = Message("assistant", "", tool_calls=(ToolCall("calculator", {"expression": "1+2"}, "c1"),))
    d = m.to_openai()
    assert d["tool_calls"][0]["function"]["arguments"] == '{"expression": "1+2"}'
    assert Message.from_openai(d) == m
    with pytest.raises(ValueError, match="role"):
        Message("robot", "x")  # type: ignore[arg-type]

"""Demonstrations as trajectories: the same token layout the rollout runner writes.

An oracle conversation (assistant and tool messages after the prompt) becomes a
Trajectory whose action ids are what the policy would have sampled: each assistant
message's text, ending in a stop token (a tool-call turn ends at `</tool_call>`, a
final answer gets the end-of-turn token), and whose observation ids are the template
deltas. SFT on these trains exactly the tokens RL later samples.
"""

from __future__ import annotations

from collections.abc import Sequence

from tracerl.rollout.render import ChatRenderer
from tracerl.types import Message, Status, Task, Trajectory, Turn


def _action_text(content: str, stop_strings: Sequence[str], turn_end: str) -> str:
    return content if content.endswith(tuple(stop_strings)) else content + turn_end


def trajectory_from_messages(renderer: ChatRenderer, task: Task, prompt: Sequence[Message],
                             continuation: Sequence[Message],
                             stop_strings: Sequence[str]) -> Trajectory:
    """Tokenise `prompt + continuation` into a Trajectory (actions = assistant messages)."""
    if not continuation or continuation[0].role != "assistant":
        raise ValueError("a demonstration must start with an assistant message")
    history = list(prompt)
    traj = Trajectory(task=task, prompt_ids=renderer.prompt_ids(history), status=Status.DONE)
    starts = [i for i, m in enumerate(continuation) if m.role == "assistant"]
    for n, i in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(continuation)
        message = continuation[i]
        text = _action_text(message.content, stop_strings, renderer.turn_end)
        ids = renderer.encode(text)
        observations = list(continuation[i + 1 : end])
        before = list(history)
        history.append(Message("assistant", renderer.content_of(text), message.tool_calls))
        history.extend(observations)
        obs_ids = renderer.observation_ids(before, text, history, final=end == len(continuation))
        traj.turns.append(Turn(action_ids=ids, action_logprobs=[0.0] * len(ids),
                               action_text=text, observation_ids=obs_ids,
                               observations=observations, tool_calls=list(message.tool_calls),
                               info={"content": renderer.content_of(text)}))
    return traj

"""Demonstrations as trajectories: the same token layout the rollout runner writes.

An oracle conversation (assistant and tool messages after the prompt) becomes a
Trajectory whose action ids are what the policy would have sampled, and whose
observation ids are the template deltas. SFT on these trains exactly the tokens RL
later samples:

- The prompt is what the runner starts from: the env's opening messages and the tools it
  offers (`episode_openings`), rendered by the same ChatRenderer.
- Each action ends the way the policy is asked to end it (the renderer's
  `stop_strings`): a tool-call turn ends right after the tokens of `</tool_call>`,
  however many there are, and the rest of the template (`<|im_end|>` ...) is masked
  observation; a final answer gets the end-of-turn text. A message that goes on after a
  stop string is refused: the sampler would have stopped there, so the policy could
  never produce it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tracerl.envs.base import EnvFactory, tool_schemas
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.sync import run_sync
from tracerl.types import Message, Status, Task, Trajectory, Turn


def action_text(content: str, stop_strings: Sequence[str], turn_end: str) -> str:
    """The action the policy samples for an assistant message with this content."""
    ends = [content.find(s) + len(s) for s in stop_strings if s in content]
    if not ends:
        return content + turn_end
    end = min(ends)
    if end < len(content):
        raise ValueError(
            f"demonstration continues after a stop string ({content[end:end + 40]!r}); the "
            f"policy's turn ends at {'/'.join(stop_strings)}, so it could never sample this")
    return content


def episode_openings(env_factory: EnvFactory, tasks: Sequence[Task]
                     ) -> list[tuple[list[Message], list[dict[str, Any]]]]:
    """For each task, the messages and tool schemas the runner's episode starts from."""

    async def run() -> list[tuple[list[Message], list[dict[str, Any]]]]:
        env = env_factory()
        try:
            return [(list(await env.reset(task)), tool_schemas(env)) for task in tasks]
        finally:
            await env.close()

    return run_sync(run())


def trajectory_from_messages(renderer: ChatRenderer, task: Task, prompt: Sequence[Message],
                             continuation: Sequence[Message],
                             tools: Sequence[Mapping[str, Any]] = ()) -> Trajectory:
    """Tokenise `prompt + continuation` into a Trajectory (actions = assistant messages);
    `tools` are the schemas described in the prompt, as the env offered them."""
    if not continuation or continuation[0].role != "assistant":
        raise ValueError("a demonstration must start with an assistant message")
    history = list(prompt)
    schemas = [dict(t) for t in tools]
    traj = Trajectory(task=task, prompt_ids=renderer.prompt_ids(history, schemas),
                      status=Status.DONE, tools=schemas)
    starts = [i for i, m in enumerate(continuation) if m.role == "assistant"]
    for n, i in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(continuation)
        message = continuation[i]
        text = action_text(message.content, renderer.stop_strings, renderer.turn_end)
        ids = renderer.encode(text)
        observations = list(continuation[i + 1 : end])
        before = list(history)
        history.append(Message("assistant", renderer.content_of(text), message.tool_calls))
        history.extend(observations)
        obs_ids = renderer.observation_ids(before, text, history,
                                           final=end == len(continuation), tools=schemas)
        traj.turns.append(Turn(action_ids=ids, action_logprobs=[0.0] * len(ids),
                               action_text=text, observation_ids=obs_ids,
                               observations=observations, tool_calls=list(message.tool_calls),
                               info={"content": renderer.content_of(text)}))
    return traj

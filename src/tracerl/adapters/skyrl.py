"""SkyRL-gym text environments <-> tracerl Envs, both ways.

SkyRL-gym's text env (`skyrl_gym.envs.base_text_env.BaseTextEnv`) is synchronous:

    env = EnvClass(env_config, extras)        # extras: reward_spec.ground_truth, extra_info, ...
    messages, metadata = env.init(prompt)     # prompt: OpenAI chat messages
    out = env.step(action)                    # {observations, reward, done, metadata,
                                              #  postprocessed_action (optional)}
    env.close()

The reward is the env's, per step. `FromSkyRL` runs such an env as a tracerl Env (its
step in a worker thread, so a slow env does not stall the other episodes): observations
become Messages, the step reward the turn reward, `done` the end of the episode, and
`env_reward` (the sum of turn rewards) the outcome Reward. `skyrl_family` builds a
TaskFamily from tasks (e.g. read by tracerl.adapters.datasets from SkyRL/verl data),
passing each task's answer as `reward_spec.ground_truth` the way SkyRL's datasets do.

`ToSkyRL` goes the other way: a tracerl Env and Reward behind SkyRL's signature, for
SkyRL's generator (or anything that drives text envs). Its step reward is the env's turn
reward, plus the outcome Reward on the episode so far when the episode ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from tracerl.envs.base import Env, EnvFactory, StepResult
from tracerl.envs.family import TaskListFamily
from tracerl.rewards.base import Reward
from tracerl.rewards.compose import PerTurn
from tracerl.types import Message, Task, Trajectory, Turn


class TextEnv(Protocol):
    """What tracerl needs of a SkyRL-gym text env."""

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        ...

    def step(self, action: str) -> dict[str, Any]: ...

    def close(self) -> None: ...


TextEnvMaker = Callable[[Any, dict[str, Any]], TextEnv]
"""`(env_config, extras) -> env`: a SkyRL env class is one."""


def extras_of(task: Task) -> dict[str, Any]:
    """The `extras` SkyRL passes an env for a dataset row: the task's metadata, with the
    answer as `reward_spec.ground_truth`."""
    extras = dict(task.metadata)
    spec = dict(extras.get("reward_spec") or {"method": "rule"})
    spec.setdefault("ground_truth", task.answer)
    extras["reward_spec"] = spec
    extras.setdefault("extra_info", {})
    return extras


def _observations(raw: Any) -> list[Message]:
    if not isinstance(raw, list):
        raise TypeError(f"SkyRL step observations must be a list of messages, got {raw!r:.80}")
    return [Message.from_openai(m) for m in raw]


class FromSkyRL:
    """A SkyRL-gym text env as a tracerl Env (one env object per episode)."""

    def __init__(self, make: TextEnvMaker, env_config: Any = None) -> None:
        self.make = make
        self.env_config = env_config
        self.env: TextEnv | None = None

    async def reset(self, task: Task) -> list[Message]:
        if self.env is not None:
            await self.close()
        self.env = self.make(self.env_config, extras_of(task))
        prompt = [m.to_openai() for m in task.messages]
        messages, _ = self.env.init(prompt)
        return [Message.from_openai(m) for m in messages]

    async def step(self, action_text: str) -> StepResult:
        if self.env is None:
            raise RuntimeError("FromSkyRL.step called before reset")
        out = await asyncio.to_thread(self.env.step, action_text)
        reward = out.get("reward")
        info = dict(out.get("metadata") or {})
        if out.get("postprocessed_action") is not None:
            info["postprocessed_action"] = out["postprocessed_action"]
        return StepResult(observations=_observations(out.get("observations", [])),
                          reward=None if reward is None else float(reward),
                          terminated=bool(out.get("done", False)), info=info)

    async def close(self) -> None:
        if self.env is not None:
            env, self.env = self.env, None
            env.close()


def _turn_reward(trajectory: Trajectory, i: int) -> float:
    return float(trajectory.turns[i].reward or 0.0)


env_reward = PerTurn(_turn_reward, aggregate="sum", name="env_reward")
"""The outcome of a SkyRL env's episode: the sum of its step rewards."""


def skyrl_family(make: TextEnvMaker, train: Sequence[Task], heldout: Sequence[Task],
                 env_config: Any = None, reward: Reward = env_reward,
                 name: str = "skyrl") -> TaskListFamily:
    """A TaskFamily over a SkyRL env class; its outcome reward sums the step rewards."""
    return TaskListFamily(lambda: FromSkyRL(make, env_config), train, heldout, reward,
                          name=name)


class ToSkyRL:
    """A tracerl Env and Reward with SkyRL-gym's text-env signature.

    `make_task(prompt, extras)` builds the Task for an episode (default: the prompt's
    messages, `extras["reward_spec"]["ground_truth"]` as the answer, extras as metadata).
    Each instance runs its own event loop, so the async Env runs under SkyRL's sync calls.
    """

    def __init__(self, factory: EnvFactory, reward: Reward, env_config: Any = None,
                 extras: dict[str, Any] | None = None,
                 make_task: Callable[[list[dict[str, Any]], dict[str, Any]], Task] | None = None,
                 max_turns: int = 8) -> None:
        self.factory = factory
        self.reward = reward
        self.env_config = env_config
        self.extras = dict(extras or {})
        self.make_task = make_task or task_of
        self.max_turns = int(self.extras.get("max_turns", max_turns))
        self.turns = 0
        self._loop = asyncio.new_event_loop()
        self._env: Env | None = None
        self._task: Task | None = None
        self._actions: list[tuple[str, StepResult]] = []

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        self._task = self.make_task(prompt, self.extras)
        self._env = self.factory()
        messages = self._loop.run_until_complete(self._env.reset(self._task))
        self.turns, self._actions = 0, []
        return [m.to_openai() for m in messages], {"task_id": self._task.id}

    def step(self, action: str) -> dict[str, Any]:
        if self._env is None or self._task is None:
            raise RuntimeError("ToSkyRL.step called before init")
        result = self._loop.run_until_complete(self._env.step(action))
        self.turns += 1
        self._actions.append((action, result))
        done = result.terminated or result.truncated or self.turns >= self.max_turns
        reward = float(result.reward or 0.0)
        metadata: dict[str, Any] = {"tool_calls": len(result.tool_calls)}
        if done:
            outcome = self.reward(self._trajectory())
            metadata["outcome_reward"] = outcome
            reward += float(outcome or 0.0)
        return {"observations": [m.to_openai() for m in result.observations],
                "reward": reward, "done": done, "metadata": metadata,
                "postprocessed_action": None}

    def _trajectory(self) -> Trajectory:
        """The episode so far, as the minimal Trajectory a Reward reads (no token ids)."""
        assert self._task is not None
        turns = [Turn(action_ids=[], action_logprobs=[], action_text=a,
                      observations=list(r.observations), tool_calls=list(r.tool_calls),
                      tool_results=list(r.tool_results), reward=r.reward)
                 for a, r in self._actions]
        return Trajectory(task=self._task, prompt_ids=[], turns=turns)

    def close(self) -> None:
        if self._env is not None:
            self._loop.run_until_complete(self._env.close())
            self._env = None
        self._loop.close()


def task_of(prompt: list[dict[str, Any]], extras: dict[str, Any]) -> Task:
    spec = extras.get("reward_spec") or {}
    info = extras.get("extra_info") or {}
    ident = info.get("index", extras.get("task_id", "skyrl"))
    return Task(id=str(ident), messages=tuple(Message.from_openai(m) for m in prompt),
                answer=spec.get("ground_truth"), metadata=dict(extras))


def skyrl_env_class(factory: EnvFactory, reward: Reward, name: str = "TracerlTextEnv",
                    max_turns: int = 8) -> type:
    """A `skyrl_gym` BaseTextEnv subclass running `factory`'s env and `reward` (ToSkyRL),
    constructed as SkyRL constructs envs, `cls(env_config, extras)`, so that
    `skyrl_gym.register(id, entry_point=cls)` and `skyrl_gym.make(id, ...)` accept it.
    Needs the `skyrl-gym` package (tracerl itself does not)."""
    from skyrl_gym.envs.base_text_env import BaseTextEnv  # optional dependency

    def __init__(self: Any, env_config: Any = None, extras: dict[str, Any] | None = None
                 ) -> None:
        BaseTextEnv.__init__(self)
        ToSkyRL.__init__(self, factory, reward, env_config, extras, max_turns=max_turns)

    return type(name, (ToSkyRL, BaseTextEnv), {"__init__": __init__})

"""The multi-turn rollout runner (asyncio).

All live trajectories of all groups advance together: one batched `generate` call
samples the next action of every live trajectory, then every env steps concurrently.
A failure inside one env or reward marks that trajectory `error` (and is counted);
the others go on.

The sampler runs on the event loop's own thread. Sampling and env steps alternate, so a
worker thread (asyncio.to_thread) bought no overlap; it started a second OpenMP team
beside the trainer's in a fresh thread every rollout batch, and sampled 2-3x slower at
two threads on a quiet machine, 1.1x slower at one (docs/benchmarks.md, "Where the
runner samples").

Token accounting per trajectory (token-in, token-out):
    prompt_ids = template(reset messages + the env's tools + generation prompt)
    turn.action_ids = exactly the sampled ids (trained on)
    turn.observation_ids = template delta after the action (masked)
"""

from __future__ import annotations

import asyncio
import copy
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tracerl.envs.base import Env, EnvFactory, StepResult, tool_schemas
from tracerl.policy.sampling import KeepsContexts, Sample, Sampler, SamplingParams
from tracerl.rewards.base import BatchReward, Reward, reward_fault
from tracerl.rewards.compose import as_reward
from tracerl.rollout.config import RolloutConfig
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.sync import run_sync
from tracerl.types import Group, Message, Status, Task, Trajectory, Turn, assistant_message

ENTROPY_SUM = "policy/entropy_sum"
"""Trajectory.metrics key: the summed entropy of its sampled tokens' distributions."""


class ReplayMismatchError(RuntimeError):
    """Replaying a prefix's actions in a fresh env did not reproduce its observations."""


@dataclass(frozen=True)
class Prefix:
    """The state after the first `turns` turns of `trajectory` (a branch point)."""

    trajectory: Trajectory
    turns: int

    def __post_init__(self) -> None:
        if not 0 <= self.turns <= len(self.trajectory.turns):
            raise ValueError(f"Prefix.turns must be in 0..{len(self.trajectory.turns)}, "
                             f"got {self.turns}")


@dataclass
class _Episode:
    env: Env
    trajectory: Trajectory
    messages: list[Message]
    context: list[int]
    live: bool = True
    version: int = 0
    """The policy version of the sampler's weights for the next turn."""

    @property
    def used(self) -> int:
        return len(self.context) - len(self.trajectory.prompt_ids)


@dataclass
class RolloutStats:
    """Counters for one rollout batch (contained failures included)."""

    trajectories: int = 0
    env_errors: int = 0
    reward_errors: int = 0
    unjudged: int = 0
    sample_seconds: float = 0.0
    env_seconds: float = 0.0
    sampled_tokens: int = 0
    errors: list[str] = field(default_factory=list)


class RolloutRunner:
    """Runs groups of multi-turn trajectories with a Sampler, envs and a reward.

    `config` is fixed for the runner's life; one call may sample a different group size
    or temperature (held-out evaluation, DPO pairs) by passing them to `run`.
    `guard_penalty` subtracts the guard's penalties (blocked or flagged tool calls) from
    the outcome reward. A turn ends at one of `stop_ids` (the policy's one-token stops, a
    fast path) or once its text completes one of the renderer's `stop_strings`, however
    the model tokenised it.

    `context_tokens` (0 = unlimited) is the model's context length. A task whose prompt
    does not fit it is refused: the trajectory is an error that names the task and both
    lengths (never scored, never trained on), not a prompt cut short. An episode whose
    context fills up during the episode ends truncated, with the same note in its error.
    """

    def __init__(self, sampler: Sampler, renderer: ChatRenderer,
                 stop_ids: tuple[int, ...], env_factory: EnvFactory,
                 reward: Reward | Callable[[Trajectory], float | None],
                 config: RolloutConfig, guard_penalty: bool = False,
                 context_tokens: int = 0) -> None:
        self.sampler = sampler
        self.renderer = renderer
        self.stop_ids = stop_ids
        self.env_factory = env_factory
        self.reward = as_reward(reward)
        self.config = RolloutConfig.of(config)
        self.guard_penalty = guard_penalty
        self.context_tokens = context_tokens
        self.stats = RolloutStats()

    def run(self, tasks: list[Task], policy_version: int = 0, *,
            group_size: int | None = None, temperature: float | None = None) -> list[Group]:
        """Synchronous entry point: `asyncio.run(self.arun(...))`, Ctrl-C included
        (tracerl.rollout.sync)."""
        return run_sync(self.arun(tasks, policy_version, group_size=group_size,
                                  temperature=temperature))

    async def arun(self, tasks: list[Task], policy_version: int = 0, *,
                   group_size: int | None = None,
                   temperature: float | None = None) -> list[Group]:
        """`group_size` trajectories per task (default `config.group_size`), sampled at
        `temperature` (default `config.temperature`)."""
        self.stats = RolloutStats()
        cfg = self._settings(group_size, temperature)
        episodes = await asyncio.gather(*(
            self._start(task, g, s, policy_version)
            for g, task in enumerate(tasks) for s in range(cfg.group_size)
        ))
        return await self._drive(episodes, tasks, cfg)

    def _settings(self, group_size: int | None, temperature: float | None) -> RolloutConfig:
        changes: dict[str, float | int] = {}
        if group_size is not None:
            changes["group_size"] = group_size
        if temperature is not None:
            changes["temperature"] = temperature
        return replace(self.config, **changes) if changes else self.config

    def run_from(self, prefixes: list[Prefix], samples: int,
                 policy_version: int = 0) -> list[Group]:
        """Synchronous entry point of `arun_from`."""
        return run_sync(self.arun_from(prefixes, samples, policy_version))

    async def arun_from(self, prefixes: list[Prefix], samples: int,
                        policy_version: int = 0) -> list[Group]:
        """Branch `samples` continuations from each prefix (Monte Carlo from a mid-episode
        state, as VinePPO does). Group g holds the continuations of prefixes[g]; each
        continuation is a whole trajectory (the prefix's turns, then new ones), so the
        outcome Reward judges it exactly like a fresh rollout."""
        self.stats = RolloutStats()
        episodes = await asyncio.gather(*(
            self._start_from(p, g, s, policy_version)
            for g, p in enumerate(prefixes) for s in range(samples)
        ))
        return await self._drive(episodes, [p.trajectory.task for p in prefixes], self.config)

    async def _drive(self, episodes: list[_Episode], tasks: list[Task],
                     cfg: RolloutConfig) -> list[Group]:
        while any(ep.live for ep in episodes):
            await self._advance([ep for ep in episodes if ep.live], cfg)
        if isinstance(self.sampler, KeepsContexts):
            self.sampler.release_contexts()  # the episodes are over; the memory is the update's
        await asyncio.gather(*(self._close(ep) for ep in episodes))
        self._judge([ep.trajectory for ep in episodes])
        self.stats.trajectories = len(episodes)
        groups = []
        for g, task in enumerate(tasks):
            members = [ep.trajectory for ep in episodes if ep.trajectory.group_index == g]
            groups.append(Group(task=task, trajectories=members))
        return groups

    async def _start_from(self, prefix: Prefix, group: int, sample: int,
                          version: int) -> _Episode:
        """A fresh env replayed through the prefix's actions; the context is the prefix's
        recorded token ids (token-in, token-out: nothing is re-tokenised). An env whose
        replay answers differently from the recording cannot reproduce the state, so the
        branch is an infrastructure error (contained), not a silent wrong estimate."""
        src = prefix.trajectory
        turns = src.turns[: prefix.turns]
        ep = await self._start(src.task, group, sample, version)
        ep.trajectory.prompt_ids = list(src.prompt_ids)
        ep.context = list(src.prompt_ids)
        try:
            for turn in turns:
                result = await ep.env.step(turn.action_text)
                if [m.content for m in result.observations] != [
                        m.content for m in turn.observations]:
                    raise ReplayMismatchError(
                        f"task {src.task.id}: replaying turn {len(ep.trajectory.turns)} gave "
                        "different observations than recorded (env not deterministic?)")
                ep.trajectory.turns.append(copy.copy(turn))
                ep.context.extend(turn.action_ids + turn.observation_ids)
                ep.messages.append(assistant_message(turn))
                ep.messages.extend(turn.observations)
                if result.terminated or result.truncated:
                    ep.live = False
                    ep.trajectory.status = Status.DONE if result.terminated else Status.TRUNCATED
        except Exception as e:  # contained like any env failure
            self._fail(ep, f"replay of prefix failed: {type(e).__name__}: {e}",
                       traceback.format_exc())
        if len(ep.trajectory.turns) >= self.config.max_turns and ep.live:
            ep.live = False
            ep.trajectory.status = Status.TRUNCATED
        return ep

    async def _start(self, task: Task, group: int, sample: int, version: int) -> _Episode:
        env = self.env_factory()
        messages = await env.reset(task)
        tools = tool_schemas(env)
        prompt = self.renderer.prompt_ids(messages, tools)
        traj = Trajectory(task=task, prompt_ids=prompt, group_index=group,
                          sample_index=sample, policy_version=version, tools=tools)
        ep = _Episode(env, traj, list(messages), list(prompt), version=version)
        if self.context_tokens and len(prompt) >= self.context_tokens:
            self._fail(ep, f"task {task.id}: its prompt ({len(prompt)} tokens, tool "
                       f"descriptions included) does not fit the model's context of "
                       f"{self.context_tokens} tokens; refused, not truncated", "")
        return ep

    def _room(self, ep: _Episode, cfg: RolloutConfig) -> int:
        """Tokens the next turn may sample: the turn and response budgets, and what is
        left of the model's context."""
        room = min(cfg.max_turn_tokens, cfg.max_response_tokens - ep.used)
        if self.context_tokens:
            room = min(room, self.context_tokens - len(ep.context))
        return room

    def _sample(self, live: list[_Episode], cfg: RolloutConfig) -> list[Sample]:
        """One batched sampler call for the next action of every episode in `live`."""
        budgets = [self._room(ep, cfg) for ep in live]
        params = SamplingParams(cfg.temperature, cfg.top_p, cfg.max_turn_tokens, self.stop_ids,
                                self.renderer.stop_strings)
        t0 = time.perf_counter()
        # On this thread, not asyncio.to_thread: see the module docstring.
        samples = self.sampler.generate([ep.context for ep in live], params, budgets)
        self.stats.sample_seconds += time.perf_counter() - t0
        return samples

    async def _advance(self, live: list[_Episode], cfg: RolloutConfig) -> None:
        for ep in live:
            if self.context_tokens and len(ep.context) >= self.context_tokens:
                ep.live = False  # the model's context is full: the episode stops here
                ep.trajectory.status = Status.TRUNCATED
                ep.trajectory.error = (f"context of {self.context_tokens} tokens full after "
                                       f"{len(ep.trajectory.turns)} turns")
        live = [ep for ep in live if ep.live]
        if not live:
            return
        samples = self._sample(live, cfg)
        t0 = time.perf_counter()
        await asyncio.gather(*(self._step(ep, s, cfg)
                               for ep, s in zip(live, samples, strict=True)))
        self.stats.env_seconds += time.perf_counter() - t0

    async def _step(self, ep: _Episode, sample: Sample, cfg: RolloutConfig) -> None:
        started = time.time()
        text = self.renderer.decode(sample.ids)
        turn = Turn(action_ids=sample.ids, action_logprobs=sample.logprobs, action_text=text,
                    text=self.renderer.readable(sample.ids), started_at=started,
                    info={"content": self.renderer.content_of(text), "finish": sample.finish},
                    policy_version=ep.version)
        ep.trajectory.turns.append(turn)
        ep.context.extend(sample.ids)
        self.stats.sampled_tokens += len(sample.ids)
        if sample.entropy is not None:
            m = ep.trajectory.metrics
            m[ENTROPY_SUM] = m.get(ENTROPY_SUM, 0.0) + sample.entropy
        try:
            result = await ep.env.step(text)
            self._observe(ep, turn, result, cfg)
        except Exception as e:  # contained: this trajectory is an infrastructure error
            self._fail(ep, f"env.step raised {type(e).__name__}: {e}", traceback.format_exc())
        turn.ended_at = time.time()

    def _observe(self, ep: _Episode, turn: Turn, result: StepResult,
                 cfg: RolloutConfig) -> None:
        turn.observations = list(result.observations)
        turn.tool_calls = list(result.tool_calls)
        turn.tool_results = list(result.tool_results)
        turn.reward = self._checked(ep.trajectory, result.reward, "env turn reward")
        before = list(ep.messages)
        ep.messages.append(assistant_message(turn))
        ep.messages.extend(result.observations)
        ended = result.terminated or result.truncated
        out_of_budget = (len(ep.trajectory.turns) >= cfg.max_turns
                         or ep.used >= cfg.max_response_tokens)
        if ended or out_of_budget:
            ep.live = False
            ep.trajectory.status = Status.DONE if result.terminated else Status.TRUNCATED
            if not result.terminated:
                return  # no closing text: the conversation stops where the budget did
        obs = self.renderer.observation_ids(before, turn.action_text, ep.messages,
                                            final=not ep.live, tools=ep.trajectory.tools)
        turn.observation_ids = obs
        ep.context.extend(obs)
        if ep.live and ep.used >= cfg.max_response_tokens:
            ep.live = False
            ep.trajectory.status = Status.TRUNCATED

    def _fail(self, ep: _Episode, message: str, detail: str) -> None:
        ep.live = False
        ep.trajectory.status = Status.ERROR
        ep.trajectory.error = message
        self.stats.env_errors += 1
        self.stats.errors.append(detail or message)

    async def _close(self, ep: _Episode) -> None:
        try:
            await ep.env.close()
        except Exception as e:
            self.stats.errors.append(f"env.close raised {type(e).__name__}: {e}")

    def _judge(self, trajectories: list[Trajectory]) -> None:
        """Outcome rewards for finished trajectories: one `batch` call for all of them when
        the Reward offers one (a sandboxed checker then starts once, not once per sample),
        else one call each. Failed rollouts are not judged."""
        judged = [t for t in trajectories if t.status is not Status.ERROR]
        scores = self._batch_scores(judged) if isinstance(self.reward, BatchReward) else None
        for i, traj in enumerate(judged):
            score = scores[i] if scores is not None else self._score(traj)
            traj.outcome_reward = self._checked(traj, score, f"reward {self.reward.name}")
        for traj in trajectories:
            if traj.status is Status.ERROR:
                traj.outcome_reward = None
            self._settle(traj)

    def _batch_scores(self, judged: list[Trajectory]) -> list[float | None] | None:
        """The batch's scores, or None (score one by one) when `batch` failed."""
        if not judged:
            return []
        try:
            scores = list(self.reward.batch(judged))  # type: ignore[attr-defined]
            if len(scores) != len(judged):
                raise ValueError(f"batch returned {len(scores)} scores for {len(judged)} "
                                 "trajectories")
            return scores
        except Exception as e:  # contained: retried per trajectory, which isolates the cause
            self.stats.errors.append(f"reward {self.reward.name}.batch raised "
                                     f"{type(e).__name__}: {e}; scoring one by one")
            return None

    def _score(self, traj: Trajectory) -> float | None:
        try:
            return self.reward(traj)
        except Exception as e:  # an unjudgeable sample is masked, never scored 0
            traj.error = f"reward {self.reward.name} raised {type(e).__name__}: {e}"
            self.stats.reward_errors += 1
            self.stats.errors.append(traceback.format_exc())
            return None

    def _checked(self, traj: Trajectory, value: float | None, source: str) -> float | None:
        """`value` as a float, or None (unjudged, counted as a reward error) when it is
        no number a loss may see: NaN, infinite or absurdly large (rewards.base)."""
        fault = reward_fault(value)
        if fault is None:
            return None if value is None else float(value)
        traj.error = f"{source} returned {value!r}: {fault}"
        self.stats.reward_errors += 1
        self.stats.errors.append(traj.error)
        return None

    def _settle(self, traj: Trajectory) -> None:
        traj.reward_parts[self.reward.name] = traj.outcome_reward
        penalty = sum(r.guard_penalty for t in traj.turns for r in t.tool_results)
        if self.guard_penalty and penalty and traj.outcome_reward is not None:
            traj.reward_parts["guard_penalty"] = -penalty
            traj.outcome_reward -= penalty
        if traj.outcome_reward is None:
            self.stats.unjudged += 1
        traj.metrics.update(trajectory_metrics(traj))


def trajectory_metrics(traj: Trajectory) -> dict[str, float]:
    """Per-trajectory counts: turns, tokens, tool calls and their error classes."""
    results = [r for t in traj.turns for r in t.tool_results]
    out: dict[str, float] = {
        "turns": float(len(traj.turns)),
        "action_tokens": float(traj.num_action_tokens),
        "tool_calls": float(len(results)),
        "tool_errors": float(sum(not r.ok for r in results)),
    }
    for r in results:
        if r.error:
            out[f"tool_error/{r.error}"] = out.get(f"tool_error/{r.error}", 0.0) + 1.0
        for d in r.guard:
            if d.findings or d.errors:
                key = f"guard/{d.action.value}"
                out[key] = out.get(key, 0.0) + 1.0
    return out

"""Recording served calls as episodes, and finished episodes as Trajectories.

Every chat completion is a `Call`: the context ids the sampler continued, the sampled ids
and log-probabilities of each choice, and the reply returned for it. Calls carry the
client's episode id (`extra_body={"episode_id": ...}` or the `X-Episode-Id` header; a
call without one is an episode of its own, named by its completion id). Within an
episode a call that continues an earlier reply links to it (tracerl.serve.history), so
an episode is a tree of calls; each reply nobody continued ends one Trajectory, whose
tokens are exactly the recorded ones (prompt ids, then per turn the sampled ids and the
rendered delta up to the next call's context).

When the client posts the episode's reward (or the server's reward function scores it),
the episode's trajectories become ready; `take()` hands them to the learner, which
groups them by task id (`group_by_task`).

State changes are validated before they happen (issue 32): an episode is created only
when its first call has been sampled (a refused or failed request leaves nothing), and
`finish` checks the reward (a number of sane size, rewards.base.reward_fault) and that
a reward function exists before it closes the episode, so a refused reward post keeps
the episode open for a retry. A reward function that returns NaN, inf or an absurd
value leaves the episode unjudged (counted in `reward_errors`).

Calls without an episode id ("anonymous": plain inference) are kept apart, with a cap of
their own (`max_anonymous`), so a flood of them can never evict an episode a client
named; `record_anonymous=False` does not record them at all (counted as `unrecorded`).

A history mismatch (history.py) is handled by `on_mismatch`:
- "split" (default): served from a fresh rendering of the messages as given, which
  starts a new root in the episode; each root's path is a token-exact trajectory of its
  own, with the episode's reward;
- "drop": served the same way, but the whole episode is marked an error: its
  trajectories reach the learner unjudged (left out of the update and counted);
- "reject": answered with HTTP 409 (`code: history_mismatch`) and nothing recorded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from tracerl.policy.sampling import Sample
from tracerl.rewards.base import reward_fault
from tracerl.rollout.render import ChatRenderer, TemplateMismatchError
from tracerl.types import Group, Message, Status, Task, Trajectory, Turn

OnMismatch = Literal["split", "drop", "reject"]
RewardFn = Callable[[Trajectory], float | None]


@dataclass
class Call:
    """One served chat completion."""

    id: str
    messages: tuple[Message, ...]
    """The messages as the client sent them (what later histories are matched against)."""
    rendered: list[Message]
    """The same conversation as rendered: replies of this server hold their exact text."""
    tools: list[dict]
    """Tool schemas described to the policy."""
    context: list[int]
    """The ids the sampler continued (prompt, or the parent's ids plus the rendered delta,
    then any forced tool-call opening)."""
    parent: Link | None
    """The reply this call continues (None: a root)."""
    samples: list[Sample]
    texts: list[str]
    """Per choice: the assistant text the model wrote (forced opening + decoded sample)."""
    replies: list[Message | None]
    """Per choice: the message returned (None: never delivered, e.g. a dropped stream)."""
    policy_version: int
    started_at: float = 0.0
    ended_at: float = 0.0


@dataclass(frozen=True)
class Link:
    """Choice `choice` of a recorded call: the point a later request continues from."""

    call: Call
    choice: int


@dataclass
class Episode:
    id: str
    task_id: str | None
    calls: list[Call] = field(default_factory=list)
    mismatches: int = 0
    dropped: bool = False
    """on_mismatch="drop" fired: every trajectory of the episode is an error."""


@dataclass
class RecorderStats:
    calls: int = 0
    episodes: int = 0
    finished: int = 0
    mismatches: int = 0
    rejected: int = 0
    dropped_episodes: int = 0
    evicted: int = 0
    """Open episodes with an id forgotten to bound memory (the oldest first)."""
    evicted_anonymous: int = 0
    """Open anonymous episodes (calls without an episode id) forgotten, oldest first."""
    unrecorded: int = 0
    """Anonymous calls served but not recorded (record_anonymous off)."""
    reward_errors: int = 0
    undelivered: int = 0
    """Choices sampled but never delivered (the client left mid-stream): not trained on."""


class Recorder:
    """Episodes by id; thread-safe (the server's loop records, a learner takes)."""

    def __init__(self, renderer: ChatRenderer, on_mismatch: OnMismatch = "split",
                 reward: RewardFn | None = None, max_open: int = 10_000,
                 max_anonymous: int = 1_000) -> None:
        if on_mismatch not in ("split", "drop", "reject"):
            raise ValueError(f"on_mismatch must be split, drop or reject, got {on_mismatch!r}")
        if max_open < 1 or max_anonymous < 1:
            raise ValueError("max_open and max_anonymous must be >= 1")
        self.renderer = renderer
        self.on_mismatch = on_mismatch
        self.reward = reward
        self.max_open = max_open
        self.max_anonymous = max_anonymous
        self.lock = threading.RLock()
        self.open: OrderedDict[str, Episode] = OrderedDict()
        """Episodes a client named, least recently used first."""
        self.anonymous: OrderedDict[str, Episode] = OrderedDict()
        """Episodes of one call without an id (named by the completion id)."""
        self.ready: list[Trajectory] = []
        self.stats = RecorderStats()

    def episode(self, episode_id: str, task_id: str | None, anonymous: bool = False
                ) -> Episode:
        """The open episode `episode_id`, created (and the oldest beyond the cap of its
        kind forgotten, counted) if there is none."""
        with self.lock:
            ep = self.get(episode_id)
            if ep is None:
                kind, cap = ((self.anonymous, self.max_anonymous) if anonymous
                             else (self.open, self.max_open))
                ep = kind[episode_id] = Episode(episode_id, task_id)
                self.stats.episodes += 1
                while len(kind) > cap:
                    kind.popitem(last=False)
                    if anonymous:
                        self.stats.evicted_anonymous += 1
                    else:
                        self.stats.evicted += 1
            elif episode_id in self.open:
                self.open.move_to_end(episode_id)
            return ep

    def add(self, episode_id: str, task_id: str | None, call: Call, anonymous: bool = False,
            mismatch: bool = False) -> Episode:
        """Record a served call (and, when it was a mismatch, count it): the one place an
        episode is created, once its first call has succeeded."""
        with self.lock:
            ep = self.episode(episode_id, task_id, anonymous)
            if mismatch:
                self.mismatch(ep)
            ep.calls.append(call)
            self.stats.calls += 1
            self.stats.undelivered += sum(r is None for r in call.replies)
            return ep

    def mismatch(self, episode: Episode) -> None:
        """Count a mismatch (the caller has already served or refused it)."""
        with self.lock:
            episode.mismatches += 1
            self.stats.mismatches += 1
            if self.on_mismatch == "reject":
                self.stats.rejected += 1
            elif self.on_mismatch == "drop" and not episode.dropped:
                episode.dropped = True
                self.stats.dropped_episodes += 1

    def get(self, episode_id: str) -> Episode | None:
        with self.lock:
            return self.open.get(episode_id) or self.anonymous.get(episode_id)

    def calls(self, episode_id: str) -> list[Call]:
        """A snapshot of an open episode's calls (empty if there is none)."""
        with self.lock:
            ep = self.get(episode_id)
            return list(ep.calls) if ep is not None else []

    def finish(self, episode_id: str, reward: float | None, use_reward_fn: bool = False
               ) -> list[Trajectory]:
        """Close an episode with `reward` (or, with `use_reward_fn`, the server's reward
        function on each trajectory); its trajectories become ready. KeyError if unknown;
        ValueError (and the episode stays open) for a reward that is no finite number of
        sane size, or `use_reward_fn` without a reward function."""
        if use_reward_fn and self.reward is None:
            raise ValueError("this server has no reward function: post {'reward': x}")
        fault = None if use_reward_fn else reward_fault(reward)
        if fault is not None:
            raise ValueError(f"'reward' {reward!r} is refused: {fault}")
        with self.lock:
            kind = self.open if episode_id in self.open else self.anonymous
            ep = kind.pop(episode_id)
        try:
            trajs = trajectories(ep, self.renderer)
        except BaseException:
            with self.lock:  # nothing is lost: the episode is open again
                kind.setdefault(episode_id, ep)
            raise
        for t in trajs:
            if ep.dropped:
                t.status, t.error = Status.ERROR, "history mismatch (on_mismatch=drop)"
                t.outcome_reward = None
            elif use_reward_fn:
                t.outcome_reward = self._score(t)
            else:
                t.outcome_reward = None if reward is None else float(reward)
            t.reward_parts["episode"] = t.outcome_reward
        with self.lock:
            self.stats.finished += 1
            self.ready.extend(trajs)
        return trajs

    def _score(self, t: Trajectory) -> float | None:
        assert self.reward is not None  # finish refused it before
        try:
            value = self.reward(t)
            fault = reward_fault(value)
            error = None if fault is None else f"reward returned {value!r}: {fault}"
        except Exception as e:  # an unjudgeable episode is masked, never scored 0
            value, error = None, f"reward raised {type(e).__name__}: {e}"
        if error is not None:
            t.error = error
            with self.lock:
                self.stats.reward_errors += 1
            return None
        return None if value is None else float(value)

    def give_back(self, trajs: list[Trajectory]) -> None:
        """Trajectories a failed update took: ready again, ahead of newer ones."""
        with self.lock:
            self.ready[:0] = trajs

    def take(self) -> list[Trajectory]:
        """Every ready trajectory, once."""
        with self.lock:
            out, self.ready = self.ready, []
            return out


def _leaves(ep: Episode) -> list[Link]:
    continued = {(id(c.parent.call), c.parent.choice) for c in ep.calls if c.parent}
    return [Link(c, k) for c in ep.calls for k in range(len(c.samples))
            if c.replies[k] is not None and (id(c), k) not in continued]


def _path(leaf: Link) -> list[Link]:
    path = [leaf]
    while path[0].call.parent is not None:
        path.insert(0, path[0].call.parent)
    return path


def trajectories(ep: Episode, renderer: ChatRenderer) -> list[Trajectory]:
    """One Trajectory per reply nobody continued, in call order (rewards unset)."""
    return [trajectory(_path(leaf), ep, renderer, i) for i, leaf in enumerate(_leaves(ep))]


def _turn(link: Link, renderer: ChatRenderer) -> Turn:
    call, k = link.call, link.choice
    sample, reply = call.samples[k], call.replies[k]
    assert reply is not None
    return Turn(action_ids=list(sample.ids), action_logprobs=list(sample.logprobs),
                action_text=renderer.decode(sample.ids), text=renderer.readable(sample.ids),
                tool_calls=list(reply.tool_calls), started_at=call.started_at,
                ended_at=call.ended_at,
                info={"content": renderer.content_of(call.texts[k]), "finish": sample.finish,
                      "call_id": call.id})


def trajectory(path: list[Link], ep: Episode, renderer: ChatRenderer,
               index: int = 0) -> Trajectory:
    """The Trajectory of a path of calls: the root's context is the prompt; each turn's
    observation ids are the next call's context after this call's sampled ids."""
    root = path[0].call
    task = Task(id=ep.task_id or ep.id, messages=tuple(root.rendered),
                metadata={"episode_id": ep.id})
    traj = Trajectory(task=task, prompt_ids=list(root.context), tools=list(root.tools),
                      policy_version=root.policy_version, sample_index=index)
    for link, nxt in zip(path, [*path[1:], None], strict=True):
        turn = _turn(link, renderer)
        if nxt is not None:
            start = len(link.call.context) + len(turn.action_ids)
            turn.observation_ids = nxt.call.context[start:]
            turn.observations = nxt.call.rendered[len(link.call.rendered) + 1:]
        traj.turns.append(turn)
    last, leaf = traj.turns[-1], path[-1]
    final = last.info["finish"] == "stop" and not last.tool_calls
    traj.status = Status.DONE if final else Status.TRUNCATED
    if final:  # the closing template text, as the rollout runner appends it
        before = leaf.call.rendered
        after = [*before, Message("assistant", last.info["content"])]
        try:
            last.observation_ids = renderer.observation_ids(
                before, leaf.call.texts[leaf.choice], after, final=True, tools=traj.tools)
        except TemplateMismatchError:
            last.observation_ids = []
    traj.metrics.update({"turns": float(len(traj.turns)),
                         "action_tokens": float(traj.num_action_tokens),
                         "tool_calls": float(sum(len(t.tool_calls) for t in traj.turns)),
                         "tool_errors": 0.0})
    return traj


def group_by_task(trajs: list[Trajectory]) -> list[Group]:
    """Groups of trajectories that share a task id (in first-seen order), indexed."""
    by_task: dict[str, list[Trajectory]] = {}
    for t in trajs:
        by_task.setdefault(t.task.id, []).append(t)
    groups = []
    for g, members in enumerate(by_task.values()):
        for s, t in enumerate(members):
            t.group_index, t.sample_index = g, s
        groups.append(Group(task=members[0].task, trajectories=members))
    return groups

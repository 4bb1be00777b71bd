"""`doors`: a long-horizon corridor with a sparse reward and a free filler action.

Built to test turn-level against trajectory-level credit (docs/credit.md). A task is a
corridor of `length` doors (16 to 20 by default), each showing a sign. Each turn the
agent answers with one character:

- the key the sign asks for opens the door, and the next door's sign is shown;
- `.` waits: it costs nothing and changes nothing (the same sign is shown again), so
  the filler-action rate of a policy is measurable on its own;
- anything else is a mistake: the door stays shut (the same sign again), and after
  more than `slack` mistakes the episode fails.

Signs come in two kinds. An easy sign is a lowercase key (`a`..`d`: press it); a hard
sign is an uppercase letter whose key is the next one round the ring (`A` -> `b`,
`D` -> `a`). The reward is 1.0 only when the last door opens, so an episode of 16 or
more decisions ends in one bit. The only limit on filler is the runner's turn budget
(`rl.max_turns`; `max_turns` below is the family's suggestion, twice the longest corridor).

Ground truth, for scoring step evaluators: `value(trajectory, k)` is the probability of
success from the state before turn k for a reference policy that makes a mistake at
each door with probability `error_rate` (filler does not change it: it is free), in
closed form (a negative binomial tail). A turn's true advantage is the change of that
value: > 0 for an opened door, exactly 0 for filler, < 0 for a mistake, whatever the
error rate. `subgoal(trajectory, k)` is the calibrated per-turn score that follows
from it (1.0 opened, 0.5 filler, 0.0 mistake); `hard(trajectory, k)` says whether the
door faced at turn k had a hard sign (for evaluators that are right only on easy ones).

Demonstrations wait before a door with probability `filler_prob` and make mistakes
(`mistake_prob` on easy doors, `hard_mistake_prob` on hard ones, at most `slack` per
demonstration, so each still succeeds): the SFT cold start fails often and RL has
mistakes to remove and filler to keep or drop.

Splits: a task is held out iff the first byte of the SHA-256 of its signs is below
256 * HELDOUT_FRACTION, a pure function of the task.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass

from tracerl.envs.base import StepResult
from tracerl.envs.family import Split
from tracerl.envs.registry import FamilyContext, register_family
from tracerl.types import Message, Task, Trajectory

HELDOUT_FRACTION = 0.2
KEYS = "abcd"
FILLER = "."


def key_for(sign: str) -> str:
    """The key a sign asks for: itself when lowercase, the next key round the ring when
    uppercase."""
    if sign in KEYS:
        return sign
    return KEYS[(KEYS.index(sign.lower()) + 1) % len(KEYS)]


def is_hard(sign: str) -> bool:
    return sign.isupper()


def action_of(text: str) -> str:
    """What a turn did: its first non-blank character ('' for a blank turn)."""
    stripped = text.strip()
    return stripped[0] if stripped else ""


@dataclass(frozen=True)
class DoorState:
    """Where an episode stands: doors opened so far and mistakes made."""

    opened: int = 0
    mistakes: int = 0


def advance(state: DoorState, action: str, signs: str) -> DoorState:
    """The state after one action (filler changes nothing; a right key opens the door)."""
    if action == FILLER:
        return state
    if state.opened < len(signs) and action == key_for(signs[state.opened]):
        return DoorState(state.opened + 1, state.mistakes)
    return DoorState(state.opened, state.mistakes + 1)


def walk(trajectory: Trajectory) -> list[DoorState]:
    """The state before turn 0 and after each turn, replayed from the actions."""
    signs = trajectory.task.metadata["signs"]
    out = [DoorState()]
    for turn in trajectory.turns:
        out.append(advance(out[-1], action_of(turn.action_text), signs))
    return out


def success_probability(doors_left: int, mistakes_left: int, error_rate: float) -> float:
    """P(open `doors_left` doors with at most `mistakes_left` more mistakes) when each try
    fails with `error_rate`: the negative-binomial tail sum_j C(n-1+j, j)(1-e)^n e^j."""
    if mistakes_left < 0:
        return 0.0
    if doors_left == 0:
        return 1.0
    q = 1.0 - error_rate
    return sum(math.comb(doors_left - 1 + j, j) * q ** doors_left * error_rate ** j
               for j in range(mistakes_left + 1))


class DoorsEnv:
    """One corridor episode (the Env protocol; no tools: the action is one character)."""

    def __init__(self, slack: int) -> None:
        self.slack = slack
        self.signs = ""
        self.state = DoorState()

    async def reset(self, task: Task) -> list[Message]:
        signs = task.metadata.get("signs")
        if not isinstance(signs, str) or not signs or any(
                s.lower() not in KEYS for s in signs):
            raise ValueError(f"doors task {task.id}: bad signs {signs!r}")
        self.signs, self.state = signs, DoorState()
        return list(task.messages)

    async def step(self, action_text: str) -> StepResult:
        if not self.signs:
            raise RuntimeError("DoorsEnv.step called before reset")
        action = action_of(action_text)
        self.state = advance(self.state, action, self.signs)
        info = {"action": action, "opened": self.state.opened, "mistakes": self.state.mistakes}
        if self.state.opened == len(self.signs):
            return StepResult(terminated=True, info=info)
        if self.state.mistakes > self.slack:
            return StepResult(truncated=True, info=info)
        return StepResult([Message("user", self.signs[self.state.opened])], info=info)

    async def close(self) -> None:
        return None


@dataclass
class DoorsReward:
    """1.0 when the trajectory opened every door within the mistake budget, else 0.0."""

    slack: int
    name: str = "doors_open"

    def __call__(self, trajectory: Trajectory) -> float | None:
        signs = trajectory.task.metadata["signs"]
        opened = False
        for state in walk(trajectory):
            if state.mistakes > self.slack:
                return 0.0
            opened = opened or state.opened == len(signs)
        return float(opened)


@dataclass
class DoorsFamily:
    """The `doors` task family (see module docstring)."""

    min_length: int = 16
    max_length: int = 20
    slack: int = 2
    hard_fraction: float = 0.5
    filler_prob: float = 0.3
    mistake_prob: float = 0.1
    hard_mistake_prob: float = 0.3
    error_rate: float = 0.1
    name: str = "doors"

    def __post_init__(self) -> None:
        if not 1 <= self.min_length <= self.max_length:
            raise ValueError(f"doors: need 1 <= min_length <= max_length, got "
                             f"{self.min_length}..{self.max_length}")
        if self.slack < 0:
            raise ValueError(f"doors: slack must be >= 0, got {self.slack}")
        for knob in ("hard_fraction", "mistake_prob", "hard_mistake_prob"):
            if not 0.0 <= getattr(self, knob) <= 1.0:
                raise ValueError(f"doors: {knob} must be in [0, 1], got {getattr(self, knob)}")
        if not 0.0 <= self.filler_prob < 1.0 or not 0.0 < self.error_rate < 1.0:
            raise ValueError("doors: filler_prob must be in [0, 1) and error_rate in (0, 1)")
        self.reward = DoorsReward(self.slack)

    @property
    def max_turns(self) -> int:
        """A turn budget that leaves room for filler: twice the longest corridor."""
        return 2 * self.max_length

    def tasks(self, split: Split, n: int, seed: int) -> list[Task]:
        if split not in ("train", "heldout"):
            raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
        rng = random.Random(f"doors/{split}/{self.min_length}-{self.max_length}/{seed}")
        out: list[Task] = []
        while len(out) < n:
            length = rng.randint(self.min_length, self.max_length)
            signs = "".join(k.upper() if rng.random() < self.hard_fraction else k
                            for k in (rng.choice(KEYS) for _ in range(length)))
            digest = hashlib.sha256(signs.encode()).digest()
            if (digest[0] < int(256 * HELDOUT_FRACTION)) != (split == "heldout"):
                continue
            out.append(Task(id=f"doors-{split}-{seed}-{len(out)}",
                            messages=(Message("user", signs[0]),),
                            answer=str(length), metadata={"signs": signs}))
        return out

    def make_env(self) -> DoorsEnv:
        return DoorsEnv(self.slack)

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        """Every door opened, with waits and (at most `slack`) mistakes on the way."""
        signs = task.metadata["signs"]
        actions: list[str] = []
        mistakes = 0
        for sign in signs:
            while rng.random() < self.filler_prob:
                actions.append(FILLER)
            p = self.hard_mistake_prob if is_hard(sign) else self.mistake_prob
            if mistakes < self.slack and rng.random() < p:
                actions.append(rng.choice([k for k in KEYS if k != key_for(sign)]))
                mistakes += 1
            actions.append(key_for(sign))
        messages: list[Message] = []
        state = DoorState()
        for a in actions:
            state = advance(state, a, signs)
            messages.append(Message("assistant", a))
            if state.opened < len(signs):
                messages.append(Message("user", signs[state.opened]))
        return messages

    # -- ground truth, for step evaluators ---------------------------------------------
    def value(self, trajectory: Trajectory, turn_index: int) -> float:
        """P(success) from the state before turn `turn_index` (turn_index = len(turns):
        after the last) for the reference policy of `error_rate`."""
        state = walk(trajectory)[turn_index]
        left = len(trajectory.task.metadata["signs"]) - state.opened
        return success_probability(left, self.slack - state.mistakes, self.error_rate)

    def advantage(self, trajectory: Trajectory, turn_index: int) -> float:
        """The true advantage of turn `turn_index`: value after it minus value before."""
        return self.value(trajectory, turn_index + 1) - self.value(trajectory, turn_index)

    def subgoal(self, trajectory: Trajectory, turn_index: int) -> float | None:
        """The calibrated turn score: 1.0 opened a door, 0.5 filler, 0.0 a mistake."""
        if not 0 <= turn_index < len(trajectory.turns):
            return None
        before, after = walk(trajectory)[turn_index:turn_index + 2]
        if after.opened > before.opened:
            return 1.0
        return 0.5 if after == before else 0.0

    def hard(self, trajectory: Trajectory, turn_index: int) -> bool:
        """Whether the door faced at turn `turn_index` shows a hard (uppercase) sign."""
        signs = trajectory.task.metadata["signs"]
        opened = walk(trajectory)[turn_index].opened
        return opened < len(signs) and is_hard(signs[opened])

    def state_key(self, trajectory: Trajectory, turn_index: int) -> str:
        """The state before turn `turn_index` (GiGPO's anchor): doors opened, mistakes."""
        state = walk(trajectory)[turn_index]
        return f"{state.opened}/{state.mistakes}"


def filler_rate(trajectories: list[Trajectory]) -> float:
    """The fraction of all turns that were the filler action."""
    actions = [action_of(t.action_text) for traj in trajectories for t in traj.turns]
    return sum(a == FILLER for a in actions) / len(actions) if actions else float("nan")


@dataclass(frozen=True)
class DoorsConfig:
    """`task.doors.*`: the long-horizon corridor's knobs."""

    min_length: int = 16
    """Fewest doors of a task (decisions of a perfect episode)."""
    max_length: int = 20
    """Most doors of a task (set rl.max_turns >= about 2x this: filler takes turns)."""
    slack: int = 2
    """Mistakes allowed; one more fails the episode."""
    hard_fraction: float = 0.5
    """Share of hard (uppercase, shifted-key) signs."""
    filler_prob: float = 0.3
    """Demonstrations: chance of a wait ('.') before a door (repeatable)."""
    mistake_prob: float = 0.1
    """Demonstrations: chance of a wrong key at an easy door."""
    hard_mistake_prob: float = 0.3
    """Demonstrations: chance of a wrong key at a hard door."""
    error_rate: float = 0.1
    """Ground-truth value: the reference policy's mistake rate per door."""


@register_family("doors", DoorsConfig)
def build_doors(section: DoorsConfig, context: FamilyContext) -> DoorsFamily:
    """A corridor of 16-20 doors, one key per turn, a free filler action, sparse reward."""
    return DoorsFamily(section.min_length, section.max_length, section.slack,
                       section.hard_fraction, section.filler_prob, section.mistake_prob,
                       section.hard_mistake_prob, section.error_rate)

"""`task.family=bfcl`: BFCL v4's categories as a task family (docs/bfcl.md).

    tracerl train task.family=bfcl model=smollm2-135m \\
        'task.bfcl.categories=[simple_python,multiple,parallel,parallel_multiple,irrelevance]'

Tasks are BFCL entries (envs/bfcl/data.py) split by id (envs/bfcl/split.py); the env
runs them as BFCL does (envs/bfcl/env.py); the reward and the per-turn `subgoal` check
are BFCL's verdicts (envs/bfcl/reward.py, check.py); demonstrations come from the
ground truth of train ids (envs/bfcl/demos.py). The functions are always described to
the policy: they differ from task to task, so no policy could learn them otherwise.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tracerl.envs.bfcl.data import BfclEntry, expand_categories, load_entries
from tracerl.envs.bfcl.demos import DEMO_FORMATS, DemoFormat, demonstrable, demonstration
from tracerl.envs.bfcl.env import (
    MAX_STEPS_PER_TURN,
    SINGLE_TURN_FORMS,
    BfclEnv,
    SingleTurn,
    entry_of,
    opening_messages,
)
from tracerl.envs.bfcl.reward import REWARDS, turn_check
from tracerl.envs.bfcl.split import HELDOUT_FRACTION, SIDES, UNSEEN_CLASSES, side
from tracerl.envs.registry import FamilyContext, register_family
from tracerl.types import Message, Task, Trajectory

DEFAULT_CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple",
                      "irrelevance", "live_*", "multi_turn_base", "multi_turn_miss_func",
                      "multi_turn_miss_param", "multi_turn_long_context")


def task_of(entry: BfclEntry) -> Task:
    return Task(id=entry.id, messages=opening_messages(entry),
                metadata={"category": entry.category})


@dataclass
class BfclFamily:
    """BFCL categories with a train / held-out / unseen_api split (module docstring)."""

    categories: tuple[str, ...] = DEFAULT_CATEGORIES
    heldout_fraction: float = HELDOUT_FRACTION
    unseen_classes: tuple[str, ...] = UNSEEN_CLASSES
    max_steps_per_turn: int = MAX_STEPS_PER_TURN
    call_timeout_s: float = 5.0
    demo_format: DemoFormat = "one_per_action"
    train_categories: tuple[str, ...] = ()
    single_turn: SingleTurn = "acknowledged"
    reward_name: str = "bfcl"
    name: str = "bfcl"
    splits: dict[str, list[BfclEntry]] = field(init=False)

    def __post_init__(self) -> None:
        if self.demo_format not in DEMO_FORMATS:
            raise ValueError(f"bfcl: demo_format must be one of {DEMO_FORMATS}, got "
                             f"{self.demo_format!r}")
        if self.single_turn not in SINGLE_TURN_FORMS:
            raise ValueError(f"bfcl: single_turn must be one of {SINGLE_TURN_FORMS}, got "
                             f"{self.single_turn!r}")
        if self.reward_name not in REWARDS:
            raise ValueError(f"bfcl: reward must be one of {sorted(REWARDS)}, got "
                             f"{self.reward_name!r}")
        if not 0.0 < self.heldout_fraction < 1.0:
            raise ValueError(f"bfcl: heldout_fraction must be in (0, 1), got "
                             f"{self.heldout_fraction}")
        self.categories = tuple(expand_categories(self.categories))
        self.train_categories = tuple(expand_categories(self.train_categories or
                                                        self.categories))
        if outside := [c for c in self.train_categories if c not in self.categories]:
            raise ValueError(f"bfcl: train_categories {outside} are not among the loaded "
                             f"categories {list(self.categories)}")
        self.splits = {s: [] for s in SIDES}
        for entry in load_entries(self.categories):
            where = side(entry, self.heldout_fraction, self.unseen_classes)
            if where == "train" and not demonstrable(entry):
                continue  # no accepted answer to learn from (split.py)
            self.splits[where].append(entry)
        self.reward = REWARDS[self.reward_name]()

    @property
    def max_turns(self) -> int:
        """Actions the longest ground-truth episode takes (one per call, one answer per
        user turn)."""
        entries = [e for s in self.splits.values() for e in s]
        return max((sum(len(t) + 1 for t in e.answer) if e.multi_turn
                    else len(e.answer) + 1 for e in entries), default=1)

    def entries(self, split: str) -> list[BfclEntry]:
        if split not in self.splits:
            raise ValueError(f"bfcl: split must be one of {SIDES}, got {split!r}")
        return self.splits[split]

    def tasks(self, split: str, n: int, seed: int) -> list[Task]:
        """`n` tasks of `split` (train, heldout or unseen_api): distinct while the split
        has enough, then drawn again. Training draws only `train_categories`."""
        pool = self.entries(split)
        if split == "train":
            pool = [e for e in pool if e.category in self.train_categories]
        if not pool:
            cats = self.train_categories if split == "train" else self.categories
            raise ValueError(f"bfcl: the {split} split of {list(cats)} is empty")
        rng = random.Random(f"bfcl/{split}/{seed}")
        chosen = rng.sample(pool, n) if n <= len(pool) else [rng.choice(pool) for _ in range(n)]
        return [task_of(e) for e in chosen]

    def _fixed_order(self, split: str, category: str) -> list[BfclEntry]:
        """The split's entries of `category` in a fixed shuffled order (not the run's
        seed: every run and every `tracerl eval` reads the same ids first)."""
        pool = [e for e in self.entries(split) if e.category == category]
        random.Random(f"bfcl/{split}/{category}").shuffle(pool)
        return pool

    def tasks_per_category(self, split: str, n: int) -> list[Task]:
        """Up to `n` distinct tasks of `split` from each category (0 = all of them), in
        category order, the first of each category's fixed order: what a BFCL-style
        report scores."""
        out = [task_of(e) for category in self.categories
               for e in self._fixed_order(split, category)[:n or None]]
        if not out:
            raise ValueError(f"bfcl: the {split} split of {list(self.categories)} is empty")
        return out

    def eval_tasks(self, split: str, n: int) -> list[Task]:
        """`n` held-out tasks spread evenly over the categories (the first of each
        category's fixed order, as `tasks_per_category` takes them), whatever the run's
        seed, so runs of different seeds and `tracerl eval --tasks-per-category` score
        the same ids; every id of the split when `n` covers it. A category with fewer
        ids than its share gives what it has."""
        pool = self.entries(split)
        if n >= len(pool):
            return [task_of(e) for e in pool]
        present = [c for c in self.categories if any(e.category == c for e in pool)]
        out = []
        for i, category in enumerate(present):
            share = n // len(present) + (1 if i < n % len(present) else 0)
            out.extend(task_of(e) for e in self._fixed_order(split, category)[:share])
        return out

    def make_env(self) -> BfclEnv:
        return BfclEnv(max_steps_per_turn=self.max_steps_per_turn,
                       call_timeout_s=self.call_timeout_s,
                       one_reply=self.single_turn == "one_reply")

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        return demonstration(entry_of(task), self.demo_format, self.single_turn)

    def subgoal(self, trajectory: Trajectory, turn_index: int) -> float | None:
        """BFCL's check of the user turn this action belongs to (credit.evaluator=subgoal)."""
        return turn_check(trajectory, turn_index)


@dataclass(frozen=True)
class BfclConfig:
    """`task.bfcl.*`: the BFCL family's knobs."""

    categories: tuple[str, ...] = DEFAULT_CATEGORIES
    """BFCL categories to load (shell patterns such as live_* allowed)."""
    heldout_fraction: float = HELDOUT_FRACTION
    """Share of ids held out, by a hash of the id (docs/bfcl.md)."""
    unseen_classes: tuple[str, ...] = UNSEEN_CLASSES
    """Multi-turn API classes kept out of training (the unseen_api split)."""
    max_steps_per_turn: int = MAX_STEPS_PER_TURN
    """Actions with calls allowed in one user turn before the episode is cut (BFCL: 20)."""
    demo_format: DemoFormat = "one_per_action"
    """SFT demonstrations of single-turn ids: one call per action, or every call in one
    reply as a JSON list in one block (one_reply; docs/bfcl.md). Acknowledged episodes
    only: a `single_turn=one_reply` demonstration is its one reply."""
    single_turn: SingleTurn = "acknowledged"
    """How a single-turn episode runs: `acknowledged` (each call acknowledged, the episode
    ends at an action without a call) or `one_reply` (BFCL's harness: the first reply is
    the answer, every call in one block; docs/bfcl.md)."""
    train_categories: tuple[str, ...] = ()
    """Categories SFT and RL draw train ids from (patterns allowed; empty = every loaded
    category); evaluation still covers all of `categories`. RL learns only where a
    group's samples differ, so a curriculum may train on the categories the policy
    already solves sometimes."""
    reward: str = "bfcl"
    """What training optimises: `bfcl` (1.0 iff BFCL's checker accepts, else 0.0) or
    `partial` (the same 1.0, and up to 0.5 for a rejected single-turn answer of the right
    shape, by the share of the accepted calls' parameters it gets right; envs/bfcl/
    partial.py). Held-out success is BFCL's verdict either way."""


@register_family("bfcl", BfclConfig)
def build_bfcl(section: BfclConfig, context: FamilyContext) -> BfclFamily:
    """BFCL v4 (single-turn AST and multi-turn simulators), scored by BFCL's rules
    (task.tool_timeout_s limits each simulator call)."""
    return BfclFamily(tuple(section.categories), section.heldout_fraction,
                      tuple(section.unseen_classes), section.max_steps_per_turn,
                      call_timeout_s=context.tool_timeout_s, demo_format=section.demo_format,
                      train_categories=tuple(section.train_categories),
                      single_turn=section.single_turn, reward_name=section.reward)

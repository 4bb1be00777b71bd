"""What a run records for a task family or a reward given from Python.

`tracerl eval RUN` and `tracerl train --resume RUN` rebuild the family and the reward
from config.yaml alone, so `Trainer(config, family=..., reward=...)` writes there the
reference that imports each back (tracerl.util.refs.rebuild_reference), with the
family's constructor arguments in `task.family_args`. An object that cannot be named
that way (defined in `__main__`, a lambda, an argument that cannot be read back) is
recorded as `<python: NAME; WHY>`: eval and resume then refuse with a message asking
for `task.family=` (or `reward=`), and the run says so when it starts. Nothing else,
least of all the default family, is ever built in its place.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from tracerl.envs.family import TaskFamily
from tracerl.envs.registry import FamilyContext
from tracerl.train.config import TrainConfig
from tracerl.util.refs import NOT_RECORDED, Rebuild, not_recorded, rebuild_reference

CONTEXT_ARGS = frozenset(f.name for f in fields(FamilyContext))
"""A family's arguments that the registry passes again at rebuild (never recorded)."""


def record_family(config: TrainConfig, family: TaskFamily) -> tuple[TrainConfig, str | None]:
    """`config` naming `family` by reference, and a note when it cannot be rebuilt."""
    found = rebuild_reference(family, CONTEXT_ARGS)
    name = str(getattr(family, "name", type(family).__name__))
    if isinstance(found, Rebuild):
        task = replace(config.task, family=found.ref, family_args=found.args)  # type: ignore[type-var]
        return replace(config, task=task), None
    task = replace(config.task, family=not_recorded(name, found), family_args={})  # type: ignore[type-var]
    return replace(config, task=task), (
        f"note: the task family {name!r} given from Python cannot be recorded in "
        f"config.yaml ({found}); `tracerl eval` and `train --resume` of this run will need "
        "task.family=module:attribute")


def record_reward(config: TrainConfig, reward: Any) -> tuple[TrainConfig, str | None]:
    """`config` naming `reward` by reference, and a note when it cannot be rebuilt."""
    found = rebuild_reference(reward)
    name = str(getattr(reward, "name", getattr(reward, "__name__", type(reward).__name__)))
    if isinstance(found, Rebuild) and not found.args:
        return replace(config, reward=found.ref), None
    why = found if isinstance(found, str) else (
        f"it needs the arguments {found.args}, which config.reward cannot hold")
    return replace(config, reward=not_recorded(name, why)), (
        f"note: the reward {name!r} given from Python cannot be recorded in config.yaml "
        f"({why}); `tracerl eval` and `train --resume` of this run will need "
        "reward=module:attribute")


def rebuildable(config: TrainConfig) -> bool:
    """Whether `build_task_family(config)` rebuilds the run's family and reward (so a
    rollout worker process can build its own)."""
    return not (config.task.family.startswith(NOT_RECORDED)
                or config.reward.startswith(NOT_RECORDED))

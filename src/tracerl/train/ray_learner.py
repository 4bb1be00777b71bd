"""The learner as a Ray actor (runtime=ray; pip install 'tracerl[ray]').

With `runtime=ray` every part of an async RL stage is an actor in one placement group
(runtime/ray.py `placement_bundles`): the learner (`LearnerActor`, bundle 0, with
`ray.learner_cpus` / `ray.learner_gpus`), the rollout workers and the reward workers.
The learner actor holds the policy being trained, the optimizer, the RLStep (critic,
step evaluator) and the async loop (AsyncRL, train/async_loop.py); the loop's rollout
pool is the worker actors, which it creates itself, so weights and finished groups move
between actors through the object store and never through the driver.

The driver (the process that runs `tracerl train`, or the job `ray job submit` starts)
orchestrates: config, progress, logging, traces, checkpoints and the held-out
evaluations. It talks to the actor through `RemoteLearner`, which has the async loop's
interface (`step`, `save`, `pull`, `close`): a step returns the step's metrics and
trajectories (for logging and traces); the trained weights, the optimizer's state and
the loop's checkpoint files (async state, buffered groups, critic) come back only when
the driver checkpoints or evaluates (`pull`), and once more when the stage ends.
A resumed run sends the checkpoint's files to a fresh actor, so the version counter,
the staleness state and the buffered groups carry over exactly as in one process.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
import torch
from ray.util.placement_group import PlacementGroup, remove_placement_group

from tracerl.envs.family import TaskFamily
from tracerl.policy.lora import trainable_parameters
from tracerl.policy.model import Policy
from tracerl.policy.weights import load_named, trained_weights
from tracerl.runtime.ray import LEARNER_BUNDLE, in_bundle, make_placement, start_ray
from tracerl.train.async_loop import BUFFER_FILE, STATE_FILE, AsyncRL, start_async
from tracerl.train.config import TrainConfig
from tracerl.train.optim import adamw
from tracerl.train.reference import Reference
from tracerl.train.rl_step import CRITIC_FILE, RLStep
from tracerl.train.runner import build_runner, build_sampler, build_task_family
from tracerl.train.step import StepInterrupted, StepResult

LEARNER_FILES = (STATE_FILE, BUFFER_FILE, CRITIC_FILE)
"""What the learner adds to a checkpoint beyond the policy and the optimizer."""
MONITOR = "monitor"
"""The learner actor's concurrency group for read-only questions (`rollout_workers`,
`pid`): they are answered on a thread of their own while a step runs. In the default
group, which runs one method at a time, they waited behind whole steps (over a minute
each on a loaded machine)."""


@dataclass(frozen=True)
class LearnerSnapshot:
    """What the driver needs from the learner to checkpoint or evaluate."""

    weights: list[tuple[str, torch.Tensor]]
    """The trained parameters (all of them, or the LoRA adapter)."""
    optimizer: dict[str, Any]
    files: dict[str, bytes]
    """The learner's checkpoint files by name (LEARNER_FILES that exist)."""


def _read_files(directory: Path | None) -> dict[str, bytes]:
    if directory is None:
        return {}
    return {name: (directory / name).read_bytes() for name in LEARNER_FILES
            if (directory / name).is_file()}


class LearnerActor:
    """The learner of an async RL stage, as a Ray actor (see module docstring)."""

    def __init__(self, config: TrainConfig, models: tuple[Policy, Reference | None],
                 family: TaskFamily | None, optimizer_state: dict[str, Any],
                 files: dict[str, bytes], placement: PlacementGroup) -> None:
        torch.set_num_threads(max(1, int(config.ray.learner_cpus)))
        policy, ref = models  # one argument: a LoRA reference is the policy's own model
        given = family is not None
        family = family if family is not None else build_task_family(config, policy)
        runner = build_runner(config, policy, family, build_sampler(config, policy))
        self.rl = RLStep(policy, config, family, runner, ref)
        self.optimizer = adamw(trainable_parameters(policy.model), config.rl.lr)
        if optimizer_state:
            self.optimizer.load_state_dict(optimizer_state)
        with tempfile.TemporaryDirectory(prefix="tracerl-learner-") as tmp:
            checkpoint = Path(tmp) if files else None
            for name, data in files.items():
                (Path(tmp) / name).write_bytes(data)
            if checkpoint is not None:
                self.rl.load(checkpoint)
            self.loop: AsyncRL = start_async(self.rl, self.optimizer, family, config,
                                             checkpoint, rebuild_family=not given,
                                             placement=placement)

    def step(self, step: int, trace_failures: int | None) -> StepResult:
        return self.loop.step(step, trace_failures)

    def snapshot(self) -> LearnerSnapshot:
        with tempfile.TemporaryDirectory(prefix="tracerl-learner-") as tmp:
            self.rl.save(Path(tmp))
            self.loop.save(Path(tmp))
            files = _read_files(Path(tmp))
        return LearnerSnapshot(trained_weights(self.rl.policy.model),
                               self.optimizer.state_dict(), files)

    @ray.method(concurrency_group=MONITOR)
    def rollout_workers(self) -> list[tuple[Any, int]]:
        """Each live rollout worker actor and the groups it holds now (for monitoring;
        answered while a step runs, so a snapshot of counts the step is changing)."""
        return self.loop.pool.workers()  # type: ignore[attr-defined]

    @ray.method(concurrency_group=MONITOR)
    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        self.loop.close()


class RemoteLearner:
    """The driver's handle on the learner actor; the async loop's interface."""

    def __init__(self, rl: RLStep, optimizer: torch.optim.Optimizer, family: TaskFamily,
                 config: TrainConfig, checkpoint: Path | None,
                 rebuild_family: bool = True) -> None:
        self.policy = rl.policy
        self.optimizer = optimizer
        self.updates = 0
        """Updates the actor made since this handle started it."""
        self._snapshot: LearnerSnapshot | None = None
        self._stale = True  # the driver's copy lags the actor's
        self._broken = False
        self.started_ray = start_ray(config.ray)
        self.actor: Any = None
        try:
            self.placement = make_placement(config.ray)
            ray_cfg = config.ray
            self.actor = ray.remote(concurrency_groups={MONITOR: 1})(LearnerActor).options(
                num_cpus=ray_cfg.learner_cpus, num_gpus=ray_cfg.learner_gpus, max_restarts=0,
                scheduling_strategy=in_bundle(self.placement, LEARNER_BUNDLE),
            ).remote(config, (rl.policy, rl.ref), None if rebuild_family else family,
                     optimizer.state_dict(), _read_files(checkpoint), self.placement)
        except BaseException:
            self._release()
            raise

    def step(self, step: int, trace_failures: int | None = None) -> StepResult:
        """One update in the actor: wait for groups, update, sync the workers' weights.

        Ctrl-C here stops the driver, not the actor, which finishes the step: the driver
        waits for it (a second Ctrl-C gives up) and raises StepInterrupted with its
        result, so the checkpoint the interrupt writes counts the update its weights
        hold (the policy version is not one ahead of the step count on resume)."""
        ref = self.actor.step.remote(step, trace_failures)
        try:
            result = ray.get(ref)
        except KeyboardInterrupt:
            try:
                result = ray.get(ref)  # the actor goes on with the step: wait for it
            except BaseException:
                self._broken = True
                raise
            self.updates += 1
            self._stale = True
            raise StepInterrupted(result) from None
        except BaseException:
            self._broken = True  # an actor that failed has no state worth fetching
            raise
        self.updates += 1
        self._stale = True
        return result

    def pull(self) -> None:
        """Bring the actor's weights and optimizer state into the driver's copies."""
        if not self._stale or self.actor is None or self._broken:
            return
        snap: LearnerSnapshot = ray.get(self.actor.snapshot.remote())
        load_named(self.policy.model, snap.weights)
        self.optimizer.load_state_dict(snap.optimizer)
        self._snapshot, self._stale = snap, False

    def save(self, directory: Path) -> None:
        """Write the learner's checkpoint files (the driver wrote policy and optimizer)."""
        self.pull()
        for name, data in (self._snapshot.files if self._snapshot else {}).items():
            (directory / name).write_bytes(data)

    def close(self) -> None:
        """Fetch the final state, stop the actors, release the placement (and Ray, if
        this handle started it)."""
        if self.actor is None:
            return
        try:
            if not self._broken:
                self.pull()
                ray.get(self.actor.close.remote())
        finally:
            self._release()

    def _release(self) -> None:
        if self.actor is not None:
            ray.kill(self.actor)
            self.actor = None
        if getattr(self, "placement", None) is not None:
            remove_placement_group(self.placement)
            self.placement = None
        if self.started_ray:
            ray.shutdown()
            self.started_ray = False

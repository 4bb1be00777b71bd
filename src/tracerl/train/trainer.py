"""The Trainer: orchestration only (stages, evaluation, logging, checkpoints).

Stages run in `config.stages` order, each from the previous stage's weights. The
algorithms live in tracerl.algorithms; one RL step is `rl_step` (train/step.py).

RL step k (1-based) is logged, traced and checkpointed as step k everywhere; an
evaluation after step k is recorded at step k (step 0: before RL).
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from tracerl.envs.family import FamilyWithReward, TaskFamily
from tracerl.policy.lora import trainable_parameters
from tracerl.policy.model import DESCRIBE_TOOLS_KEY, Policy, load_policy, write_tiny
from tracerl.policy.precision import autocast_dtype, set_autocast, weights_dtype
from tracerl.rewards.audit import resolve_reward
from tracerl.rewards.base import Reward
from tracerl.rollout.render import ChatRenderer
from tracerl.trace.offload import OffloadedTracer
from tracerl.trace.records import guardrail_records
from tracerl.trace.tracer import Tracer
from tracerl.train import checkpoint as ckpt
from tracerl.train.async_loop import AsyncRL, start_async
from tracerl.train.config import TrainConfig
from tracerl.train.configlib import ConfigError
from tracerl.train.dpo import run_dpo_stage
from tracerl.train.evaluate import EvalResult, evaluate_policy, heldout_tasks
from tracerl.train.loggers import MetricsLog, read_metrics
from tracerl.train.malloc import map_large_blocks
from tracerl.train.methods import needs_reference
from tracerl.train.model_setup import prepare_policy, start_stage
from tracerl.train.optim import adamw
from tracerl.train.plot import plot_curves
from tracerl.train.progress import ProgressReporter
from tracerl.train.rebuild import rebuildable, record_family, record_reward
from tracerl.train.reference import Reference
from tracerl.train.rl_step import RLStep
from tracerl.train.rundir import check_device, fresh_run_dir, write_config
from tracerl.train.runner import (
    build_runner,
    build_sampler,
    build_task_family,
    check_references,
    check_sampler,
    describe_tools,
    engine_sync,
)
from tracerl.train.sft import demonstrations, run_sft
from tracerl.train.step import StepInterrupted, StepResult, rl_step
from tracerl.train.threads import choose_threads
from tracerl.types import Trajectory

if TYPE_CHECKING:
    from tracerl.train.ray_learner import RemoteLearner


@dataclass(frozen=True)
class Summary:
    success_before: float | None
    success_after: float
    steps: int
    wall_seconds: float
    model: str
    parameters: int
    evals: list[dict[str, float]]


class TrainingInterrupted(Exception):
    """Ctrl-C during training: a checkpoint was saved; the message says how to resume."""


def _ray_learner() -> type[RemoteLearner]:
    """The Ray learner's handle; ray is an optional extra, imported only when asked for."""
    try:
        from tracerl.train.ray_learner import RemoteLearner
    except ModuleNotFoundError as e:
        raise ConfigError("runtime=ray needs Ray: pip install 'tracerl[ray]'") from e
    return RemoteLearner


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class Trainer:
    """Runs `config.stages` on a policy and a task family, writing a run directory.

    `run_dir` defaults to `out_dir/name`, suffixed (`name-2`, ...) if that exists unless
    `overwrite`. `family` (a TaskFamily, e.g. `tracerl.envs.TaskListFamily(make_env,
    train, heldout, reward)`) replaces the configured `task.family`, `reward` (a function
    of a Trajectory) the family's outcome reward; both are recorded in config.yaml as
    references when they can be (train/rebuild.py). `policy` (a loaded Policy, see
    `tracerl.policy.policy_from_model`) replaces `model`.
    """

    def __init__(self, config: TrainConfig, run_dir: Path | str | None = None,
                 resume: bool = False, *, family: TaskFamily | None = None,
                 reward: Reward | None = None, policy: Policy | None = None,
                 overwrite: bool = False) -> None:
        check_device(config.device)
        check_sampler(config)
        self.notes: list[str] = []
        config = self._record_given(config, family, reward)
        check_references(config, family=family is None, reward=reward is None)
        latest = ckpt.latest_checkpoint(Path(run_dir)) if resume and run_dir else None
        config = self._describe_tools(config, latest, policy)
        # built before the run directory exists: a family that fails leaves nothing behind
        self.family = self._family(config, family, reward)
        if resume:
            if run_dir is None:
                raise ValueError("resume=True needs the run directory")
            self.run_dir = Path(run_dir)
        elif run_dir is None:
            self.run_dir, name, replaced = fresh_run_dir(config.out_dir, config.name, overwrite)
            if replaced:
                self.notes.append(f"--overwrite: deleted the earlier run in {self.run_dir} "
                                  f"({replaced})")
            if name != config.name:
                self.notes.append(f"{Path(config.out_dir) / config.name} exists: writing "
                                  f"{self.run_dir} (--overwrite to replace it)")
                config = replace(config, name=name)
        else:
            self.run_dir = Path(run_dir)
        self.cfg = config
        self.state = ckpt.TrainerState()
        self.optimizer_state: dict | None = None
        self._set_threads()
        map_large_blocks()  # freed activations go back to the OS (train/malloc.py)
        _seed_everything(config.seed)
        self.policy = self._load_policy(latest, policy)
        # the model records how its prompts show the tools; checkpoints and exports keep it
        setattr(self.policy.model.config, DESCRIBE_TOOLS_KEY, config.task.describe_tools == "true")
        self.sampler = build_sampler(config, self.policy)
        self.engine = engine_sync(config, self.sampler)
        """Set when the sampler holds its own copy of the weights (vLLM): synced at each
        stage start, after each update and before a final evaluation."""
        if latest is not None:
            self.state, self.optimizer_state, rng = ckpt.load_trainer_state(latest)
            ckpt.set_rng_state(rng, self._sampler_rng())
            self._reopen_if_extended()
        write_config(self.run_dir, config)
        # a rollout worker process can rebuild the family from config.yaml
        self._family_from_config = rebuildable(config)
        self._warn_episode_length()
        self.renderer = ChatRenderer(self.policy.tokenizer)
        self.runner = build_runner(config, self.policy, self.family, self.sampler)
        self.heldout = heldout_tasks(self.family, config.eval.tasks,
                                     config.seed if config.eval.seed is None
                                     else config.eval.seed)
        self.log = MetricsLog.for_run(config, self.run_dir,
                                      resume_step=self.state.rl_step if latest else None)
        self.tracer: Tracer | OffloadedTracer | None = None
        if config.trace.enabled:
            kind = OffloadedTracer if config.trace.process else Tracer
            self.tracer = kind.for_run(self.run_dir,
                                       otlp_endpoint=config.trace.otlp_endpoint or None)
        self.rl: RLStep | None = None
        self.optimizer: torch.optim.Optimizer | None = None
        self.async_rl: AsyncRL | RemoteLearner | None = None
        """The async loop: in this process, or (runtime=ray) the learner actor's handle."""

    # -- setup ---------------------------------------------------------------------------
    def _set_threads(self) -> None:
        choice = choose_threads(self.cfg.threads)
        torch.set_num_threads(choice.threads)
        warning = choice.warning()
        if warning:
            self.notes.append(warning)

    def _load_policy(self, latest: Path | None, given: Policy | None) -> Policy:
        device, dtype = self.cfg.device, weights_dtype(self.cfg.dtype)
        name = given.name if given is not None else self.cfg.model
        if latest is not None:
            policy = ckpt.load_checkpoint_policy(latest, device, dtype, name=name)
        elif given is not None:
            policy = given
        elif self.cfg.model == "tiny":
            path = write_tiny(self.run_dir / "init", self.cfg.tiny, self.cfg.seed)
            policy = load_policy(path, device, dtype, name="tiny")
        else:
            policy = load_policy(self.cfg.model, device, dtype)
        return prepare_policy(policy, self.cfg)

    def _record_given(self, config: TrainConfig, family: TaskFamily | None,
                      reward: Reward | None) -> TrainConfig:
        """config.yaml names a family or reward given from Python (train/rebuild.py)."""
        for given, record in ((family, record_family), (reward, record_reward)):
            if given is not None:
                config, note = record(config, given)  # type: ignore[operator]
                if note:
                    self.notes.append(note)
        return config

    @staticmethod
    def _describe_tools(config: TrainConfig, latest: Path | None,
                        given: Policy | None) -> TrainConfig:
        """`task.describe_tools` resolved (auto: what the model to be loaded records), so
        config.yaml says what the run did and eval, resume and workers do the same."""
        model: Policy | Path | str = config.model
        if latest is not None and (latest / "config.json").is_file():
            model = latest  # a full checkpoint (a LoRA one records its base: config.model)
        elif given is not None:
            model = given
        describe = "true" if describe_tools(config, model) else "false"
        return replace(config, task=replace(config.task, describe_tools=describe))  # type: ignore[type-var]

    def _family(self, config: TrainConfig, given: TaskFamily | None,
                reward: Reward | None) -> TaskFamily:
        """The family the run trains on: the given one (its reward replaced by the given
        reward or `reward=`), else the configured one."""
        if given is None and reward is None:
            return build_task_family(config)
        family = given if given is not None else build_task_family(replace(config, reward=""))
        if reward is not None:
            return FamilyWithReward(family, reward)
        if config.reward:
            return FamilyWithReward(family, resolve_reward(config.reward))  # type: ignore[arg-type]
        return family

    def _reopen_if_extended(self) -> None:
        """A finished run resumed with a larger rl.steps trains on."""
        stages = self.cfg.stages
        finished = self.state.stage_index >= len(stages)
        if finished and "rl" in stages and self.cfg.rl.steps > self.state.rl_step:
            self.state.stage_index = stages.index("rl")
            self.notes.append(f"resuming a finished run: RL steps {self.state.rl_step} -> "
                              f"{self.cfg.rl.steps}")
        elif finished:
            self.notes.append(f"this run already finished ({self.state.rl_step} RL steps); "
                              "nothing to do. Pass a larger rl.steps to train on.")

    def _warn_episode_length(self) -> None:
        needed = getattr(self.family, "max_turns", None)
        if isinstance(needed, int) and needed > self.cfg.rl.max_turns:
            self.notes.append(
                f"warning: task family {self.family.name!r} needs up to {needed} turns per "
                f"episode but rl.max_turns={self.cfg.rl.max_turns}: long episodes will be "
                f"truncated (set rl.max_turns={needed})")

    # -- the run ---------------------------------------------------------------------------
    def run(self) -> Summary:
        started = time.time()
        log = self.cfg.log
        with ProgressReporter(log.progress, log.progress_every_s) as self.progress:
            for note in self.notes:
                self.progress.warn(note)
            try:
                self._run_stages()
            except KeyboardInterrupt:
                self.state.wall_seconds += time.time() - started
                self._checkpoint(self.optimizer)
                self._close()
                raise TrainingInterrupted(
                    f"interrupted {self._where()}; a checkpoint was saved. "
                    f"Resume with: tracerl train --resume {self.run_dir}") from None
        self.state.wall_seconds += time.time() - started
        self._checkpoint(None)
        return self._finish()

    def _where(self) -> str:
        stages = self.cfg.stages
        if self.state.stage_index >= len(stages):
            return "during the final evaluation"
        stage = stages[self.state.stage_index]
        if stage == "rl":
            return f"after RL step {self.state.rl_step}"
        return f"during {stage} (it restarts from its beginning on resume)"

    def _run_stages(self) -> None:
        stages = {"sft": self._run_sft, "dpo": self._run_dpo, "rl": self._run_rl}
        while self.state.stage_index < len(self.cfg.stages):
            start_stage(self.policy, self.run_dir, self.state.stage_index)
            self._sync_engine()
            stages[self.cfg.stages[self.state.stage_index]]()
            self.state.stage_index += 1
            self._checkpoint(None)
        if not self.state.evals or self.state.evals[-1].get("final") is not True:
            self._sync_engine()
            self._evaluate(final=True)

    def _sampler_rng(self) -> torch.Generator | None:
        # The transformers sampler's generator is checkpointed; an engine seeds its own.
        return getattr(self.sampler, "generator", None)

    def _sync_engine(self) -> None:
        """Every weight into a sampler that holds its own copy (the base may have changed:
        a stage's training, a LoRA fold, a resume)."""
        if self.engine is not None:
            self.engine.push(self.policy.model, everything=True)

    def _trace(self, trajectories: list[Trajectory], phase: str, step: int) -> None:
        if self.tracer is None:
            return
        run = self.cfg.name if phase == "train" else f"{self.cfg.name}:{phase}"
        for t in trajectories:
            self.tracer.submit(t, run=run, step=step, model_name=self.policy.name,
                               guardrails=guardrail_records(t))

    def _checkpoint(self, optimizer: torch.optim.Optimizer | None) -> Path:
        if self.async_rl is not None:
            self.async_rl.pull()  # a learner actor's weights, before they are written
        path = ckpt.save_checkpoint(self.run_dir, self.policy, self.state, optimizer,
                                    ckpt.rng_state(self._sampler_rng()), self._extras)
        protected = {f"stage{self.cfg.stages.index('rl')}-step000000"} \
            if "rl" in self.cfg.stages else set()
        ckpt.prune_checkpoints(self.run_dir, self.cfg.log.keep_checkpoints, protected)
        return path

    def _extras(self, directory: Path) -> None:
        """What a checkpoint holds beyond the policy: the critic, the async loop's state."""
        if self.rl is not None:
            self.rl.save(directory)
        if self.async_rl is not None:
            self.async_rl.save(directory)

    def _run_sft(self) -> None:
        demos = demonstrations(self.family, self.renderer, self.cfg.sft.demos, self.cfg.seed)
        steps = -(-len(demos) // self.cfg.sft.batch_size) * self.cfg.sft.epochs
        bar = self.progress.stage("SFT", steps)

        def on_step(m) -> None:
            bar.update(m.step, f"loss {m.loss:.3f}")
            if m.step % 10 == 0 or m.step == m.total_steps:
                self.log.log("sft", m.step, {"loss": m.loss, "lr": m.lr, "tokens": m.tokens})

        run_sft(self.policy, demos, self.cfg.sft, self.cfg.seed, on_step,
                micro_tokens=self.cfg.micro_batch_tokens)
        bar.done()

    def _run_dpo(self) -> None:
        bar = self.progress.stage("DPO", None)

        def on_step(step: int, values: dict[str, float]) -> None:
            bar.update(step, f"loss {values['loss']:.3f}")
            self.log.log("dpo", step, values)

        run_dpo_stage(self.policy, self.cfg, self.family, self.runner, self.renderer, on_step)
        bar.done()

    def _evaluate(self, final: bool = False) -> EvalResult:
        step = self.state.rl_step
        if self.async_rl is not None:
            self.async_rl.pull()
        result, trajectories = evaluate_policy(self.runner, self.heldout, self.cfg.eval.samples,
                                               self.cfg.eval.temperature)
        self._trace(trajectories, "eval", step)
        self.state.evals.append({"step": step, "final": final, **asdict(result)})
        self.log.log("eval", step, asdict(result))
        self.progress.note(f"held-out success {result.success:.2f} at RL step {step} "
                           f"({result.samples} samples, tool use {result.tool_use:.2f})")
        best = max(e["success"] for e in self.state.evals)
        if result.success >= best and step > 0:
            ckpt.mark_best(self.run_dir, self._checkpoint(self.optimizer))
        return result

    def _run_rl(self) -> None:
        cfg = self.cfg.rl
        if self.state.success_before is None:
            self.state.success_before = self._evaluate().success
            self._checkpoint(None)  # the pre-RL weights: the KL reference on resume
        ref = self._reference() if needs_reference(cfg) else None
        self.rl = RLStep(self.policy, self.cfg, self.family, self.runner, ref,
                         engine=self.engine)
        latest = ckpt.latest_checkpoint(self.run_dir)
        if self.state.rl_step > 0 and latest is not None:
            self.rl.load(latest)
        self.optimizer = adamw(trainable_parameters(self.policy.model), cfg.lr)
        if self.optimizer_state is not None:
            self.optimizer.load_state_dict(self.optimizer_state)
            self.optimizer_state = None
        if cfg.mode == "async":
            resumed = latest if self.state.rl_step > 0 else None
            start = start_async
            if self.cfg.runtime == "ray":  # the learner is an actor too: driver orchestrates
                start = _ray_learner()
            self.async_rl = start(self.rl, self.optimizer, self.family, self.cfg, resumed,
                                  rebuild_family=self._family_from_config)
        try:
            self._rl_loop()
        finally:
            if self.async_rl is not None:
                self.async_rl.close()
        self._evaluate(final=True)

    def _run_step(self, failures: int | None) -> StepResult:
        assert self.rl is not None and self.optimizer is not None
        if self.async_rl is not None:
            return self.async_rl.step(self.state.rl_step, failures)
        return rl_step(self.rl, self.runner, self.family, self.optimizer, self.state.rl_step,
                       failures)

    def _rl_loop(self) -> None:
        cfg = self.cfg.rl
        bar = self.progress.stage("RL", cfg.steps, completed=self.state.rl_step)
        while self.state.rl_step < cfg.steps:
            failures = self.tracer.failures if self.tracer is not None else None
            try:
                result = self._run_step(failures)
            except StepInterrupted as stop:  # the learner actor finished it: count it
                self._record_step(stop.result)
                raise
            self._record_step(result)
            r = result.metrics.rollout
            bar.update(self.state.rl_step, f"reward {r.reward_mean:.2f}  success {r.success:.2f}"
                       f"  {result.metrics.times.sample_tok_s:.0f} tok/s")
            every = self.cfg.eval.every
            if every and self.state.rl_step % every == 0 and self.state.rl_step < cfg.steps:
                reached = self._evaluate().success
                if cfg.stop_at_success and reached >= cfg.stop_at_success:
                    break
            if self.state.rl_step % self.cfg.log.checkpoint_every == 0:
                self._checkpoint(self.optimizer)
        bar.done()

    def _record_step(self, result: StepResult) -> None:
        self.state.rl_step += 1
        self._trace(result.trajectories, "train", self.state.rl_step)
        self.log.log("rl", self.state.rl_step, result.metrics.record())

    def _reference(self) -> Reference:
        """The policy at the start of RL: the disabled adapter with LoRA; else a frozen copy
        (on resume, the weights of the stage's first checkpoint)."""
        start = self.run_dir / "checkpoints" / f"stage{self.state.stage_index}-step000000"
        if self.cfg.lora.enabled or self.state.rl_step == 0 or not start.is_dir():
            return Reference.of(self.policy.model)
        model = ckpt.load_checkpoint_policy(start, self.cfg.device,
                                            weights_dtype(self.cfg.dtype)).model
        set_autocast(model, autocast_dtype(self.cfg.dtype))
        return Reference(model)

    def _close(self) -> None:
        self.log.close()
        if self.tracer is not None:
            self.tracer.close()

    def _finish(self) -> Summary:
        final = [e for e in self.state.evals if e.get("final")]
        summary = Summary(
            success_before=self.state.success_before,
            success_after=final[-1]["success"] if final else float("nan"),
            steps=self.state.rl_step,
            wall_seconds=round(self.state.wall_seconds, 2),
            model=self.policy.name,
            parameters=self.policy.num_parameters(),
            evals=self.state.evals,
        )
        (self.run_dir / "summary.json").write_text(json.dumps(asdict(summary), indent=2))
        plot_curves(read_metrics(self.run_dir), self.state.evals, self.run_dir / "curves.png")
        self._close()
        return summary

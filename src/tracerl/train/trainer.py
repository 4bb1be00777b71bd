"""The Trainer: orchestration only (stages, evaluation, logging, checkpoints).

Stages run in `config.stages` order, each from the previous stage's weights. The
algorithms live in tracerl.algorithms; a stage's step is a few calls into them.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import yaml

from tracerl.policy.lora import trainable_parameters
from tracerl.policy.model import Policy, load_policy, write_tiny
from tracerl.policy.precision import autocast_dtype, set_autocast, weights_dtype
from tracerl.policy.sampler import TransformersSampler
from tracerl.rollout.render import ChatRenderer
from tracerl.trace.offload import OffloadedTracer
from tracerl.trace.records import guardrail_records
from tracerl.trace.tracer import Tracer
from tracerl.train import checkpoint as ckpt
from tracerl.train.config import TrainConfig
from tracerl.train.configlib import to_dict
from tracerl.train.dpo import run_dpo_stage
from tracerl.train.evaluate import EvalResult, evaluate_policy
from tracerl.train.loggers import MetricsLog, progress_bar, read_metrics
from tracerl.train.methods import check_methods, needs_reference
from tracerl.train.metrics import RLStepMetrics
from tracerl.train.model_setup import prepare_policy, start_stage
from tracerl.train.plot import plot_curves
from tracerl.train.reference import Reference
from tracerl.train.rl_step import RLStep
from tracerl.train.runner import build_runner, build_task_family
from tracerl.train.sft import demonstrations, run_sft
from tracerl.train.step import rl_step
from tracerl.types import Trajectory


@dataclass(frozen=True)
class Summary:
    success_before: float | None
    success_after: float
    steps: int
    wall_seconds: float
    model: str
    parameters: int
    evals: list[dict[str, float]]


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class Trainer:
    def __init__(self, config: TrainConfig, run_dir: Path, resume: bool = False) -> None:
        check_methods(config)
        self.cfg = config
        self.run_dir = run_dir
        self.state = ckpt.TrainerState()
        self.optimizer_state: dict | None = None
        run_dir.mkdir(parents=True, exist_ok=True)
        if config.threads:
            torch.set_num_threads(config.threads)
        _seed_everything(config.seed)
        latest = ckpt.latest_checkpoint(run_dir) if resume else None
        self.policy = self._load_policy(latest)
        self.sampler = TransformersSampler(self.policy.model, self.policy.pad_id,
                                           seed=config.seed)
        if latest is not None:
            self.state, self.optimizer_state, rng = ckpt.load_trainer_state(latest)
            ckpt.set_rng_state(rng, self.sampler.generator)
        else:
            (run_dir / "config.yaml").write_text(yaml.safe_dump(to_dict(config), sort_keys=False))
        self.family = build_task_family(config)
        self.renderer = ChatRenderer(self.policy.tokenizer)
        self.runner = build_runner(config, self.policy, self.family, self.sampler)
        self.heldout = self.family.tasks("heldout", config.eval.tasks, seed=config.seed)
        self.log = MetricsLog(run_dir, config.log.tensorboard,
                              resume_step=self.state.rl_step if latest else None)
        self.tracer: Tracer | OffloadedTracer | None = None
        if config.trace.enabled:
            kind = OffloadedTracer if config.trace.process else Tracer
            self.tracer = kind.for_run(run_dir, otlp_endpoint=config.trace.otlp_endpoint or None)

    def _trace(self, trajectories: list[Trajectory], phase: str) -> None:
        if self.tracer is None:
            return
        run = self.cfg.name if phase == "train" else f"{self.cfg.name}:{phase}"
        for t in trajectories:
            self.tracer.submit(t, run=run, step=self.state.rl_step,
                               model_name=self.policy.name, guardrails=guardrail_records(t))

    def _load_policy(self, latest: Path | None) -> Policy:
        device, dtype = self.cfg.device, weights_dtype(self.cfg.dtype)
        if latest is not None:
            policy = ckpt.load_checkpoint_policy(latest, device, dtype, name=self.cfg.model)
        elif self.cfg.model == "tiny":
            path = write_tiny(self.run_dir / "init", self.cfg.tiny, self.cfg.seed)
            policy = load_policy(path, device, dtype, name="tiny")
        else:
            policy = load_policy(self.cfg.model, device, dtype)
        return prepare_policy(policy, self.cfg)

    def _checkpoint(self, optimizer: torch.optim.Optimizer | None) -> None:
        path = ckpt.save_checkpoint(self.run_dir, self.policy, self.state, optimizer,
                                    ckpt.rng_state(self.sampler.generator))
        rl = getattr(self, "rl", None)
        if rl is not None:
            rl.save(path)

    def run(self) -> Summary:
        started = time.time()
        with progress_bar(self.cfg.log.progress) as bar:
            self.bar = bar
            while self.state.stage_index < len(self.cfg.stages):
                stage = self.cfg.stages[self.state.stage_index]
                start_stage(self.policy, self.run_dir, self.state.stage_index)
                {"sft": self._run_sft, "dpo": self._run_dpo, "rl": self._run_rl}[stage]()
                self.state.stage_index += 1
                self._checkpoint(None)
        if not self.state.evals or self.state.evals[-1].get("final") is not True:
            self._evaluate(final=True)
        self.state.wall_seconds += time.time() - started
        self._checkpoint(None)
        return self._finish()

    def _run_sft(self) -> None:
        demos = demonstrations(self.family, self.renderer, self.cfg.sft.demos, self.cfg.seed)
        steps = -(-len(demos) // self.cfg.sft.batch_size) * self.cfg.sft.epochs
        task = self.bar.add_task("SFT", total=steps, info="")

        def on_step(m) -> None:
            self.bar.update(task, completed=m.step, info=f"loss {m.loss:.3f}")
            if m.step % 10 == 0 or m.step == m.total_steps:
                self.log.log("sft", m.step, {"loss": m.loss, "lr": m.lr, "tokens": m.tokens})

        run_sft(self.policy, demos, self.cfg.sft, self.cfg.seed, on_step)

    def _run_dpo(self) -> None:
        task = self.bar.add_task("DPO", total=None, info="")

        def on_step(step: int, values: dict[str, float]) -> None:
            self.bar.update(task, completed=step, info=f"loss {values['loss']:.3f}")
            self.log.log("dpo", step, values)

        run_dpo_stage(self.policy, self.cfg, self.family, self.runner, self.renderer, on_step)

    def _evaluate(self, final: bool = False) -> EvalResult:
        result, trajectories = evaluate_policy(self.runner, self.heldout, self.cfg.eval.samples,
                                               self.cfg.eval.temperature)
        self._trace(trajectories, "eval")
        record = {"step": self.state.rl_step, "final": final, **asdict(result)}
        self.state.evals.append(record)
        self.log.log("eval", self.state.rl_step, asdict(result))
        return result

    def _run_rl(self) -> None:
        cfg = self.cfg.rl
        if self.state.success_before is None:
            self.state.success_before = self._evaluate().success
            self._checkpoint(None)  # the pre-RL weights: the KL reference on resume
        ref = self._reference() if needs_reference(cfg) else None
        self.rl = RLStep(self.policy, self.cfg, self.family, self.runner, ref)
        latest = ckpt.latest_checkpoint(self.run_dir)
        if self.state.rl_step > 0 and latest is not None:
            self.rl.load(latest)
        optimizer = torch.optim.AdamW(trainable_parameters(self.policy.model), lr=cfg.lr,
                                      weight_decay=0.0)
        if self.optimizer_state is not None:
            optimizer.load_state_dict(self.optimizer_state)
            self.optimizer_state = None
        task = self.bar.add_task("GRPO", total=cfg.steps, completed=self.state.rl_step, info="")
        while self.state.rl_step < cfg.steps:
            metrics = self._rl_step(optimizer)
            self.state.rl_step += 1
            self.log.log("rl", self.state.rl_step, metrics.record())
            before = self.state.success_before or 0.0
            self.bar.update(task, completed=self.state.rl_step,
                            info=f"reward {metrics.rollout.reward_mean:.2f} success "
                                 f"{metrics.rollout.success:.2f} (held-out before {before:.2f})")
            every = self.cfg.eval.every
            if every and self.state.rl_step % every == 0 and self.state.rl_step < cfg.steps:
                reached = self._evaluate().success
                if cfg.stop_at_success and reached >= cfg.stop_at_success:
                    break
            if self.state.rl_step % self.cfg.log.checkpoint_every == 0:
                self._checkpoint(optimizer)
        self._evaluate(final=True)

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

    def _rl_step(self, optimizer: torch.optim.Optimizer) -> RLStepMetrics:
        failures = self.tracer.failures if self.tracer is not None else None
        result = rl_step(self.rl, self.runner, self.family, optimizer, self.state.rl_step,
                         failures)
        self._trace(result.trajectories, "train")
        return result.metrics

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
        self.log.close()
        if self.tracer is not None:
            self.tracer.close()
        return summary

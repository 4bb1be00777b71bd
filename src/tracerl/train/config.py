"""The training config: typed sections, each field documented (shown by `--help`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tracerl.algorithms.kl import KLEstimator
from tracerl.algorithms.losses import LossAgg
from tracerl.policy.model import TinySpec
from tracerl.rollout.runner import RolloutConfig

Stage = Literal["sft", "rl"]


@dataclass(frozen=True)
class TaskConfig:
    family: Literal["calc", "code"] = "calc"
    """Task family: calc (calculator tool) or code (sandboxed Python, hidden tests)."""
    calls: int = 1
    """calc: calculator calls each problem needs (1 to 6)."""
    skip_tool_prob: float = 0.5
    """calc: fraction of demonstrations that answer without the tool (imperfect cold start)."""
    format_weight: float = 0.0
    """calc: weight of the format term in the outcome reward (0 = correctness only)."""
    tool_timeout_s: float = 5.0
    """Wall-clock limit of one tool call (code: of one sandboxed run)."""
    path: str = ""
    """code: a local JSONL file of problems ('' = the built-in problems)."""
    dataset_format: Literal["tracerl", "humaneval", "mbpp"] = "tracerl"
    """code: the shape of `path` (tracerl, humaneval or mbpp)."""


@dataclass(frozen=True)
class SFTConfig:
    demos: int = 25600
    """Oracle demonstrations generated from the train split."""
    epochs: int = 1
    """Passes over the demonstrations."""
    lr: float = 1e-3
    """Peak learning rate (AdamW, cosine decay after 5% warm-up; 3e-3 stalls copying)."""
    batch_size: int = 16
    """Demonstrations per optimiser step."""

    def __post_init__(self) -> None:
        if self.demos < 1 or self.epochs < 1 or self.batch_size < 1:
            raise ValueError("sft.demos, sft.epochs and sft.batch_size must be >= 1")


@dataclass(frozen=True)
class RLConfig:
    steps: int = 60
    """GRPO steps (one rollout batch and one update each)."""
    tasks_per_step: int = 8
    """Tasks per step; each gets group_size samples."""
    group_size: int = 8
    """Samples per task (G), the group of the group baseline."""
    lr: float = 1e-4
    """Learning rate (AdamW, constant; 3e-4 corrupts the tiny policy's tool-call syntax)."""
    temperature: float = 1.0
    """Sampling temperature of rollouts."""
    top_p: float = 1.0
    """Nucleus sampling of rollouts."""
    max_turns: int = 8
    """Policy turns before a trajectory is truncated."""
    max_turn_tokens: int = 96
    """Tokens sampled per turn at most."""
    max_response_tokens: int = 512
    """Response tokens (actions + observations) per trajectory at most."""
    clip_low: float = 0.2
    """Lower PPO clip range (ratio >= 1 - clip_low)."""
    clip_high: float = 0.28
    """Upper PPO clip range (DAPO clip-higher)."""
    loss_agg: LossAgg = "token-mean"
    """Loss aggregation: token-mean, seq-mean-token-mean or seq-mean-token-sum."""
    std_normalize: bool = True
    """Divide group advantages by the group std (False = Dr.GRPO)."""
    drop_uniform_groups: bool = True
    """Leave groups whose rewards are all equal out of the update (no signal; saves time)."""
    kl_coef: float = 0.0
    """Weight of the KL-to-reference term in the loss (0 disables the reference model)."""
    kl_estimator: KLEstimator = "k3"
    """KL estimator: k1, k2 or k3."""
    update_epochs: int = 1
    """Passes over each rollout batch."""
    minibatches: int = 1
    """Optimiser steps per pass (the batch is split)."""
    grad_clip: float = 1.0
    """Max global gradient norm."""

    def rollout(self, guard_penalty: bool = False) -> RolloutConfig:
        """The runner's settings for these RL settings."""
        return RolloutConfig(self.group_size, self.max_turns, self.max_turn_tokens,
                             self.max_response_tokens, self.temperature, self.top_p,
                             guard_penalty)

    def __post_init__(self) -> None:
        if self.group_size < 2:
            raise ValueError(
                f"rl.group_size must be >= 2 for a group baseline, got {self.group_size}")
        if self.steps < 0 or self.tasks_per_step < 1:
            raise ValueError("rl.steps must be >= 0 and rl.tasks_per_step >= 1")


@dataclass(frozen=True)
class EvalConfig:
    tasks: int = 100
    """Held-out tasks evaluated before RL and at the end."""
    samples: int = 1
    """Samples per held-out task (success is the mean)."""
    temperature: float = 1.0
    """Sampling temperature of evaluation (0 = greedy)."""
    every: int = 0
    """Also evaluate every N RL steps (0 = only before and after)."""


@dataclass(frozen=True)
class LogConfig:
    progress: bool = True
    """Show a live progress bar."""
    tensorboard: bool = True
    """Write TensorBoard event files to the run directory."""
    checkpoint_every: int = 10
    """Save a checkpoint every N RL steps (and at the end of each stage)."""


@dataclass(frozen=True)
class GuardSection:
    enabled: bool = True
    """Scan tool calls (block code injection and secrets) and tool outputs (redact) in rollouts."""
    penalty: bool = False
    """Subtract the guard's penalty for blocked calls from the outcome reward."""


@dataclass(frozen=True)
class TraceConfig:
    enabled: bool = True
    """Record every training and evaluation trajectory as spans in traces.sqlite."""
    otlp_endpoint: str = ""
    """Also export spans over OTLP/HTTP to this URL (Phoenix, Jaeger, Langfuse); empty = off."""


@dataclass(frozen=True)
class TrainConfig:
    name: str = "calc-tiny"
    """Run name; the run directory is out_dir/name."""
    out_dir: str = "runs"
    """Parent directory of run directories."""
    seed: int = 0
    """Seeds model init, data, sampling and splits."""
    model: str = "tiny"
    """'tiny' (built-in, made locally) or a local Hugging Face model directory."""
    device: str = "cpu"
    """Torch device: cpu, cuda, cuda:0, ..."""
    threads: int = 0
    """Torch CPU threads (0 = torch's default)."""
    stages: list[Stage] = field(default_factory=lambda: ["sft", "rl"])
    """Stages in order, each starting from the last one's weights."""
    tiny: TinySpec = field(default_factory=TinySpec)
    task: TaskConfig = field(default_factory=TaskConfig)
    sft: SFTConfig = field(default_factory=SFTConfig)
    rl: RLConfig = field(default_factory=RLConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    log: LogConfig = field(default_factory=LogConfig)
    trace: TraceConfig = field(default_factory=TraceConfig)
    guard: GuardSection = field(default_factory=GuardSection)

    def __post_init__(self) -> None:
        if not self.stages:
            raise ValueError("stages must name at least one of sft, rl")
        if len(set(self.stages)) != len(self.stages):
            raise ValueError(f"stages repeats a stage: {self.stages}")

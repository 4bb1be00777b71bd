"""The training config: typed sections, each field documented (shown by `--help`).

Importing this module loads no torch: every section is a plain dataclass, the method
names come from tracerl.algorithms.names and each task family's section from the
family registry (tracerl.envs.registry).
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field, make_dataclass
from typing import Any, Literal

from tracerl.envs.registry import families
from tracerl.guard.config import GuardConfig
from tracerl.policy.sampler_settings import SamplerSettings
from tracerl.policy.settings import LoraSettings, Precision
from tracerl.policy.tiny import TinySpec
from tracerl.policy.zoo import preset
from tracerl.runtime.config import RayConfig
from tracerl.train.rl_config import RLConfig

log = logging.getLogger(__name__)
Stage = Literal["sft", "dpo", "rl"]


def _task_config_class() -> type:
    """TaskConfig: the family's name, shared knobs, and one section per registered family."""
    specs = families()

    def section(self: Any) -> Any:
        """The chosen family's section (None for a `module:attribute` reference)."""
        return getattr(self, self.family, None)

    def post_init(self: Any) -> None:
        if self.family not in specs and ":" not in self.family:
            raise ValueError(f"unknown task family {self.family!r}; registered: "
                             f"{sorted(specs)} (or give module:attribute)")
        if self.family_args and ":" not in self.family:
            raise ValueError(f"task.family_args apply to a module:attribute family, not "
                             f"{self.family!r}")
        if self.tool_timeout_s <= 0:
            raise ValueError(f"tool_timeout_s must be > 0, got {self.tool_timeout_s}")

    fields: list[Any] = [
        ("family", str, field(default="calc", metadata={"doc": (
            f"Task family: {', '.join(specs)}, or module:attribute naming your own family "
            "class, factory or instance (a module in the current directory or on "
            "PYTHONPATH; a register_family builder also gets its task.<name> section).")})),
        ("family_args", dict[str, Any], field(default_factory=dict, metadata={"doc": (
            "Keyword arguments a module:attribute family class is called with (recorded "
            "for a family object given from Python).")})),
        ("describe_tools", Literal["auto", "true", "false"], field(default="auto", metadata={
            "doc": "Describe the tools in the prompt: auto (what the model records: yes "
                   "unless it learned its tools from demonstrations, as tiny does), true, "
                   "false; a run's config.yaml records what auto chose."})),
        ("tool_timeout_s", float, field(default=5.0, metadata={
            "doc": "Wall-clock limit of one tool call (code: of one sandboxed run)."})),
    ]
    fields += [(name, spec.section, field(default_factory=spec.section, metadata={
        "doc": spec.summary})) for name, spec in specs.items()]
    cls = make_dataclass("TaskConfig", fields, frozen=True,
                         namespace={"section": section, "__post_init__": post_init})
    cls.__module__ = __name__
    return cls


TaskConfig = _task_config_class()


@dataclass(frozen=True)
class SFTConfig:
    demos: int = 38400
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
class CreditConfig:
    evaluator: Literal["none", "subgoal", "tool_validity", "judge", "monte_carlo"] = "none"
    """Step evaluator giving turn rewards to mt_grpo and turn_gae (subgoal: the family's check)."""
    calibrate: bool = True
    """Measure the evaluator against Monte Carlo branches before trusting it."""
    calibration_states: int = 16
    """States (trajectory, turn) sampled from a step's rollouts for calibration."""
    calibration_samples: int = 4
    """Branched rollouts per state side (before and after the turn)."""
    min_spearman: float = 0.3
    """Below this Spearman correlation: warn and fall back to trajectory-level credit."""
    recalibrate_every: int = 0
    """Calibrate again every N RL steps (0 = once, at the first step)."""
    fault: Literal["none", "inverted", "hard_inverted"] = "none"
    """Break the evaluator on purpose to test calibration: inverted (1 - score) or
    hard_inverted (inverted on the family's hard(trajectory, turn) states only)."""
    judge_url: str = ""
    """judge: OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1."""
    judge_model: str = ""
    """judge: model name sent to the endpoint."""

    def __post_init__(self) -> None:
        if self.evaluator == "judge" and not (self.judge_url and self.judge_model):
            raise ValueError("credit.evaluator=judge needs credit.judge_url and credit.judge_model")
        if self.fault != "none" and self.evaluator == "none":
            raise ValueError(f"credit.fault={self.fault} breaks a step evaluator: set "
                             "credit.evaluator")
        if self.calibration_states < 2 or self.calibration_samples < 1:
            raise ValueError("credit.calibration_states must be >= 2, calibration_samples >= 1")


@dataclass(frozen=True)
class DPOConfig:
    pairs_from: str = "rollouts"
    """'rollouts' (rank sampled trajectories of one task by reward) or a JSONL path of
    {"prompt"?, "chosen", "rejected"} OpenAI-format conversations."""
    tasks: int = 64
    """rollouts: train tasks sampled for preference pairs."""
    group_size: int = 4
    """rollouts: samples per task; the best and worst (by reward) form a pair."""
    beta: float = 0.1
    """DPO temperature (strength of the implicit KL to the frozen reference)."""
    lr: float = 2e-4
    """Learning rate (AdamW, constant)."""
    epochs: int = 2
    """Passes over the pairs."""
    batch_size: int = 8
    """Pairs per optimiser step."""

    def __post_init__(self) -> None:
        if self.group_size < 2 or self.tasks < 1 or self.epochs < 1 or self.batch_size < 1:
            raise ValueError("dpo.group_size must be >= 2; dpo.tasks, epochs, batch_size >= 1")
        if self.beta <= 0:
            raise ValueError(f"dpo.beta must be > 0, got {self.beta}")


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
    seed: int | None = None
    """Seed of the held-out draw (null = the run's `seed`); fix it to score runs of
    several seeds on the same tasks. Families with a fixed held-out set ignore it."""


@dataclass(frozen=True)
class LogConfig:
    progress: bool = True
    """Show progress: a live bar on a terminal, else a line every progress_every_s."""
    progress_every_s: float = 30.0
    """Seconds between progress lines when the output is not a terminal."""
    keep_checkpoints: int = 3
    """Checkpoints kept besides the best one and each stage's start (0 = keep all)."""
    tensorboard: bool = True
    """Write TensorBoard event files to the run directory."""
    checkpoint_every: int = 10
    """Save a checkpoint every N RL steps (and at the end of each stage)."""
    wandb: str = ""
    """Also log metrics to this Weights & Biases project (or entity/project); empty = off.
    Needs pip install 'tracerl[wandb]'."""
    wandb_mode: Literal["offline", "online"] = "offline"
    """offline: W&B files in RUN_DIR/wandb, no account or network (upload later with
    `wandb sync RUN_DIR/wandb/offline-run-*`); online: live, needs `wandb login`."""
    mlflow: str = ""
    """Also log to MLflow: a tracking URI (http://host:5000, sqlite:///x.db) or a directory
    (becomes sqlite:///DIR/mlflow.db); empty = off. Needs pip install 'tracerl[mlflow]'."""
    mlflow_experiment: str = "tracerl"
    """MLflow experiment of the run (created when missing)."""

    def __post_init__(self) -> None:
        if self.wandb.count("/") > 1 or self.wandb.startswith("/") or self.wandb.endswith("/"):
            raise ValueError(f"log.wandb must be PROJECT or ENTITY/PROJECT, got {self.wandb!r}")
        if self.mlflow and not self.mlflow_experiment:
            raise ValueError("log.mlflow_experiment must name an experiment when log.mlflow is set")


@dataclass(frozen=True)
class TraceConfig:
    enabled: bool = True
    """Record every training and evaluation trajectory as spans in traces.sqlite."""
    otlp_endpoint: str = ""
    """Also export spans over OTLP/HTTP to this URL (Phoenix, Jaeger, Langfuse); empty = off."""
    process: bool = True
    """Build and store spans in a separate process (the rollout only pickles each
    trajectory); false: on a background thread of the trainer, sharing its GIL."""


@dataclass(frozen=True)
class TrainConfig:
    name: str = "calc-tiny"
    """Run name; the run directory is out_dir/name."""
    out_dir: str = "runs"
    """Parent directory of run directories."""
    seed: int = 0
    """Seeds model init, data, sampling and splits."""
    model: str = "tiny"
    """'tiny' (built-in, made locally), a pretrained model's name (smollm2-135m: built
    once into the user's cache) or a local Hugging Face model directory."""
    device: str = "cpu"
    """Torch device: cpu, cuda, cuda:0, ..."""
    runtime: Literal["local", "ray"] = "local"
    """Where an async RL run's rollout workers run: local (one worker process beside the
    learner) or ray (rollout and reward worker actors, the learner in this driver; needs
    pip install 'tracerl[ray]' and rl.mode=async; the `ray` section places them)."""
    threads: int = 0
    """Torch CPU threads (0 = auto: the cores not already busy, at least 1; see
    docs/benchmarks.md "Threads")."""
    dtype: Precision = "float32"
    """Training precision: float32, bfloat16 (weights; for a frozen LoRA base),
    bf16-autocast (float32 weights, bfloat16 forward passes) or auto (bfloat16 where the
    device has bfloat16 arithmetic, else float32; the run records the one chosen)."""
    gradient_checkpointing: bool = False
    """Recompute each block's activations in the backward pass (less memory, one more
    forward pass of the blocks per update)."""
    micro_batch_tokens: int = 0
    """Split every update (SFT, DPO, RL) into micro-batches of at most about this many
    decoder positions and accumulate their gradients: the same step, with one piece's
    activations in memory (0 = the whole batch at once). A group's shared prompt counts
    once and its rows stay together when they fit (tracerl.train.micro)."""
    reward: str = ""
    """Replace the family's outcome reward: code_tests, math_answer, or module:attribute
    naming a function of a Trajectory returning a float (None = could not judge) or a
    Reward class ('' = the family's own)."""
    stages: list[Stage] = field(default_factory=lambda: ["sft", "rl"])
    """Stages in order, each starting from the last one's weights."""
    tiny: TinySpec = field(default_factory=TinySpec)
    lora: LoraSettings = field(default_factory=LoraSettings)
    sampler: SamplerSettings = field(default_factory=SamplerSettings)
    task: TaskConfig = field(default_factory=TaskConfig)
    sft: SFTConfig = field(default_factory=SFTConfig)
    rl: RLConfig = field(default_factory=RLConfig)
    credit: CreditConfig = field(default_factory=CreditConfig)
    dpo: DPOConfig = field(default_factory=DPOConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    log: LogConfig = field(default_factory=LogConfig)
    trace: TraceConfig = field(default_factory=TraceConfig)
    guard: GuardConfig = field(default_factory=GuardConfig)
    ray: RayConfig = field(default_factory=RayConfig)

    @staticmethod
    def upgrade_keys(data: dict[str, Any]) -> dict[str, Any]:
        """Move keys of older configs (and older run directories) to where they live now,
        and put the named model's preset under what the user set."""
        return with_model_preset(upgrade_keys(data))

    def __post_init__(self) -> None:
        if not self.stages:
            raise ValueError("stages must name at least one of sft, dpo, rl")
        if len(set(self.stages)) != len(self.stages):
            raise ValueError(f"stages repeats a stage: {self.stages}")
        if self.micro_batch_tokens < 0:
            raise ValueError(f"micro_batch_tokens must be >= 0 (0 = no micro-batches), "
                             f"got {self.micro_batch_tokens}")
        if self.runtime == "ray" and self.rl.mode != "async":
            raise ValueError("runtime=ray runs rollout workers beside the learner: set "
                             "rl.mode=async (rl.max_staleness=0 keeps it nearly on-policy)")
        if self.sampler.backend == "vllm" and self.rl.top_p < 1.0:
            raise ValueError(f"sampler.backend=vllm needs rl.top_p=1 (got {self.rl.top_p}): "
                             "vLLM reports log-probabilities after top-p truncation")
        # The method table holds torch functions; it is read only when a config is built,
        # so importing this module (`--help`, the docs) stays torch-free.
        from tracerl.policy.precision import resolve_precision
        from tracerl.train.methods import check_methods

        object.__setattr__(self, "dtype", resolve_precision(self.dtype, self.device))
        check_methods(self.rl, self.credit.evaluator)


MOVED_KEYS = {
    "task.calls": "task.calc.calls",
    "task.skip_tool_prob": "task.calc.skip_tool_prob",
    "task.format_weight": "task.calc.format_weight",
    "task.path": "task.code.path",
    "task.dataset_format": "task.code.dataset_format",
    "task.maze_size": "task.maze.size",
    "task.maze_min_moves": "task.maze.min_moves",
    "task.maze_max_moves": "task.maze.max_moves",
    "task.maze_slack": "task.maze.slack",
    "task.maze_detour_prob": "task.maze.detour_prob",
}
"""Keys that moved into their family's section (the family registry, issue 10)."""


def upgrade_keys(data: dict[str, Any]) -> dict[str, Any]:
    """Rewrite moved keys in a nested config dict (a warning each); the input is unchanged.

    `rl.std_normalize` (the old second Dr.GRPO switch) becomes `rl.advantage=dr_grpo`:
    false with grpo maps to dr_grpo, true is the default and is dropped.
    """
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in data.items()}
    for old, new in MOVED_KEYS.items():
        section, key = old.split(".")
        if isinstance(out.get(section), dict) and key in out[section]:
            value = out[section].pop(key)
            _, family, name = new.split(".")
            target = out[section].setdefault(family, {})
            if isinstance(target, dict):
                target.setdefault(name, value)
            log.warning("config key %s is now %s", old, new)
    rl = out.get("rl")
    if isinstance(rl, dict) and "std_normalize" in rl:
        if rl.pop("std_normalize") is False:
            if rl.get("advantage", "grpo") != "grpo":
                raise ValueError("rl.std_normalize=false was the Dr.GRPO switch for grpo; "
                                 "it no longer exists: use rl.advantage=dr_grpo")
            rl["advantage"] = "dr_grpo"
        log.warning("config key rl.std_normalize is gone: Dr.GRPO is rl.advantage=dr_grpo")
    return out


def with_model_preset(data: dict[str, Any]) -> dict[str, Any]:
    """Defaults < the named model's preset (tracerl.policy.zoo) < YAML < key=value.

    `data` holds only what the user (or a saved config.yaml) set, so every key of the
    preset it does not mention is filled in; a saved run's config names every key and
    is left as it was."""
    out = copy.deepcopy(data)
    for dotted, value in preset(str(data.get("model", "tiny"))).items():
        node = out
        *sections, key = dotted.split(".")
        for name in sections:
            node = node.setdefault(name, {})
            node = node if isinstance(node, dict) else {}
        node.setdefault(key, value)
    return out

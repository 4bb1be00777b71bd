"""The `tracerl optimize` config: typed sections, each field documented (`--help`).

It reuses the training config's sections where the meaning is the same (the task
family `task.*`, the guard, the tiny policy's spec, the rollout settings), so a family
is configured for a search exactly as for training; `train_view` gives the TrainConfig
that builds the family and the runner through tracerl.train.runner, the code training
uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tracerl.guard.config import GuardConfig
from tracerl.optimize.budget import Budget
from tracerl.optimize.optimizers.bayesian import BayesianSearch
from tracerl.optimize.optimizers.gepa import GEPA
from tracerl.optimize.optimizers.metaprompt import MetaPrompt
from tracerl.optimize.optimizers.promptwizard import PromptWizard
from tracerl.optimize.optimizers.protegi import ProTeGi
from tracerl.optimize.optimizers.random_search import RandomSearch
from tracerl.optimize.settings import SearchSettings
from tracerl.optimize.teacher import TeacherSettings
from tracerl.policy.settings import Precision
from tracerl.policy.tiny import TinySpec
from tracerl.rollout.config import RolloutConfig
from tracerl.train.config import RLConfig, TaskConfig, TrainConfig

OptimizerName = Literal["random_search", "bayesian", "protegi", "metaprompt",
                        "promptwizard", "gepa"]


@dataclass(frozen=True)
class ModelConfig:
    name: str = "smollm2-135m"
    """'tiny', a zoo name (smollm2-135m) or a local transformers directory; with `url`,
    the model name the endpoint serves."""
    url: str = ""
    """OpenAI-compatible base URL (http://host:port/v1); empty = run `name` locally."""
    key_env: str = "OPENAI_API_KEY"
    """Environment variable holding the endpoint's API key (empty: send none)."""
    tokenizer: str = ""
    """Task model served at `url`: a local directory or zoo name with the same tokenizer
    and chat template (the runner renders prompts with it)."""


@dataclass(frozen=True)
class TeacherConfig(ModelConfig):
    name: str = ""
    """'' = the task model; else like `model.name`."""
    max_tokens: int = 160
    """Tokens a teacher reply may use at most."""
    temperature: float = 0.7
    """Sampling temperature of teacher replies."""

    def settings(self) -> TeacherSettings:
        return TeacherSettings(self.max_tokens, self.temperature)


@dataclass(frozen=True)
class PromptConfig:
    system: str = ""
    """Starting system prompt ('' = none)."""
    prefix: str = ""
    """Starting text put before each task's question."""
    instruction: str = ""
    """Starting text put after each task's question."""
    examples: list[str] = field(default_factory=list)
    """Starting few-shot examples (ids of the example pool)."""
    file: str = ""
    """A YAML or JSON file of the slots above (overrides them): e.g. a best_prompt.json."""


@dataclass(frozen=True)
class DataConfig:
    jsonl: str = ""
    """A JSONL file of tasks (docs/optimize.md); '' = the task family's splits."""
    train_tasks: int = 16
    """Search tasks candidates are scored on."""
    heldout_tasks: int = 32
    """Held-out tasks the best prompt and the starting prompt are reported on."""
    example_pool: int = 8
    """Few-shot pool: oracle demonstrations of train tasks (not search tasks)."""


def _rollout_defaults() -> RolloutConfig:
    return RolloutConfig(group_size=1, max_turns=4, max_turn_tokens=64,
                         max_response_tokens=256, temperature=0.0)


@dataclass(frozen=True)
class OptimizeConfig:
    name: str = "optimize"
    """Run name; the run directory is out_dir/name."""
    out_dir: str = "runs"
    """Parent directory of run directories."""
    seed: int = 0
    """Seeds data draws, the optimizer and sampling."""
    optimizer: OptimizerName = "gepa"
    """random_search, bayesian, protegi, metaprompt, promptwizard or gepa."""
    objective: str = ""
    """What a candidate maximizes: '' = the family's reward; code_tests, math_answer or
    module:attribute (a Reward); metric:NAME[:k=v,...] (an evaluate() metric, as in
    `tracerl eval --metric`); per_turn:NAME[...] (its mean over each turn's prefix)."""
    device: str = "cpu"
    """Torch device of local models."""
    dtype: Precision = "float32"
    """Weights of local models: float32, bfloat16 (faster sampling on CPUs with bfloat16
    arithmetic) or auto (bfloat16 where the device has it, else float32)."""
    threads: int = 0
    """Torch CPU threads (0 = auto)."""
    cache: str = ""
    """Response cache (SQLite) path; '' = RUN_DIR/cache.sqlite. Share one file between
    runs to never pay twice for the same request."""
    heldout: bool = True
    """Score the starting and the best prompt on the held-out tasks at the end (its
    calls are reported apart and do not count against the budget)."""
    model: ModelConfig = field(default_factory=ModelConfig)
    teacher: TeacherConfig = field(default_factory=TeacherConfig)
    prompt: PromptConfig = field(default_factory=PromptConfig)
    data: DataConfig = field(default_factory=DataConfig)
    budget: Budget = field(default_factory=Budget)
    search: SearchSettings = field(default_factory=SearchSettings)
    rollout: RolloutConfig = field(default_factory=_rollout_defaults)
    random_search: RandomSearch = field(default_factory=RandomSearch)
    bayesian: BayesianSearch = field(default_factory=BayesianSearch)
    protegi: ProTeGi = field(default_factory=ProTeGi)
    metaprompt: MetaPrompt = field(default_factory=MetaPrompt)
    promptwizard: PromptWizard = field(default_factory=PromptWizard)
    gepa: GEPA = field(default_factory=GEPA)
    task: TaskConfig = field(default_factory=TaskConfig)
    guard: GuardConfig = field(default_factory=GuardConfig)
    tiny: TinySpec = field(default_factory=TinySpec)
    progress: bool = True
    """Show progress: a live bar on a terminal, else a line every progress_every_s."""
    progress_every_s: float = 30.0
    """Seconds between progress lines when the output is not a terminal."""
    trace: bool = True
    """Record every scored rollout as spans in RUN_DIR/traces.sqlite."""

    def __post_init__(self) -> None:
        from tracerl.policy.precision import resolve_precision

        object.__setattr__(self, "dtype", resolve_precision(self.dtype, self.device))
        if self.data.train_tasks < 1:
            raise ValueError(f"data.train_tasks must be >= 1, got {self.data.train_tasks}")
        if self.data.heldout_tasks < 0 or self.data.example_pool < 0:
            raise ValueError("data.heldout_tasks and data.example_pool must be >= 0")
        if self.model.url and not (self.model.tokenizer and self.model.name):
            raise ValueError("model.url needs model.name (the served model) and "
                             "model.tokenizer (a local directory or zoo name of its tokenizer)")
        if self.teacher.url and not self.teacher.name:
            raise ValueError("teacher.url needs teacher.name (the served model)")

    def optimizer_settings(self) -> object:
        """This run's optimizer with its section's knobs."""
        return getattr(self, self.optimizer)


def train_view(config: OptimizeConfig) -> TrainConfig:
    """The TrainConfig that builds this search's family and runner (train/runner.py).
    Its rl section carries the rollout settings; the search passes group size and
    temperature on every call, since RL needs groups of two or more and a search does not."""
    rollout = config.rollout
    rl = RLConfig(group_size=max(2, rollout.group_size), max_turns=rollout.max_turns,
                  max_turn_tokens=rollout.max_turn_tokens,
                  max_response_tokens=rollout.max_response_tokens,
                  temperature=rollout.temperature, top_p=rollout.top_p)
    model = config.model.tokenizer if config.model.url else config.model.name
    return TrainConfig(name=config.name, out_dir=config.out_dir, seed=config.seed, model=model,
                       device=config.device, task=config.task, guard=config.guard, rl=rl,
                       tiny=config.tiny)

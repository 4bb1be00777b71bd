"""Building the rollout side of a run from its config: the task family, the sampler and
the runner.

The Trainer, `tracerl eval` of a run directory and anyone writing their own loop build
these the same way, so a run is evaluated on exactly the family and rollout settings it
was trained with.
"""

from __future__ import annotations

from pathlib import Path

from tracerl.envs.family import FamilyWithReward, TaskFamily
from tracerl.envs.registry import FamilyContext, build_family, resolve
from tracerl.guard.pipeline import Guard
from tracerl.policy.model import Policy, describes_tools, describes_tools_at
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import Sampler
from tracerl.policy.weight_sync import EngineSync
from tracerl.policy.zoo import MissingExtraError
from tracerl.rewards.audit import resolve_reward
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutRunner
from tracerl.train.config import TrainConfig
from tracerl.train.configlib import ConfigError


def describe_tools(config: TrainConfig, model: Policy | str | Path | None = None) -> bool:
    """Whether the family describes its tools in the prompt: `task.describe_tools`, or
    (auto) what the model records (policy/model.py `DESCRIBE_TOOLS_KEY`): a loaded
    Policy's, a model directory's (or a checkpoint's) config.json, else the one
    `config.model` names. A model that records nothing is described the tools (a
    pretrained model cannot guess them), except in a run of the built-in tiny: its
    checkpoints written before the key existed hold none."""
    setting = config.task.describe_tools
    if setting != "auto":
        return bool(setting == "true")
    if isinstance(model, Policy):
        recorded = describes_tools(model.model.config)
    else:
        recorded = describes_tools_at(config.model if model is None else model)
    return config.model != "tiny" if recorded is None else recorded


def build_task_family(config: TrainConfig, model: Policy | str | Path | None = None
                      ) -> TaskFamily:
    """The configured family through the registry (every family gets the guard), with
    its outcome reward replaced when `reward` names one. `model` is the one it is for
    (see `describe_tools`).
    """
    task = config.task
    guard = Guard(config.guard) if config.guard.enabled else None
    context = FamilyContext(guard=guard, tool_timeout_s=task.tool_timeout_s,
                            describe_tools=describe_tools(config, model))
    try:
        family = build_family(task.family, task.section(), context, task.family_args)
        if not config.reward:
            return family
        return FamilyWithReward(family, resolve_reward(config.reward))  # type: ignore[arg-type]
    except ValueError as e:  # a user's reference that does not resolve: name the key
        raise ConfigError(str(e)) from e


def check_references(config: TrainConfig, family: bool = True, reward: bool = True) -> None:
    """A ConfigError now, before a run directory or a model is made, when `task.family`
    (with `family`) or `reward` (with `reward`) names something that does not import, or
    an object from Python that was not recorded (tracerl.util.refs)."""
    try:
        if family:
            resolve(config.task.family, config.task.family_args)
        if reward and config.reward:
            resolve_reward(config.reward)
    except ValueError as e:
        raise ConfigError(str(e)) from e


def check_sampler(config: TrainConfig) -> None:
    """A ConfigError now, before a run directory or a model is made, when the configured
    backend cannot run here (vLLM without vLLM or a GPU)."""
    if config.sampler.backend == "vllm":
        from tracerl.policy.vllm_sampler import check_vllm

        try:
            check_vllm()
        except MissingExtraError as e:
            raise ConfigError(str(e)) from e


def build_sampler(config: TrainConfig, policy: Policy, seed: int | None = None) -> Sampler:
    """The configured generation backend (`sampler.backend`) over `policy`, seeded with
    `seed` (default `config.seed`)."""
    seed = config.seed if seed is None else seed
    if config.sampler.backend == "vllm":
        # Imported here: the vLLM sampler is the one backend that needs an optional extra.
        from tracerl.policy.vllm_sampler import VLLMSampler

        try:
            return VLLMSampler.for_policy(policy, config.sampler, seed, config.lora)
        except (MissingExtraError, ValueError) as e:
            raise ConfigError(str(e)) from e
    return TransformersSampler(policy.model, policy.pad_id, seed=seed,
                               tokenizer=policy.tokenizer, max_rows=config.sampler.max_rows,
                               prefix_cache_mb=config.sampler.prefix_cache_mb,
                               merge_lora=config.sampler.merge_lora)


def engine_sync(config: TrainConfig, sampler: Sampler) -> EngineSync | None:
    """The learner's handle for syncing weights into `sampler`, when it holds its own copy
    of them (not the transformers sampler, which samples from the learner's model)."""
    return EngineSync(sampler) if config.sampler.backend != "transformers" else None  # type: ignore[arg-type]


def build_runner(config: TrainConfig, policy: Policy, family: TaskFamily,
                 sampler: Sampler | None = None) -> RolloutRunner:
    """A runner with the run's rollout settings (`rl.*`) and guard penalty.

    `sampler` defaults to `build_sampler(config, policy)`; pass another Sampler (a served
    engine) to roll out elsewhere.
    """
    if sampler is None:
        sampler = build_sampler(config, policy)
    # a policy served elsewhere (model None) has no context length known here
    context = getattr(getattr(policy.model, "config", None), "max_position_embeddings", 0) or 0
    return RolloutRunner(sampler, ChatRenderer(policy.tokenizer), policy.stop_ids,
                         family.make_env, family.reward, config.rl,
                         guard_penalty=config.guard.penalty, context_tokens=context)

"""Building the rollout side of a run from its config: the task family, the sampler and
the runner.

The Trainer, `tracerl eval` of a run directory and anyone writing their own loop build
these the same way, so a run is evaluated on exactly the family and rollout settings it
was trained with.
"""

from __future__ import annotations

from tracerl.envs.family import FamilyWithReward, TaskFamily
from tracerl.envs.registry import FamilyContext, build_family
from tracerl.guard.pipeline import Guard
from tracerl.policy.model import Policy
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import Sampler
from tracerl.policy.weight_sync import EngineSync
from tracerl.policy.zoo import MissingExtraError
from tracerl.rewards.audit import resolve_reward
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutRunner
from tracerl.train.config import TrainConfig
from tracerl.train.configlib import ConfigError


def build_task_family(config: TrainConfig) -> TaskFamily:
    """The configured family through the registry (every family gets the guard), with
    its outcome reward replaced when `reward` names one.

    Tools are described to every model but the tiny policy: a pretrained model cannot
    guess them, while tiny learns them from demonstrations and would only pay for the
    longer prompt (a character per token).
    """
    task = config.task
    guard = Guard(config.guard) if config.guard.enabled else None
    context = FamilyContext(guard=guard, tool_timeout_s=task.tool_timeout_s,
                            describe_tools=config.model != "tiny")
    try:
        family = build_family(task.family, task.section(), context)
        if not config.reward:
            return family
        return FamilyWithReward(family, resolve_reward(config.reward))  # type: ignore[arg-type]
    except ValueError as e:  # a user's reference that does not resolve: name the key
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
                               tokenizer=policy.tokenizer, max_rows=config.sampler.max_rows)


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
    context = getattr(policy.model.config, "max_position_embeddings", 0) or 0
    return RolloutRunner(sampler, ChatRenderer(policy.tokenizer), policy.stop_ids,
                         family.make_env, family.reward, config.rl,
                         guard_penalty=config.guard.penalty, context_tokens=context)

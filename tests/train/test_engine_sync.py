"""The learner's side of weight sync through the real RL step: a sampler that holds its own
copy of the weights is released before the update and synced after it, so the next
rollout samples from the updated policy; `sampler.backend=vllm` without vLLM or a GPU is
a config error that names the extra."""

import copy
import importlib.util

import pytest
import torch

from tracerl.policy.lora import trainable_parameters
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampler_settings import SamplerSettings
from tracerl.policy.sampling import WeightSync
from tracerl.policy.weight_sync import EngineSync, ReleasesMemory
from tracerl.train.config import RLConfig, TrainConfig
from tracerl.train.configlib import ConfigError
from tracerl.train.rl_step import RLStep
from tracerl.train.runner import build_runner, build_sampler, engine_sync
from tracerl.train.step import rl_step
from tracerl.train.trainer import Trainer


class CopyEngine(TransformersSampler):
    """An engine with its own copy of the policy (as vLLM has), on the CPU: it samples
    from `self.model`, a deep copy, and loads synced tensors into it by name."""

    def __init__(self, policy) -> None:
        super().__init__(copy.deepcopy(policy.model), policy.pad_id, seed=0,
                         tokenizer=policy.tokenizer)
        self.events: list[str] = []
        self.names: list[str] = []

    def release_memory(self) -> None:
        self.events.append("release")

    @torch.no_grad()
    def load_weights(self, weights) -> None:
        params = dict(self.model.named_parameters())
        for name, tensor in weights:
            params[name].copy_(tensor)
            self.names.append(name)
        self.events.append("load")


def _step(policy, engine_sampler, family):
    rl = RLConfig(lr=1e-2, tasks_per_step=4, group_size=4, max_turns=1, max_turn_tokens=6)
    config = TrainConfig(rl=rl, stages=["rl"])
    runner = build_runner(config, policy, family, engine_sampler)
    engine = EngineSync(engine_sampler)
    learner = RLStep(policy, config, family, runner, engine=engine)
    opt = torch.optim.AdamW(trainable_parameters(policy.model), lr=rl.lr)
    torch.manual_seed(0)
    return rl_step(learner, runner, family, opt, 0), engine


def test_the_engine_sleeps_through_the_update_and_then_holds_the_new_weights(
        fresh_tiny_policy, parity_family):
    sampler = CopyEngine(fresh_tiny_policy)
    assert isinstance(sampler, WeightSync) and isinstance(sampler, ReleasesMemory)
    before = {n: p.detach().clone() for n, p in fresh_tiny_policy.model.named_parameters()}
    result, engine = _step(fresh_tiny_policy, sampler, parity_family)
    assert sampler.events == ["release", "load"] and engine.pushes == 1
    assert result.metrics.times.sync_s > 0 and "sync_s" in result.metrics.record()
    learner = dict(fresh_tiny_policy.model.named_parameters())
    assert any(not torch.equal(learner[n], before[n]) for n in before)  # it did update
    for name, p in sampler.model.named_parameters():
        assert torch.equal(p, learner[name]), name


@pytest.mark.slow
def test_a_lora_learner_pushes_the_adapter_alone(lora_policy, parity_family):
    sampler = CopyEngine(lora_policy)
    _step(lora_policy, sampler, parity_family)
    assert sampler.names and all("lora_" in n for n in sampler.names)
    learner = dict(lora_policy.model.named_parameters())
    for name, p in sampler.model.named_parameters():
        assert torch.equal(p, learner[name]), name


def test_everything_sends_the_frozen_base_too(lora_policy):
    sampler = CopyEngine(lora_policy)
    EngineSync(sampler).push(lora_policy.model, everything=True)
    assert any(".base_layer." in n for n in sampler.names)
    assert len(sampler.names) == len(list(lora_policy.model.named_parameters()))


def test_only_a_sampler_with_its_own_weights_gets_an_engine_sync(tiny_policy):
    config = TrainConfig()
    sampler = build_sampler(config, tiny_policy)
    assert isinstance(sampler, TransformersSampler) and engine_sync(config, sampler) is None
    with pytest.raises(TypeError, match="load_weights"):
        EngineSync(object())  # type: ignore[arg-type]


def test_the_vllm_backend_without_vllm_or_a_gpu_is_a_config_error_naming_the_extra(
        tmp_path, tiny_policy):
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present: the vLLM backend may build here")
    config = TrainConfig(sampler=SamplerSettings(backend="vllm"))
    with pytest.raises(ConfigError) as err:
        build_sampler(config, tiny_policy)
    message = str(err.value)
    assert "sees no CUDA GPU" in message and "sampler.backend=transformers" in message
    if importlib.util.find_spec("vllm") is None:
        assert "pip install 'tracerl[vllm]'" in message
    with pytest.raises(ConfigError, match="needs vLLM and a CUDA GPU"):
        Trainer(TrainConfig(out_dir=str(tmp_path), sampler=config.sampler, stages=["rl"]))
    assert not any(tmp_path.iterdir())  # refused before a run directory was made


def test_the_vllm_backend_refuses_top_p_below_one():
    with pytest.raises(ValueError, match="rl.top_p=1"):
        TrainConfig(sampler=SamplerSettings(backend="vllm"), rl=RLConfig(top_p=0.9))

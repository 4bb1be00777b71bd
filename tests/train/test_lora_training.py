"""LoRA through the training path: an RL step trains only the adapter against the
disabled-adapter reference; a run's checkpoints hold the adapter, resume restores it and
`tracerl export` merges it into a model `load_policy` reads."""

import pytest
import torch

from tracerl.cli import main
from tracerl.policy.lora import has_adapter, trainable_parameters
from tracerl.policy.model import load_policy
from tracerl.train import configlib
from tracerl.train.config import RLConfig, TrainConfig
from tracerl.train.reference import Reference
from tracerl.train.rl_step import RLStep
from tracerl.train.runner import build_runner
from tracerl.train.step import rl_step
from tracerl.train.trainer import Trainer


def test_a_lora_rl_step_trains_only_the_adapter_against_the_disabled_adapter(lora_policy,
                                                                             parity_family):
    policy = lora_policy
    rl = RLConfig(lr=1e-2, tasks_per_step=4, group_size=4, max_turns=1, max_turn_tokens=6,
                  kl_coef=0.5)
    config = TrainConfig(rl=rl, stages=["rl"])
    family = parity_family
    runner = build_runner(config, policy, family)
    learner = RLStep(policy, config, family, runner, Reference.of(policy.model))
    before = {n: p.detach().clone() for n, p in policy.model.named_parameters()}
    opt = torch.optim.AdamW(trainable_parameters(policy.model), lr=rl.lr)
    torch.manual_seed(0)
    update = rl_step(learner, runner, family, opt, 0).metrics.update.update
    assert update is not None and update.kl > 0  # the adapter moves the policy off its base
    for name, p in policy.model.named_parameters():
        changed = not torch.equal(p, before[name])
        assert changed == ("lora_" in name), name


TINY = ["tiny.hidden_size=32", "tiny.layers=1", "tiny.heads=2", "tiny.intermediate_size=64",
        "task.calc.calls=1", "sft.demos=32", "sft.batch_size=16", "rl.tasks_per_step=2",
        "rl.group_size=2", "rl.max_turn_tokens=24", "rl.max_response_tokens=96",
        "eval.tasks=2", "log.progress=false", "log.tensorboard=false", "trace.enabled=false",
        "lora.r=4", "rl.kl_coef=0.1", "rl.steps=2", "log.checkpoint_every=1"]


@pytest.mark.slow  # trains SFT then RL, resumes, exports
def test_a_lora_run_checkpoints_the_adapter_resumes_it_and_exports_it_merged(tmp_path):
    cfg = configlib.load(TrainConfig, None, [f"out_dir={tmp_path}", "name=run", *TINY])
    run_dir = tmp_path / "run"
    trainer = Trainer(cfg, run_dir)
    trainer.run()
    latest = run_dir / "checkpoints" / (run_dir / "checkpoints" / "latest").read_text()
    assert not (latest / "model.safetensors").exists()
    full = (run_dir / "base-stage1" / "model.safetensors").stat().st_size
    assert (latest / "adapter_model.safetensors").stat().st_size < full / 4

    resumed = Trainer(cfg, run_dir, resume=True).policy.model
    assert has_adapter(resumed)
    want = trainer.policy.model.state_dict()
    got = resumed.state_dict()
    assert want.keys() == got.keys() and all(torch.equal(want[k], got[k]) for k in want)

    assert main(["export", str(run_dir), "--out", str(tmp_path / "merged")]) == 0
    merged = load_policy(tmp_path / "merged").model
    ids = torch.tensor([[5, 17, 33, 8, 61, 12, 40]])
    with torch.no_grad():
        torch.testing.assert_close(merged(input_ids=ids).logits,
                                   resumed(input_ids=ids).logits, atol=1e-5, rtol=0)

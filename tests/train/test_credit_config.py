"""Config knobs of issue 4, and the stages sft -> dpo -> rl end to end through Trainer."""

import json

import pytest
import torch

from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.configlib import ConfigError
from tracerl.train.rl_step import RLStep
from tracerl.train.trainer import Trainer

TINY = ["tiny.hidden_size=32", "tiny.heads=2", "tiny.layers=1", "tiny.intermediate_size=64",
        "log.progress=false", "log.tensorboard=false", "trace.enabled=false", "eval.tasks=2",
        "rl.steps=1", "rl.tasks_per_step=2", "rl.group_size=2", "rl.max_turn_tokens=12",
        "rl.max_turns=2"]


def test_knobs_are_reachable_from_overrides():
    cfg = configlib.load(TrainConfig, None, [
        "rl.advantage=gae", "rl.policy_loss=cispo", "rl.tis_cap=2.0", "rl.kl_placement=reward",
        "rl.overlong_max=400", "rl.dynamic_sampling=true", "credit.evaluator=subgoal",
        "stages=[sft, dpo, rl]"])
    assert (cfg.rl.advantage, cfg.rl.policy_loss, cfg.stages) == ("gae", "cispo",
                                                                  ["sft", "dpo", "rl"])


@pytest.mark.parametrize("override,message", [
    ("rl.advantage=ppo2", "rl.advantage"),
    ("rl.dual_clip=0.5", "dual_clip"),
    ("credit.evaluator=judge", "judge_url"),
    ("rl.advantage=mt_grpo", "credit.evaluator"),
])
def test_bad_credit_settings_are_named(override, message):
    with pytest.raises(ConfigError, match=message):
        configlib.load(TrainConfig, None, [override])


def test_every_new_knob_has_help_text():
    rows = configlib.describe(TrainConfig)
    assert all(doc for key, _, _, doc in rows if key.startswith(("credit.", "dpo.", "rl.")))


def test_sft_dpo_rl_stages_run_in_one_config(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"prompt": [{"role": "user", "content": "Compute 2*3."}],
                                 "chosen": [{"role": "assistant", "content": "Answer: 6"}],
                                 "rejected": [{"role": "assistant", "content": "Answer: 5"}]}))
    cfg = configlib.load(TrainConfig, None, TINY + [
        "stages=[sft, dpo, rl]", "task.calls=1", "sft.demos=8", "sft.batch_size=8",
        f"dpo.pairs_from={pairs}", "dpo.epochs=1", "rl.advantage=gae", "rl.critic_warmup=0"])
    summary = Trainer(cfg, tmp_path / "run").run()
    phases = {json.loads(line)["stage"] for line in
              (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()}
    assert {"sft", "dpo", "rl"} <= phases
    assert summary.steps == 1


def test_turn_level_credit_on_maze_runs_calibration_and_falls_back(tmp_path):
    # an untrained policy never reaches the goal: every Monte Carlo value is 0, so the
    # sub-goal evaluator cannot be shown to track outcomes and must not be trusted
    cfg = configlib.load(TrainConfig, None, TINY + [
        "stages=[rl]", "task.family=maze", "rl.advantage=mt_grpo", "credit.evaluator=subgoal",
        "credit.calibration_states=4", "credit.calibration_samples=1",
        "rl.drop_uniform_groups=false"])
    Trainer(cfg, tmp_path / "run").run()
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text()
            .splitlines()]
    rl = [r for r in rows if r["stage"] == "rl"]
    assert rl and rl[0]["calib_trusted"] == 0.0


def test_the_critic_is_checkpointed_and_restored(tmp_path):
    cfg = configlib.load(TrainConfig, None, TINY + [
        "stages=[rl]", "task.calls=1", "rl.advantage=gae", "rl.steps=2",
        "log.checkpoint_every=1"])
    trainer = Trainer(cfg, tmp_path / "run")
    trainer.run()
    checkpoint = tmp_path / "run" / "checkpoints" / "stage0-step000002"
    assert (checkpoint / "critic.pt").is_file()
    with torch.no_grad():
        trainer.rl.critic.head.bias.fill_(0.5)
    trainer.rl.save(checkpoint)
    fresh = RLStep(trainer.policy, cfg, trainer.family, trainer.runner)
    assert fresh.critic.head.bias.item() == 0.0
    fresh.load(checkpoint)
    assert fresh.critic.head.bias.item() == 0.5

"""The Python API as small as the CLI: a Trainer over a task list and a model object,
and what rewards read (`final_text` without special tokens)."""

import random

import pytest

from tracerl.envs import TaskListFamily, ToolEnv
from tracerl.policy import policy_from_model
from tracerl.train import TrainConfig, Trainer, configlib
from tracerl.types import Message, Task

TINY = ["log.progress=false", "log.tensorboard=false", "trace.enabled=false", "eval.tasks=4",
        "rl.steps=2", "rl.tasks_per_step=2", "rl.group_size=2", "rl.max_turns=1",
        "rl.max_turn_tokens=8", "stages=[rl]"]


def _tasks(split: str, n: int) -> list[Task]:
    return [Task(f"{split}-{i}", (Message("user", f"Say {i}"),), answer=str(i))
            for i in range(n)]


def test_trainer_takes_a_task_list_an_env_factory_a_reward_and_a_model_object(
        tmp_path, fresh_tiny_policy):
    seen = []

    def says_the_number(trajectory) -> float:
        seen.append(trajectory.final_text)
        return float(trajectory.task.answer in trajectory.final_text)

    family = TaskListFamily(lambda: ToolEnv([]), _tasks("train", 6), _tasks("heldout", 3),
                            says_the_number, name="say")
    policy = policy_from_model(fresh_tiny_policy.model, fresh_tiny_policy.tokenizer, "mine")
    config = configlib.load(TrainConfig, None, [f"out_dir={tmp_path}", "name=api", *TINY])
    trainer = Trainer(config, family=family, policy=policy)
    summary = trainer.run()
    assert summary.steps == 2 and summary.model == "mine"
    assert trainer.policy.model is fresh_tiny_policy.model  # trained in place, not reloaded
    assert seen and not any("<|im_end|>" in text for text in seen)
    assert (tmp_path / "api" / "checkpoints" / "latest").is_file()


def test_a_task_list_family_keeps_its_splits_apart():
    with pytest.raises(ValueError, match="share task ids"):
        TaskListFamily(lambda: ToolEnv([]), _tasks("x", 2), _tasks("x", 2), lambda t: 0.0)
    family = TaskListFamily(lambda: ToolEnv([]), _tasks("train", 3), _tasks("heldout", 2),
                            lambda t: 0.0)
    assert family.tasks("train", 2, seed=1) == family.tasks("train", 2, seed=1)
    assert len(family.tasks("heldout", 5, seed=0)) == 5
    with pytest.raises(ValueError, match="no demonstrations"):
        family.demonstration(_tasks("train", 1)[0], random.Random(0))


def test_sft_without_demonstrations_is_a_clear_error(tmp_path, fresh_tiny_policy):
    family = TaskListFamily(lambda: ToolEnv([]), _tasks("train", 2), _tasks("heldout", 2),
                            lambda t: 0.0)
    config = configlib.load(TrainConfig, None, [f"out_dir={tmp_path}", "name=s", *TINY[:-1],
                                                "stages=[sft]", "sft.demos=4"])
    with pytest.raises(ValueError, match="stages=\\[rl\\]"):
        Trainer(config, family=family, policy=fresh_tiny_policy).run()


def test_eval_seed_scores_runs_of_several_seeds_on_the_same_held_out_tasks(
        tmp_path, fresh_tiny_policy):
    def heldout(*overrides: str) -> list:
        config = configlib.load(TrainConfig, None, [f"out_dir={tmp_path}", "name=h", *TINY,
                                                    "task.family=calc", *overrides])
        trainer = Trainer(config, policy=fresh_tiny_policy)
        return [t.messages for t in trainer.heldout]

    assert heldout("seed=1", "eval.seed=0") == heldout("seed=0")
    assert heldout("seed=1") != heldout("seed=0")
    with pytest.raises(configlib.ConfigError, match="eval.seed"):
        configlib.load(TrainConfig, None, ["eval.seed=first"])

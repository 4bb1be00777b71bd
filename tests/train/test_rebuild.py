"""A family or reward given from Python is recorded so that eval and --resume rebuild
it, or refused there by name; never replaced by the default family (issue 33)."""

import pytest

from tracerl.envs import TaskListFamily, ToolEnv
from tracerl.envs.calc import CalcFamily
from tracerl.train import TrainConfig, Trainer, configlib
from tracerl.train.configlib import ConfigError
from tracerl.train.evaluate import evaluate_checkpoint
from tracerl.train.rebuild import record_family, record_reward
from tracerl.train.runner import build_task_family
from tracerl.types import Message, Task

TINY = ["log.progress=false", "log.tensorboard=false", "trace.enabled=false", "eval.tasks=2",
        "rl.steps=1", "rl.tasks_per_step=2", "rl.group_size=2", "rl.max_turns=1",
        "rl.max_turn_tokens=4", "stages=[rl]"]


def says_it(trajectory) -> float:
    return float(str(trajectory.task.answer) in trajectory.final_text)


class SmallCalc(CalcFamily):
    """A family class of an importable module, with an argument of its own."""

    def __init__(self, guard=None, describe_tools: bool = False, calls: int = 1) -> None:
        super().__init__(guard=guard, describe_tools=describe_tools)
        self.calls = calls


def _tasks(split: str) -> list[Task]:
    return [Task(f"{split}-{i}", (Message("user", f"Say {i}"),), answer=str(i))
            for i in range(3)]


def _config(tmp_path, *extra: str) -> TrainConfig:
    return configlib.load(TrainConfig, None, [f"out_dir={tmp_path}", *TINY, *extra])


def test_an_importable_family_is_recorded_with_its_arguments_and_rebuilt(tmp_path):
    config, note = record_family(_config(tmp_path), SmallCalc(calls=2))
    assert note is None
    assert config.task.family == f"{__name__}:SmallCalc"
    assert config.task.family_args == {"calls": 2}
    saved = configlib.load(TrainConfig, None, base=configlib.to_dict(config))
    rebuilt = build_task_family(saved)
    assert type(rebuilt) is SmallCalc and rebuilt.calls == 2


def test_a_module_function_reward_is_recorded_and_a_lambda_is_not(tmp_path):
    config, note = record_reward(_config(tmp_path), says_it)
    assert config.reward == f"{__name__}:says_it" and note is None
    config, note = record_reward(_config(tmp_path), lambda t: 1.0)
    assert config.reward.startswith("<python") and "lambda" in note


def test_a_family_that_cannot_be_recorded_is_refused_by_eval_and_resume(
        tmp_path, fresh_tiny_policy, capsys):
    family = TaskListFamily(lambda: ToolEnv([]), _tasks("train"), _tasks("heldout"), says_it,
                            name="say")
    trainer = Trainer(_config(tmp_path, "name=say"), family=family, policy=fresh_tiny_policy)
    trainer.run()
    assert "the task family 'say' given from Python cannot be recorded" in \
        capsys.readouterr().err  # said at start, progress off or not
    run = tmp_path / "say"
    saved = (run / "config.yaml").read_text()
    assert "family: calc" not in saved and "<python: say;" in saved
    with pytest.raises(ConfigError, match="task.family=module:attribute"):
        evaluate_checkpoint(run, [], tasks=2, k=1, temperature=1.0)
    resumed = configlib.load(TrainConfig, str(run / "config.yaml"), ["rl.steps=2"])
    with pytest.raises(ConfigError, match="task.family=module:attribute"):
        Trainer(resumed, run, resume=True)
    # named explicitly, the run evaluates (on the family named, not a guess)
    report = evaluate_checkpoint(run, [f"task.family={__name__}:SmallCalc"], tasks=2, k=1,
                                 temperature=1.0)
    assert report.family == "calc" and report.tasks == 2

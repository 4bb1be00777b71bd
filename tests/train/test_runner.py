"""Whether a family describes its tools is the model's recorded property (or the
`task.describe_tools` key), never a guess from the model's name (issue 33)."""

import json

from tracerl.cli import main
from tracerl.policy.model import DESCRIBE_TOOLS_KEY, describes_tools_at, load_policy
from tracerl.train import TrainConfig, Trainer, configlib
from tracerl.train.checkpoint import TrainerState, save_checkpoint
from tracerl.train.runner import build_task_family

QUIET = ["log.progress=false", "log.tensorboard=false", "trace.enabled=false",
         "eval.tasks=1", "rl.steps=0", "stages=[rl]", "rl.max_turn_tokens=4"]


def _family(model: str, *extra: str, policy=None):
    config = configlib.load(TrainConfig, None, [f"model={model}", *extra])
    return build_task_family(config, policy)


def test_an_exported_tiny_model_is_still_not_shown_the_tools(tmp_path, tiny_policy):
    """Trained from `model=runs/X/export`, the prompts stay what tiny learned on (a
    description it never saw dropped success from 0.92 to 0.00)."""
    save_checkpoint(tmp_path / "run", tiny_policy, TrainerState(), None, {})
    (tmp_path / "run" / "config.yaml").write_text("{}\n")
    assert main(["export", str(tmp_path / "run")]) == 0
    export = tmp_path / "run" / "export"
    assert json.loads((export / "config.json").read_text())[DESCRIBE_TOOLS_KEY] is False
    assert describes_tools_at(export) is False
    assert _family(str(export)).describe_tools is False
    assert _family(str(export), policy=load_policy(export)).describe_tools is False
    task = _family(str(export)).tasks("heldout", 1, seed=0)[0]
    assert task.messages == _family("tiny").tasks("heldout", 1, seed=0)[0].messages


def test_a_model_that_records_nothing_is_shown_the_tools_and_the_key_decides(tmp_path,
                                                                             tiny_policy):
    tiny_policy.model.config.save_pretrained(tmp_path)  # a model directory's config.json
    config = json.loads((tmp_path / "config.json").read_text())
    del config[DESCRIBE_TOOLS_KEY]  # as a pretrained model's
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert _family(str(tmp_path)).describe_tools is True
    # a checkpoint of a tiny run from before the key existed: the run says tiny
    assert _family("tiny", policy=str(tmp_path)).describe_tools is False
    assert _family(str(tmp_path), "task.describe_tools=false").describe_tools is False
    assert _family("tiny", "task.describe_tools=true").describe_tools is True


def test_the_trainer_records_its_choice_in_the_checkpoints(tmp_path, fresh_tiny_policy):
    config = configlib.load(TrainConfig, None, [f"out_dir={tmp_path}", "name=d", *QUIET,
                                                "task.describe_tools=true"])
    trainer = Trainer(config, policy=fresh_tiny_policy)
    assert trainer.family.describe_tools is True
    trainer.run()
    latest = (tmp_path / "d" / "checkpoints" / "latest").read_text().strip()
    saved = json.loads((tmp_path / "d" / "checkpoints" / latest / "config.json").read_text())
    assert saved[DESCRIBE_TOOLS_KEY] is True
    auto = configlib.load(TrainConfig, None, [f"out_dir={tmp_path}", "name=a", *QUIET])
    Trainer(auto)  # the built-in tiny records false: what auto chose is saved
    assert "describe_tools: 'false'" in (tmp_path / "a" / "config.yaml").read_text()

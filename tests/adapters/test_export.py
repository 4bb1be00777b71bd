"""Exported JSONL loaded by TRL's own code: datasets' json loader, then the SFT and DPO
trainers' dataset preparation (chat template and tokenisation)."""

import json

import pytest

from tracerl.adapters.export import dpo_records, message_dict, sft_records, write_jsonl
from tracerl.envs.calc import CalcFamily
from tracerl.rollout.config import RolloutConfig
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutRunner
from tracerl.types import Message, Status, ToolCall


@pytest.fixture
def groups(fresh_tiny_policy, oracle_sampler):
    family = CalcFamily(calls=1, skip_tool_prob=0.0)
    tasks = family.tasks("train", 2, seed=0)
    runner = RolloutRunner(oracle_sampler(fresh_tiny_policy.tokenizer, family, tasks),
                           ChatRenderer(fresh_tiny_policy.tokenizer),
                           fresh_tiny_policy.stop_ids, family.make_env, family.reward,
                           RolloutConfig(group_size=3, max_turns=3))
    out = runner.run(tasks)
    out[0].trajectories[1].outcome_reward = 0.0  # a worse sample to prefer against
    out[1].trajectories[2].status = Status.ERROR  # never exported
    out[1].trajectories[2].outcome_reward = None
    return out


def test_records_follow_trl_formats(groups):
    trajs = [t for g in groups for t in g.trajectories]
    sft = sft_records(trajs)
    assert len(sft) == 4 and all(set(r) == {"messages"} for r in sft)
    assert [m["role"] for m in sft[0]["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert sft[0]["messages"][1]["content"].startswith("<tool_call>")
    (pair,) = dpo_records(groups)
    assert set(pair) == {"prompt", "chosen", "rejected"}
    assert pair["prompt"] == [{"role": "user", "content": groups[0].task.messages[0].content}]
    assert pair["chosen"][-1]["content"].startswith("Answer:")


def test_openai_style_calls():
    call = ToolCall("calculator", {"expression": "2*3"}, "call_0")
    text = '<tool_call>{"name": "calculator", "arguments": {"expression": "2*3"}}</tool_call>'
    out = message_dict(Message("assistant", text, tool_calls=(call,)), calls="openai")
    assert out["content"] == "" and out["tool_calls"] == [call.to_openai()]


@pytest.mark.slow  # imports TRL and builds its trainers
def test_trl_trainers_load_the_export(groups, fresh_tiny_policy, tmp_path):
    from datasets import load_dataset
    from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer

    tok = fresh_tiny_policy.tokenizer
    trajs = [t for g in groups for t in g.trajectories]
    sft_path = write_jsonl(sft_records(trajs), tmp_path / "sft.jsonl")
    dpo_path = write_jsonl(dpo_records(groups), tmp_path / "dpo.jsonl")
    common = {"report_to": [], "max_steps": 1, "use_cpu": True}
    sft = SFTTrainer(model=fresh_tiny_policy.model, processing_class=tok,
                     args=SFTConfig(output_dir=str(tmp_path / "sft"), **common),
                     train_dataset=load_dataset("json", data_files=str(sft_path),
                                                split="train"))
    renderer = ChatRenderer(tok)
    exported = [t for t in trajs if t.outcome_reward == 1.0]
    for row, traj in zip(sft.train_dataset, exported, strict=True):
        # TRL's tokenisation of the export is the conversation the policy sampled
        assert tok.decode(row["input_ids"]) == renderer.decode(traj.token_ids())
    dpo = DPOTrainer(model=fresh_tiny_policy.model, processing_class=tok,
                     args=DPOConfig(output_dir=str(tmp_path / "dpo"), **common),
                     train_dataset=load_dataset("json", data_files=str(dpo_path),
                                                split="train"))
    (row,) = dpo.train_dataset
    assert tok.decode(row["prompt_ids"]) == renderer.decode(groups[0].trajectories[0].prompt_ids)
    assert "Answer:" in tok.decode(row["chosen_ids"])
    assert json.loads(dpo_path.read_text())["rejected"]

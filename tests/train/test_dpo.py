"""DPO learns a trivial preference and its likelihood ignores observation tokens."""

import json

import pytest
import torch

from tracerl.rollout.demos import trajectory_from_messages
from tracerl.rollout.render import ChatRenderer
from tracerl.train.config import DPOConfig
from tracerl.train.dpo import pairs_from_jsonl, sequence_logp, train_dpo
from tracerl.types import Message, Task, ToolCall


def _pairs_file(tmp_path, n):
    lines = []
    for i in range(n):
        prompt = [{"role": "user", "content": f"Say a number {i}"}]
        lines.append(json.dumps({"prompt": prompt,
                                 "chosen": [{"role": "assistant", "content": f"{i * 7919}"}],
                                 "rejected": [{"role": "assistant", "content": "abcd"}]}))
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(lines))
    return path


def _margin(policy, pairs):
    with torch.no_grad():
        chosen = sequence_logp(policy.model, [c for c, _ in pairs], policy.pad_id)
        rejected = sequence_logp(policy.model, [r for _, r in pairs], policy.pad_id)
    return float((chosen - rejected).mean())


@pytest.mark.slow
def test_dpo_prefers_the_chosen_answers(fresh_tiny_policy, tmp_path):
    policy = fresh_tiny_policy
    renderer = ChatRenderer(policy.tokenizer)
    pairs = pairs_from_jsonl(_pairs_file(tmp_path, 32), renderer)
    train, heldout = pairs[:24], pairs[24:]
    before = _margin(policy, heldout)
    history = train_dpo(policy, train, DPOConfig(lr=3e-3, epochs=2, batch_size=8, beta=0.5),
                        seed=0)
    assert _margin(policy, heldout) > before + 5.0
    assert history[-1]["reward_accuracy"] == 1.0


def test_dpo_likelihood_ignores_observation_tokens(tiny_policy):
    renderer = ChatRenderer(tiny_policy.tokenizer)
    task = Task("t", (Message("user", "hi"),))
    call = ToolCall("f", {}, id="c0")
    action = Message("assistant", '<tool_call>{"name": "f"}</tool_call>', tool_calls=(call,))
    a, b = (trajectory_from_messages(renderer, task, list(task.messages),
                                     [action, Message("tool", text, tool_call_id="c0")])
            for text in ("short", "a much longer result"))
    logp = sequence_logp(tiny_policy.model, [a, b], tiny_policy.pad_id)
    assert torch.allclose(logp[0], logp[1])


def test_a_bad_pairs_file_names_the_line(tmp_path, tiny_policy):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"chosen": [{"role": "assistant", "content": "x"}]}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        pairs_from_jsonl(path, ChatRenderer(tiny_policy.tokenizer))

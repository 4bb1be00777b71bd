"""A non-Llama local model (Qwen3 architecture) with a Qwen-style template
runs through the same code path as the tiny policy."""

import pytest
from transformers import Qwen3Config, Qwen3ForCausalLM

from tracerl.envs.calc import CalcFamily
from tracerl.policy.model import load_policy
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.tokenizer import build_char_tokenizer
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner
from tracerl.types import Status

# Qwen2.5-style: tool results go back as a user turn wrapped in <tool_response>.
QWEN_STYLE = (
    "{%- for m in messages -%}"
    "{%- if m['role'] == 'tool' -%}"
    "{{- '<|im_start|>user\\n<tool_response>\\n' + m['content']"
    " + '\\n</tool_response><|im_end|>\\n' -}}"
    "{%- else -%}"
    "{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("qwen")
    tok = build_char_tokenizer()
    tok.chat_template = QWEN_STYLE
    tok.save_pretrained(str(path))
    cfg = Qwen3Config(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                      max_position_embeddings=512, pad_token_id=tok.pad_token_id)
    Qwen3ForCausalLM(cfg).save_pretrained(str(path))
    return path


def test_local_qwen3_directory_rolls_out_and_round_trips(qwen_dir):
    policy = load_policy(qwen_dir)
    assert type(policy.model).__name__ == "Qwen3ForCausalLM"
    fam = CalcFamily(calls=1)
    renderer = ChatRenderer(policy.tokenizer)
    runner = RolloutRunner(TransformersSampler(policy.model, policy.pad_id, seed=0), renderer,
                           policy.stop_ids, fam.make_env, fam.reward,
                           RolloutConfig(group_size=4, max_turns=2, max_turn_tokens=16))
    trajs = [t for g in runner.run(fam.tasks("train", 2, 0)) for t in g.trajectories]
    done = [t for t in trajs if t.status is Status.DONE]
    assert done
    for t in done:
        rendered = renderer.encode(renderer.render(t.messages(), add_generation_prompt=False))
        assert rendered == t.token_ids()

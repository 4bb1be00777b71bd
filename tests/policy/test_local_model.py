"""A non-Llama local model (Qwen3 architecture) with a Qwen-style template
runs through the same code path as the tiny policy, its tools described by its template."""

from tracerl.envs.calc import CalcFamily
from tracerl.policy.model import load_policy
from tracerl.policy.sampler import TransformersSampler
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner
from tracerl.types import Status


def test_local_qwen3_directory_rolls_out_and_round_trips(qwen_dir):
    policy = load_policy(qwen_dir)
    assert type(policy.model).__name__ == "Qwen3ForCausalLM"
    fam = CalcFamily(calls=1, describe_tools=True)
    renderer = ChatRenderer(policy.tokenizer)
    sampler = TransformersSampler(policy.model, policy.pad_id, seed=0, tokenizer=policy.tokenizer)
    runner = RolloutRunner(sampler, renderer, policy.stop_ids, fam.make_env, fam.reward,
                           RolloutConfig(group_size=4, max_turns=2, max_turn_tokens=16))
    trajs = [t for g in runner.run(fam.tasks("train", 2, 0)) for t in g.trajectories]
    done = [t for t in trajs if t.status is Status.DONE]
    assert done
    for t in done:
        assert t.tools and "# Tools" in renderer.decode(t.prompt_ids)
        rendered = renderer.render(t.messages(), add_generation_prompt=False, tools=t.tools)
        assert renderer.encode(rendered) == t.token_ids()

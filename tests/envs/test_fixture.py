"""The `secret` fixture passes only when tool output reaches the policy as tokens."""

import re

from tracerl.envs.fixture import SecretFamily
from tracerl.policy.sampler import Sample, SamplingParams
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner


class TokenReadingSampler:
    """A stand-in for a model that sees only the token ids it is given.

    First turn: call get_secret. Later turns: decode the *context ids* and answer with
    the last tool message found there. If the observation never reached the context,
    it cannot answer correctly.
    """

    def __init__(self, tokenizer) -> None:
        self.tok = tokenizer

    def _emit(self, text: str) -> Sample:
        ids = self.tok.encode(text, add_special_tokens=False)
        return Sample(ids, [-0.1] * len(ids), "stop")

    def generate(self, contexts, params: SamplingParams, budgets=None):
        out = []
        for ctx in contexts:
            seen = self.tok.decode(ctx, skip_special_tokens=False)
            found = re.findall(r"<\|im_start\|>tool\n(.*?)<\|im_end\|>", seen)
            if found:
                out.append(self._emit(f"Answer: {found[-1]}<|im_end|>"))
            else:
                out.append(self._emit('<tool_call>{"name": "get_secret", "arguments": {}}'
                                      "</tool_call>"))
        return out


def _runner(policy, renderer=None):
    fam = SecretFamily()
    return fam, RolloutRunner(TokenReadingSampler(policy.tokenizer),
                              renderer or ChatRenderer(policy.tokenizer), policy.stop_ids,
                              fam.make_env, fam.reward, RolloutConfig(group_size=3))


def test_reward_is_one_when_tool_output_reaches_the_next_turn(tiny_policy):
    fam, runner = _runner(tiny_policy)
    groups = runner.run(fam.tasks("train", 2, seed=0))
    rewards = [t.outcome_reward for g in groups for t in g.trajectories]
    assert rewards == [1.0] * 6
    secrets = {t.turns[0].tool_results[0].content for g in groups for t in g.trajectories}
    assert len(secrets) == 6  # a fresh secret per episode


class DroppingRenderer(ChatRenderer):
    """Broken plumbing: observation tokens never include the tool's output."""

    def render(self, messages, add_generation_prompt, tools=()):
        blanked = [m if m.role != "tool" else type(m)("tool", "", (), m.tool_call_id, m.name)
                   for m in messages]
        return super().render(blanked, add_generation_prompt, tools)


def test_reward_is_zero_when_observations_are_dropped(tiny_policy):
    fam, runner = _runner(tiny_policy, DroppingRenderer(tiny_policy.tokenizer))
    groups = runner.run(fam.tasks("train", 2, seed=0))
    assert all(t.outcome_reward == 0.0 for g in groups for t in g.trajectories)

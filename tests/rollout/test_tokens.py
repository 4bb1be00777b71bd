"""Token-in, token-out: the loss mask covers exactly the sampled ids, and rendering the
finished conversation through the chat template reproduces the trajectory's ids."""

import random

import pytest

from tracerl.envs.calc import CalcFamily
from tracerl.policy.sampler import Sample, TransformersSampler
from tracerl.rollout.render import ChatRenderer, TemplateMismatchError
from tracerl.rollout.runner import RolloutConfig, RolloutRunner
from tracerl.types import Message, Status


class RecordingSampler(TransformersSampler):
    """The real sampler, keeping a copy of every sample it returns."""

    def __init__(self, *a, **k) -> None:
        super().__init__(*a, **k)
        self.samples: list[Sample] = []

    def generate(self, contexts, params, budgets=None):
        out = super().generate(contexts, params, budgets)
        self.samples += [Sample(list(s.ids), list(s.logprobs), s.finish) for s in out]
        return out


class OracleSampler:
    """Emits the oracle's actions as token ids, so episodes run several turns."""

    def __init__(self, tokenizer, family, tasks) -> None:
        self.tok = tokenizer
        self.plans = {}
        for t in tasks:
            demo = family.demonstration(t, random.Random(0))
            self.plans[t.messages[0].content] = [m.content for m in demo if m.role == "assistant"]

    def generate(self, contexts, params, budgets=None):
        out = []
        for ctx in contexts:
            text = self.tok.decode(ctx, skip_special_tokens=False)
            prompt = text.split("<|im_start|>user\n")[1].split("<|im_end|>")[0]
            turn = text.count("<|im_start|>assistant") - 1
            action = self.plans[prompt][turn]
            if "<tool_call>" not in action:
                action += "<|im_end|>"
            ids = self.tok.encode(action, add_special_tokens=False)
            out.append(Sample(ids, [0.0] * len(ids), "stop"))
        return out


def _run(policy, sampler, family, tasks, **cfg):
    runner = RolloutRunner(sampler, ChatRenderer(policy.tokenizer), policy.stop_ids,
                           family.make_env, family.reward, RolloutConfig(**cfg))
    return [t for g in runner.run(tasks) for t in g.trajectories]


def _check_round_trip(policy, traj):
    renderer = ChatRenderer(policy.tokenizer)
    rendered = renderer.encode(renderer.render(traj.messages(), add_generation_prompt=False))
    assert rendered == traj.token_ids()


def test_mask_covers_exactly_the_sampled_ids(tiny_policy):
    fam = CalcFamily(calls=1)
    sampler = RecordingSampler(tiny_policy.model, tiny_policy.pad_id, seed=1)
    trajs = _run(tiny_policy, sampler, fam, fam.tasks("train", 4, 0), group_size=4,
                 max_turns=3, max_turn_tokens=24)
    sampled = sorted(tuple(s.ids) for s in sampler.samples)
    from_masks = []
    for t in trajs:
        resp, mask = t.response_ids(), t.loss_mask()
        assert len(resp) == len(mask) == len(t.behaviour_logprobs())
        assert sum(mask) == t.num_action_tokens
        pos = 0
        for turn in t.turns:  # the masked-in span of each turn is that turn's sample
            assert resp[pos:pos + len(turn.action_ids)] == turn.action_ids
            assert mask[pos:pos + len(turn.action_ids)] == [1] * len(turn.action_ids)
            pos += len(turn.action_ids)
            assert mask[pos:pos + len(turn.observation_ids)] == [0] * len(turn.observation_ids)
            pos += len(turn.observation_ids)
            from_masks.append(tuple(turn.action_ids))
    assert sorted(from_masks) == sampled
    logprobs = sorted(lp for s in sampler.samples for lp in s.logprobs)
    assert logprobs == sorted(lp for t in trajs for turn in t.turns for lp in turn.action_logprobs)


def test_multi_turn_oracle_round_trips_through_the_template(tiny_policy):
    fam = CalcFamily(calls=3, skip_tool_prob=0.0)
    tasks = fam.tasks("heldout", 3, 0)
    trajs = _run(tiny_policy, OracleSampler(tiny_policy.tokenizer, fam, tasks), fam, tasks,
                 group_size=2)
    for t in trajs:
        assert t.status is Status.DONE and t.outcome_reward == 1.0 and len(t.turns) == 4
        _check_round_trip(tiny_policy, t)
        # observation tokens hold the tool output, and are masked out
        obs_text = tiny_policy.tokenizer.decode(t.turns[0].observation_ids)
        assert t.turns[0].tool_results[0].content in obs_text


def test_sampled_trajectories_round_trip_through_the_template(tiny_policy):
    fam = CalcFamily(calls=1)
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=2)
    trajs = _run(tiny_policy, sampler, fam, fam.tasks("train", 4, 0), group_size=4,
                 max_turns=3, max_turn_tokens=24)
    done = [t for t in trajs if t.status is Status.DONE]
    assert done
    for t in done:
        _check_round_trip(tiny_policy, t)


def test_template_that_rewrites_history_is_refused(tiny_policy):
    renderer = ChatRenderer(tiny_policy.tokenizer)
    before = [Message("user", "hi")]
    with pytest.raises(TemplateMismatchError, match="does not extend"):
        renderer.observation_ids(before, "hello", [Message("user", "HI"),
                                                   Message("assistant", "hello")], final=True)


def test_truncation_is_recorded(tiny_policy):
    fam = CalcFamily(calls=1)
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=3)
    trajs = _run(tiny_policy, sampler, fam, fam.tasks("train", 2, 0), group_size=4,
                 max_turns=1, max_turn_tokens=4, max_response_tokens=4)
    assert all(t.num_action_tokens <= 4 for t in trajs)
    assert any(t.status is Status.TRUNCATED for t in trajs)

"""Token-in, token-out: the loss mask covers exactly the sampled ids, and rendering the
finished conversation through the chat template reproduces the trajectory's ids."""

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


def _run(policy, sampler, family, tasks, **cfg):
    return _run_tok(policy.tokenizer, policy.stop_ids, sampler, family, tasks, **cfg)


def _run_tok(tokenizer, stop_ids, sampler, family, tasks, **cfg):
    runner = RolloutRunner(sampler, ChatRenderer(tokenizer), stop_ids,
                           family.make_env, family.reward, RolloutConfig(**cfg))
    return [t for g in runner.run(tasks) for t in g.trajectories]


def _check_round_trip(tokenizer, traj):
    renderer = ChatRenderer(tokenizer)
    rendered = renderer.render(traj.messages(), add_generation_prompt=False, tools=traj.tools)
    assert renderer.encode(rendered) == traj.token_ids()


def test_mask_covers_exactly_the_sampled_ids(tiny_policy):
    fam = CalcFamily(calls=1)
    sampler = RecordingSampler(tiny_policy.model, tiny_policy.pad_id, seed=1,
                               tokenizer=tiny_policy.tokenizer)
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


@pytest.mark.parametrize(("name", "describe"), [
    ("tiny", False), ("tiny", True), ("qwen", True), ("spelt", True),
    pytest.param("smollm2", False, marks=pytest.mark.slow),
    pytest.param("smollm2", True, marks=pytest.mark.slow),
    pytest.param("gemma3", True, marks=pytest.mark.slow)])
def test_multi_turn_oracle_round_trips_through_the_template(chat_tokenizer, oracle_sampler,
                                                            name, describe):
    tok = chat_tokenizer(name)
    fam = CalcFamily(calls=3, skip_tool_prob=0.0, describe_tools=describe)
    tasks = fam.tasks("heldout", 3, 0)
    trajs = _run_tok(tok, (), oracle_sampler(tok, fam, tasks), fam, tasks, group_size=2)
    for t in trajs:
        assert t.status is Status.DONE and t.outcome_reward == 1.0 and len(t.turns) == 4
        assert bool(t.tools) == describe
        _check_round_trip(tok, t)
        # observation tokens hold the tool output, and are masked out
        obs_text = tok.decode(t.turns[0].observation_ids)
        assert t.turns[0].tool_results[0].content in obs_text


def test_sampled_trajectories_round_trip_through_the_template(tiny_policy):
    fam = CalcFamily(calls=1)
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=2,
                                  tokenizer=tiny_policy.tokenizer)
    trajs = _run(tiny_policy, sampler, fam, fam.tasks("train", 4, 0), group_size=4,
                 max_turns=3, max_turn_tokens=24)
    done = [t for t in trajs if t.status is Status.DONE]
    assert done
    for t in done:
        _check_round_trip(tiny_policy.tokenizer, t)


@pytest.mark.parametrize("name", ["tiny", "qwen", pytest.param("smollm2", marks=pytest.mark.slow),
                                  pytest.param("gemma3", marks=pytest.mark.slow)])
def test_template_that_rewrites_history_is_refused(chat_tokenizer, name):
    renderer = ChatRenderer(chat_tokenizer(name))
    before = [Message("user", "hi")]
    with pytest.raises(TemplateMismatchError, match="does not extend"):
        renderer.observation_ids(before, "hello", [Message("user", "HI"),
                                                   Message("assistant", "hello")], final=True)


class OpeningSampler:
    """Opens a tool call on even rows and answers on odd ones, cut at each row's budget."""

    def __init__(self, tokenizer) -> None:
        self.call = tokenizer.encode('<tool_call>{"name": "calculator"', add_special_tokens=False)
        self.answer = tokenizer.encode("7<|im_end|>", add_special_tokens=False)

    def generate(self, contexts, params, budgets=None):
        budgets = budgets or [params.max_new_tokens] * len(contexts)
        out = []
        for row, budget in enumerate(budgets):
            ids = self.call if row % 2 == 0 else self.answer
            finish = "length" if len(ids) > budget else "stop"
            out.append(Sample(ids[:budget], [0.0] * min(len(ids), budget), finish))
        return out


def test_truncation_is_recorded(tiny_policy):
    fam = CalcFamily(calls=1)
    cfg = {"group_size": 4, "max_turns": 1, "max_turn_tokens": 4, "max_response_tokens": 4}
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=3,
                                  tokenizer=tiny_policy.tokenizer)
    trajs = _run(tiny_policy, sampler, fam, fam.tasks("train", 2, 0), **cfg)
    assert all(t.num_action_tokens <= 4 for t in trajs)  # the real sampler keeps the budget
    # a tool call the budget cuts leaves the episode unfinished; an answer finishes it
    trajs = _run(tiny_policy, OpeningSampler(tiny_policy.tokenizer), fam,
                 fam.tasks("train", 2, 0), **cfg)
    assert {t.status for t in trajs} == {Status.TRUNCATED, Status.DONE}
    for t in trajs:
        opened = t.turns[0].action_ids[0] == OpeningSampler(tiny_policy.tokenizer).call[0]
        assert t.status is (Status.TRUNCATED if opened else Status.DONE)
        assert t.num_action_tokens <= 4

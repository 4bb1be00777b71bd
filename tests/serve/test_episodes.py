import asyncio

import pytest

from tracerl.policy.sampling import Sample
from tracerl.serve.api import APIError, parse_request
from tracerl.serve.engine import Engine, ServeConfig, max_token_bytes
from tracerl.serve.episodes import Recorder, group_by_task
from tracerl.train.rl_step import trainable
from tracerl.types import Status


def engine(policy, **fields):
    return Engine(policy, ServeConfig(model_name="tiny", describe_tools=False, **fields))


def ask(messages, episode="e", **kw):
    return parse_request({"model": "tiny", "messages": messages, "max_tokens": 6,
                          "episode_id": episode, "task_id": "t", **kw})


def reply_of(body):
    return body["choices"][0]["message"]


def exact(eng, traj):
    """The trajectory's ids decode to the chat template's text of its conversation."""
    text = eng.renderer.render(traj.messages(), add_generation_prompt=False, tools=traj.tools)
    ids = eng.renderer.decode(traj.token_ids())
    return text == ids if traj.status is Status.DONE else text.startswith(ids)


def two_turns(eng, edit=False):
    async def run():
        first = [{"role": "user", "content": "Compute (3*4)."}]
        r1 = reply_of(await eng.complete(ask(first)))
        if edit:
            r1 = dict(r1, content=(r1["content"] or "") + " (edited)")
        r2 = await eng.complete(ask([*first, r1, {"role": "user", "content": "and?"}]))
        return r2
    return asyncio.run(run())


@pytest.mark.parametrize("edit", [False, True])
def test_an_episode_becomes_exact_trajectories(tiny_policy, edit):
    eng = engine(tiny_policy)
    two_turns(eng, edit)
    trajs = eng.recorder.finish("e", 0.5)
    assert eng.recorder.stats.mismatches == int(edit)
    # matched: one two-turn trajectory; edited ("split"): the first call ends one, the
    # re-rendered second call roots another
    assert [len(t.turns) for t in trajs] == ([1, 1] if edit else [2])
    assert all(exact(eng, t) and t.outcome_reward == 0.5 for t in trajs)
    assert trajs[0].task.id == "t" and trajs[0].task.metadata["episode_id"] == "e"


def test_drop_marks_the_episode_unjudged(tiny_policy):
    eng = engine(tiny_policy, on_mismatch="drop")
    two_turns(eng, edit=True)
    trajs = eng.recorder.finish("e", 1.0)
    assert {t.status for t in trajs} == {Status.ERROR}
    assert all(t.outcome_reward is None for t in trajs)
    keep, left_out = trainable(group_by_task(trajs), drop_uniform=False)
    assert keep == [] and left_out == len(trajs)
    assert eng.recorder.stats.dropped_episodes == 1


def test_reject_answers_409_and_records_nothing(tiny_policy):
    eng = engine(tiny_policy, on_mismatch="reject")
    with pytest.raises(APIError) as e:
        two_turns(eng, edit=True)
    assert e.value.status == 409 and e.value.code == "history_mismatch"
    assert len(eng.recorder.get("e").calls) == 1 and eng.recorder.stats.rejected == 1


def test_a_forced_tool_call_opening_is_context_not_action(tiny_policy):
    eng = engine(tiny_policy)
    tool = {"type": "function", "function": {"name": "calculator"}}
    body = asyncio.run(eng.complete(ask([{"role": "user", "content": "hi"}], tools=[tool],
                                        tool_choice={"type": "function",
                                                     "function": {"name": "calculator"}})))
    message = reply_of(body)
    text = message["content"] if message.get("content") else \
        message["tool_calls"][0]["function"]["name"]
    assert text.startswith('<tool_call>{"name": "calculator"') or text == "calculator"
    (traj,) = eng.recorder.finish("e", 1.0)
    opening = eng.renderer.encode('<tool_call>{"name": "calculator", "arguments": ')
    assert traj.prompt_ids[-len(opening):] == opening
    assert traj.loss_mask()[:len(traj.turns[0].action_ids)] == [1] * len(traj.turns[0].action_ids)
    assert exact(eng, traj)


def test_context_too_long_names_the_limit(tiny_policy):
    eng = engine(tiny_policy, context_limit=50)
    with pytest.raises(APIError) as e:
        eng.prepare(ask([{"role": "user", "content": "x" * 60}]))
    assert e.value.code == "context_length_exceeded" and "50" in e.value.message


def test_a_request_far_over_the_context_is_refused_before_it_is_tokenized(tiny_policy):
    eng = engine(tiny_policy, context_limit=50)
    encoded = []
    eng.renderer.encode = lambda text: encoded.append(text) or []  # records, never runs
    with pytest.raises(APIError) as e:
        eng.prepare(ask([{"role": "user", "content": "x" * 50 * eng.max_token_bytes}]))
    assert e.value.code == "context_length_exceeded" and "at least" in e.value.message
    assert encoded == []


@pytest.mark.parametrize("name", ["tiny", "qwen", "spelt"])
def test_no_text_has_fewer_tokens_than_its_bytes_over_the_bound(chat_tokenizer, name):
    """The bound the refusal above rests on, checked on texts that pack long tokens."""
    tok = chat_tokenizer(name)
    bound = max_token_bytes(tok)
    vocab = sorted(tok.get_vocab(), key=len, reverse=True)[:50]
    texts = [tok.convert_tokens_to_string(vocab), " ".join(vocab), "<|im_start|>" * 40,
             "Compute (662*64). " * 30, "ÿ€😀 ünïcödé " * 20, "\n" * 200]
    for text in texts:
        assert len(tok.encode(text, add_special_tokens=False)) >= \
            len(text.encode("utf-8")) / bound, text[:40]


def test_a_reward_function_scores_and_failures_are_unjudged(tiny_policy):
    eng = engine(tiny_policy)
    asyncio.run(eng.complete(ask([{"role": "user", "content": "a"}], episode="a")))
    asyncio.run(eng.complete(ask([{"role": "user", "content": "b"}], episode="b")))
    rec = eng.recorder
    rec.reward = lambda t: float(len(t.turns))
    assert [t.outcome_reward for t in rec.finish("a", None, use_reward_fn=True)] == [1.0]
    rec.reward = lambda t: 1 / 0
    (failed,) = rec.finish("b", None, use_reward_fn=True)
    assert failed.outcome_reward is None and "ZeroDivisionError" in failed.error
    assert rec.stats.reward_errors == 1 and len(rec.take()) == 2 and rec.take() == []


def test_n_choices_not_continued_each_end_a_trajectory(tiny_policy):
    eng = engine(tiny_policy)
    asyncio.run(eng.complete(ask([{"role": "user", "content": "a"}], n=3)))
    trajs = eng.recorder.finish("e", 1.0)
    assert len(trajs) == 3 and all(exact(eng, t) for t in trajs)
    groups = group_by_task(trajs)
    assert len(groups) == 1 and [t.sample_index for t in groups[0].trajectories] == [0, 1, 2]


def test_recorder_forgets_the_oldest_open_episodes(tiny_policy):
    eng = engine(tiny_policy)
    rec = Recorder(eng.renderer, max_open=2)
    for name in "abc":
        rec.episode(name, None)
    assert rec.get("a") is None and rec.get("c") is not None and rec.stats.evicted == 1
    with pytest.raises(ValueError, match="on_mismatch"):
        Recorder(eng.renderer, on_mismatch="ignore")  # type: ignore[arg-type]


def test_an_undelivered_choice_is_not_trained_on(tiny_policy):
    eng = engine(tiny_policy)
    p = eng.prepare(ask([{"role": "user", "content": "a"}]))
    eng.record(p, [Sample([5, 6], [-1.0, -1.0], "length")], 0, [None])
    assert eng.recorder.finish("e", 1.0) == [] and eng.recorder.stats.undelivered == 1

"""The real server over HTTP, driven by the official openai client."""

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from openai import OpenAI

from tracerl.envs.calc import CalcFamily
from tracerl.rollout.config import RolloutConfig
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutRunner

pytestmark = pytest.mark.slow  # starts servers


def client(server):
    return OpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=120)


def test_served_calc_episodes_are_the_rollout_runners_tokens(serve, oracle_sampler, byo_agent,
                                                              fresh_tiny_policy):
    """An openai-client agent plays multi-turn calc episodes; the recorded trajectories
    are token for token what the in-process rollout runner makes of the same actions."""
    family = CalcFamily(calls=2, skip_tool_prob=0.0)
    tasks = family.tasks("train", 3, seed=0)
    sampler = oracle_sampler(fresh_tiny_policy.tokenizer, family, tasks)
    service, server = serve(sampler=sampler)
    for t in tasks:
        text = byo_agent.play(client(server), "tiny", t, f"ep-{t.id}")
        assert byo_agent.score(t, text) == 1.0
        httpx.post(f"{server.url}/episodes/ep-{t.id}/reward", json={"reward": 1.0}
                   ).raise_for_status()
    served = {t.task.id: t for t in service.engine.recorder.take()}
    assert service.engine.recorder.stats.mismatches == 0
    runner = RolloutRunner(sampler, ChatRenderer(fresh_tiny_policy.tokenizer),
                           fresh_tiny_policy.stop_ids, family.make_env, family.reward,
                           RolloutConfig(group_size=1, max_turns=4))
    for group in runner.run(tasks):
        ref, got = group.trajectories[0], served[group.task.id]
        assert len(got.turns) == 3 and got.outcome_reward == 1.0
        assert got.prompt_ids == ref.prompt_ids
        assert [t.action_ids for t in got.turns] == [t.action_ids for t in ref.turns]
        assert [t.observation_ids for t in got.turns] == [t.observation_ids for t in ref.turns]
        assert got.token_ids() == ref.token_ids() and got.loss_mask() == ref.loss_mask()
        assert [c.name for t in got.turns for c in t.tool_calls] == ["calculator"] * 2


def test_tool_calls_come_back_in_openai_form_streamed_or_not(serve, oracle_sampler,
                                                            fresh_tiny_policy, byo_agent):
    family = CalcFamily(calls=1, skip_tool_prob=0.0)
    task = family.tasks("train", 1, seed=3)[0]
    _, server = serve(sampler=oracle_sampler(fresh_tiny_policy.tokenizer, family, [task]))
    ask = {"model": "tiny", "messages": [m.to_openai() for m in task.messages],
           "tools": [byo_agent.CALCULATOR]}
    plain = client(server).chat.completions.create(**ask).choices[0]
    assert plain.finish_reason == "tool_calls"
    (call,) = plain.message.tool_calls
    assert call.function.name == "calculator" and call.type == "function"
    assert json.loads(call.function.arguments) == {
        "expression": task.metadata["expression"].strip("()")}
    calls, finish = {}, None
    for chunk in client(server).chat.completions.create(**ask, stream=True):
        for c in chunk.choices:
            for d in c.delta.tool_calls or ():
                calls[d.index] = (d.function.name, d.function.arguments)
            finish = c.finish_reason or finish
    assert finish == "tool_calls"
    assert calls == {0: (call.function.name, call.function.arguments)}


def test_streamed_text_arrives_in_pieces_and_is_recorded(serve):
    service, server = serve()
    stream = client(server).chat.completions.create(
        model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=40, n=2,
        stream=True, stream_options={"include_usage": True}, temperature=1.0,
        extra_body={"episode_id": "s1"})
    pieces: dict[int, list[str]] = {0: [], 1: []}
    usage = None
    for chunk in stream:
        for c in chunk.choices:
            if c.delta.content:
                pieces[c.index].append(c.delta.content)
        usage = chunk.usage or usage
    (call,) = service.engine.recorder.get("s1").calls
    for i in (0, 1):
        assert "".join(pieces[i]) == call.replies[i].content
    assert max(len(p) for p in pieces.values()) > 1  # not one block at the end
    assert usage.completion_tokens == sum(len(s.ids) for s in call.samples)


def test_a_client_leaving_mid_stream_costs_no_one_else(serve):
    service, server = serve()
    body = {"model": "tiny", "messages": [{"role": "user", "content": "x"}],
            "max_tokens": 60, "stream": True}
    results = []

    def complete(i):
        r = client(server).chat.completions.create(
            model="tiny", messages=[{"role": "user", "content": f"q{i}"}], max_tokens=30)
        results.append(r.choices[0].message.content is not None)

    threads = [threading.Thread(target=complete, args=(i,)) for i in range(4)]
    with httpx.stream("POST", f"{server.url}/chat/completions", json=body, timeout=60) as r:
        lines = r.iter_lines()
        assert next(lines).startswith("data: ")
        for t in threads:
            t.start()
    for t in threads:
        t.join(60)
    assert results == [True] * 4
    after = client(server).chat.completions.create(
        model="tiny", messages=[{"role": "user", "content": "still there?"}], max_tokens=5)
    assert after.choices[0].message.content is not None
    stats = service.engine.recorder.stats
    assert stats.calls == 6 and stats.undelivered == 1  # sampled, kept out of training


def test_64_concurrent_clients_are_served_in_batches(serve):
    service, server = serve()
    c = client(server)

    def ask(i):
        return c.chat.completions.create(
            model="tiny", messages=[{"role": "user", "content": f"question {i}"}],
            max_tokens=8, extra_body={"episode_id": f"e{i}"}).choices[0].message.content

    with ThreadPoolExecutor(64) as pool:
        answers = list(pool.map(ask, range(64)))
    assert all(a is not None for a in answers)
    stats = service.engine.batcher.stats
    assert stats.rows == 64 and stats.sampler_calls < 64 and stats.max_rows > 1
    assert service.engine.recorder.stats.calls == 64


@pytest.mark.parametrize("send, status, code", [
    (b"{not json", 400, None),
    ({"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]}, 404,
     "model_not_found"),
    ({"model": "tiny", "messages": [{"role": "user", "content": "x" * 5000}]}, 400,
     "context_length_exceeded"),
    ({"model": "tiny", "messages": [{"role": "user", "content": "x"}], "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {"type": 7}}}]}, 400,
     None),
    ({"model": "tiny", "messages": [{"role": "user", "content": "x"}], "stream": True,
      "tool_choice": "required"}, 400, None),
])
def test_bad_requests_get_openai_error_bodies(serve, send, status, code):
    _, server = serve()
    content = send if isinstance(send, bytes) else json.dumps(send).encode()
    r = httpx.post(f"{server.url}/chat/completions", content=content,
                   headers={"Content-Type": "application/json"})
    assert r.status_code == status
    error = r.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["code"] == code
    assert error["message"]


def test_routes_and_episodes_errors(serve):
    _, server = serve()
    assert httpx.get(f"{server.url}/nowhere").status_code == 404
    assert httpx.get(f"{server.url}/chat/completions").status_code == 405
    r = httpx.post(f"{server.url}/episodes/unknown/reward", json={"reward": 1})
    assert r.status_code == 404 and r.json()["error"]["code"] == "episode_not_found"
    r = httpx.post(f"{server.url}/train", json={})
    assert r.status_code == 404 and r.json()["error"]["code"] == "training_disabled"
    assert [m.id for m in client(server).models.list().data] == ["tiny"]

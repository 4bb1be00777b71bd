"""The real server under hostile and careless input (issue 32): every refusal is an
OpenAI-shaped 4xx decided before any state changes, no value poisons the policy, and
anonymous calls cannot push out episodes a client named."""

import json
import logging
import math

import httpx
import pytest
import torch

from tracerl.train.config import TrainConfig

pytestmark = pytest.mark.slow  # starts servers

ASK = {"model": "tiny", "messages": [{"role": "user", "content": "Compute (2+3)."}],
       "max_tokens": 4}


def chat(server, episode=None, task=None, **extra):
    body = {**ASK, **extra}
    if episode is not None:
        body["episode_id"] = episode
    if task is not None:
        body["task_id"] = task
    return httpx.post(f"{server.url}/chat/completions", json=body, timeout=60)


def post_raw(server, path, content, **headers):
    return httpx.post(f"{server.url}{path}", content=content, timeout=60,
                      headers={"Content-Type": "application/json", **headers})


def weights(model):
    return [p.detach().clone() for p in model.parameters()]


def same(a, b):
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_a_refused_reward_post_keeps_the_episode_for_a_retry(serve):
    _, server = serve()
    chat(server, "ep").raise_for_status()
    refused = [b"{}", b"", b'{"reward": 1e160}', b'{"reward": Infinity}',
               b'{"reward": NaN}', b'{"reward": 1e400}', b'{"reward": "1"}',
               b'{"reward": true}', b"[1]", b'{"reward": -2e6}']
    for content in refused:
        r = post_raw(server, "/episodes/ep/reward", content)
        assert r.status_code == 400, (content, r.text)
        assert set(r.json()["error"]) == {"message", "type", "param", "code"}
        assert httpx.get(f"{server.url}/episodes/ep").status_code == 200, content
    ok = httpx.post(f"{server.url}/episodes/ep/reward", json={"reward": 1.0})
    assert ok.status_code == 200 and ok.json()["rewards"] == [1.0]


def test_a_failed_completion_creates_no_episode(serve):
    service, server = serve()
    too_long = [{"role": "user", "content": "x " * 5000}]
    for extra in ({"messages": too_long}, {"model": "gpt-4o"}, {"temperature": math.nan},
                  {"stream": "false"}):
        body = json.dumps({**ASK, "episode_id": "ep", **extra}).encode()
        r = post_raw(server, "/chat/completions", body)
        assert r.status_code in (400, 404), (extra, r.text)
        assert httpx.get(f"{server.url}/episodes/ep").status_code == 404
    stats = httpx.get(f"{server.url}/stats").json()["recorder"]
    assert stats["episodes"] == 0 and stats["calls"] == 0


def test_poisoned_rewards_never_reach_the_served_policy(serve):
    """1e160, inf and NaN from the server's reward function: unjudged and counted; the
    update has nothing to train on and changes nothing; later real rewards train."""
    poison = iter([1e160, math.inf, math.nan])

    def reward(trajectory):
        return next(poison, None) if trajectory.task.id == "bad" else \
            float(trajectory.task.metadata["episode_id"].endswith("1"))

    service, server = serve(train=True, reward=reward)
    model = service.engine.policy.model
    start = weights(model)
    for k in range(3):
        chat(server, f"bad-{k}", "bad").raise_for_status()
        assert httpx.post(f"{server.url}/episodes/bad-{k}/reward", json={}).status_code == 200
    r = httpx.post(f"{server.url}/train", json={})
    assert r.status_code == 200 and r.json()["updated"] is False and r.json()["step"] == 0
    assert same(start, weights(model)) and service.engine.policy_version == 0
    assert httpx.get(f"{server.url}/stats").json()["recorder"]["reward_errors"] == 3
    for k in range(4):
        chat(server, f"ok-{k}", "ok").raise_for_status()
        httpx.post(f"{server.url}/episodes/ok-{k}/reward", json={}).raise_for_status()
    r = httpx.post(f"{server.url}/train", json={})
    reply = json.loads(r.text, parse_constant=lambda c: pytest.fail(f"{c} in the reply"))
    assert r.status_code == 200 and reply["updated"] is True
    assert reply["step"] == 1 and isinstance(reply["step"], int)
    assert isinstance(reply["trajectories"], int) and reply["skipped_steps"] == 0
    after = weights(model)
    assert not same(start, after) and all(bool(torch.isfinite(w).all()) for w in after)
    assert chat(server).json()["system_fingerprint"] == "tracerl-v1"


def test_a_failed_update_changes_no_weights_no_version_and_loses_no_episode(serve, tmp_path):
    run = tmp_path / "run"
    service, server = serve(train=True, config=TrainConfig(seed=0), run_dir=run)
    for k in range(4):
        chat(server, f"e{k}", "t").raise_for_status()
        httpx.post(f"{server.url}/episodes/e{k}/reward", json={"reward": float(k % 2)}
                   ).raise_for_status()
    (run / "checkpoints").write_text("not a folder")  # the update's checkpoint will fail
    model, start = service.engine.policy.model, weights(service.engine.policy.model)
    moments = {k: v for k, v in service.learner.optimizer.state.items()}
    r = httpx.post(f"{server.url}/train", json={})
    assert r.status_code == 500 and "rolled back" in r.json()["error"]["message"]
    assert same(start, weights(model)) and service.engine.policy_version == 0
    assert dict(service.learner.optimizer.state) == moments  # Adam untouched (empty)
    stats = httpx.get(f"{server.url}/stats").json()
    assert stats["ready_trajectories"] == 4 and stats["learner"]["failed"] == 1
    (run / "checkpoints").unlink()
    r = httpx.post(f"{server.url}/train", json={})
    assert r.status_code == 200 and r.json()["step"] == 1 and r.json()["trajectories"] == 4


def test_every_update_writes_one_log_line(serve, caplog):
    service, server = serve(train=True)
    chat(server, "a", "t").raise_for_status()
    httpx.post(f"{server.url}/episodes/a/reward", json={"reward": 1.0}).raise_for_status()
    chat(server, "b", "t").raise_for_status()
    httpx.post(f"{server.url}/episodes/b/reward", json={"reward": 0.0}).raise_for_status()
    with caplog.at_level(logging.INFO, logger="tracerl.serve.learner"):
        httpx.post(f"{server.url}/train", json={}).raise_for_status()
    (line,) = [r.getMessage() for r in caplog.records if r.name == "tracerl.serve.learner"]
    assert line.startswith("train: version 1, 2 trajectories (0 unjudged), reward mean 0.5")
    assert "loss" in line and "skipped" in line


def test_a_body_over_the_limit_is_413_and_the_server_goes_on(serve):
    _, server = serve(max_body_bytes=64 * 1024)
    big = json.dumps({**ASK, "messages": [{"role": "user", "content": "x" * 100_000}]})
    r = post_raw(server, "/chat/completions", big.encode())
    assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large"

    def chunks():  # no Content-Length: read only up to the limit
        for i in range(0, len(big), 8192):
            yield big[i:i + 8192].encode()
    r = httpx.post(f"{server.url}/chat/completions", content=chunks(), timeout=60)
    assert r.status_code == 413
    r = post_raw(server, "/episodes/x/reward", b'{"reward": 1, "pad": "' + b"x" * 70_000 + b'"}')
    assert r.status_code == 413
    assert chat(server).status_code == 200


@pytest.mark.parametrize("content, why", [
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"model": "tiny", "messages": [{"role": "user", "content": "\\ud800"}]}', "surrogate"),
    (b'{"model": "tiny", "messages": [{"role": "user", "content": "\\udfff x"}]}',
     "surrogate"),
    (b'{"model": "tiny", "temperature": NaN, "messages": []}', "not a JSON number"),
    (b'{"model": "tiny", "messages": [{"role": "user", "content": "\xff"}]}', "not valid"),
], ids=["deep", "lone-high", "lone-low", "nan", "not-utf8"])
def test_malformed_bodies_are_400_not_500(serve, content, why):
    _, server = serve()
    r = post_raw(server, "/chat/completions", content)
    assert r.status_code == 400 and why in r.json()["error"]["message"]
    paired = '{"model": "tiny", "max_tokens": 2, "messages": [{"role": "user", ' \
             '"content": "\\ud83d\\ude00"}]}'  # a surrogate pair is fine: one emoji
    assert post_raw(server, "/chat/completions", paired.encode()).status_code == 200


def test_image_parts_are_refused_not_dropped(serve):
    _, server = serve()
    parts = [{"type": "text", "text": "What is this?"},
             {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
    r = chat(server, messages=[{"role": "user", "content": parts}])
    error = r.json()["error"]
    assert r.status_code == 400 and error["code"] == "unsupported_content"
    assert error["param"] == "messages[0].content[1]"
    assert chat(server, messages=[{"role": "user", "content": parts[:1]}]).status_code == 200


def test_anonymous_calls_never_evict_named_episodes(serve):
    _, server = serve(max_anonymous_episodes=2, max_open_episodes=3)
    chat(server, "kept").raise_for_status()
    for _ in range(5):
        chat(server).raise_for_status()
    assert httpx.get(f"{server.url}/episodes/kept").status_code == 200
    rec = httpx.get(f"{server.url}/stats").json()["recorder"]
    assert rec["evicted_anonymous"] == 3 and rec["evicted"] == 0
    assert rec["open"] == 1 and rec["open_anonymous"] == 2
    for k in range(4):  # named ones are bounded too, by their own cap
        chat(server, f"n{k}").raise_for_status()
    rec = httpx.get(f"{server.url}/stats").json()["recorder"]
    assert rec["evicted"] == 2 and rec["open"] == 3


def test_anonymous_calls_can_go_unrecorded(serve):
    _, server = serve(record_anonymous=False)
    reply = chat(server).json()
    assert httpx.get(f"{server.url}/episodes/{reply['id']}").status_code == 404
    chat(server, "named").raise_for_status()
    rec = httpx.get(f"{server.url}/stats").json()["recorder"]
    assert rec["unrecorded"] == 1 and rec["episodes"] == 1 and rec["calls"] == 1

"""Training from outside: episodes played over HTTP, rewards posted, one RL update, the
new weights served."""

import httpx
import pytest
from openai import OpenAI

from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.rl_step import RLStep


@pytest.mark.slow  # starts a server and trains
def test_an_update_on_posted_rewards_changes_what_is_served(serve, tmp_path):
    service, server = serve(train=True, config=TrainConfig(seed=0), run_dir=tmp_path)
    client = OpenAI(base_url=server.url, api_key="unused", max_retries=0)
    probe = {"model": "tiny", "messages": [{"role": "user", "content": "Compute (5*6)."}],
             "max_tokens": 4, "temperature": 0, "logprobs": True}
    before = client.chat.completions.create(**probe)
    for task in ("t1", "t2"):
        for k in range(4):
            episode = f"{task}-{k}"
            client.chat.completions.create(
                model="tiny", messages=[{"role": "user", "content": f"Compute ({task})."}],
                max_tokens=6, extra_body={"episode_id": episode, "task_id": task})
            httpx.post(f"{server.url}/episodes/{episode}/reward",
                       json={"reward": float(k % 2)}).raise_for_status()
    step = httpx.post(f"{server.url}/train", json={}, timeout=60).json()
    assert step["updated"] is True and step["step"] == 1.0
    assert step["groups"] == 2 and step["trajectories"] == 8 and "loss" in step
    after = client.chat.completions.create(**probe)
    assert before.system_fingerprint == "tracerl-v0"
    assert after.system_fingerprint == "tracerl-v1"
    old = [t.logprob for t in before.choices[0].logprobs.content]
    new = [t.logprob for t in after.choices[0].logprobs.content[:len(old)]]
    assert old != new  # the server samples from the updated weights
    assert (tmp_path / "checkpoints" / "latest").is_file()
    assert (tmp_path / "config.yaml").is_file()  # a run directory tracerl eval reads
    idle = httpx.post(f"{server.url}/train", json={}).json()
    assert idle["updated"] is False  # nothing finished since
    bad = httpx.post(f"{server.url}/train", json={"min_trajectories": 0})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "min_trajectories"


@pytest.mark.slow  # starts a server and trains
def test_unjudged_episodes_are_left_out_and_counted(serve):
    service, server = serve(train=True)
    client = OpenAI(base_url=server.url, api_key="unused", max_retries=0)
    for k in range(3):
        client.chat.completions.create(
            model="tiny", messages=[{"role": "user", "content": "q"}], max_tokens=4,
            extra_body={"episode_id": f"e{k}", "task_id": "t"})
        httpx.post(f"{server.url}/episodes/e{k}/reward",
                   json={"reward": None if k == 0 else float(k)}).raise_for_status()
    step = service.learner.step()
    assert step.metrics.unjudged == 1 and step.metrics.update.update is not None


def test_credit_that_branches_from_an_env_is_refused_without_one(tiny_policy):
    """Served trajectories have no env to branch Monte Carlo estimates from."""
    for over in (["credit.evaluator=monte_carlo"], ["credit.evaluator=tool_validity"]):
        cfg = configlib.load(TrainConfig, None, ["rl.advantage=mt_grpo", *over])
        with pytest.raises(ValueError, match="branches rollouts"):
            RLStep(tiny_policy, cfg, None, None)
    ok = configlib.load(TrainConfig, None, ["rl.advantage=mt_grpo",
                                            "credit.evaluator=tool_validity",
                                            "credit.calibrate=false"])
    assert RLStep(tiny_policy, ok, None, None).evaluator is not None

import asyncio

import pytest
import skyrl_gym
from skyrl_gym.envs.gsm8k.env import GSM8kEnv
from skyrl_gym.envs.gsm8k.multi_turn_env import GSM8kMultiTurnEnv

from tracerl.adapters.skyrl import FromSkyRL, ToSkyRL, env_reward, skyrl_env_class, skyrl_family
from tracerl.envs.base import check_env
from tracerl.envs.calc import CalcFamily
from tracerl.types import Message, Task, Trajectory, Turn

# A row as SkyRL's gsm8k preprocessing writes it (prompt, env_class, reward_spec, extra_info).
TASK = Task(id="gsm8k-0", messages=(Message("user", "Natalia sold 48 clips ... How many?"),),
            answer="72", metadata={"env_class": "gsm8k", "data_source": "openai/gsm8k",
                                   "extra_info": {"split": "train", "index": 0}})


def play(env, task, actions):
    async def run():
        opening = await env.reset(task)
        results = [await env.step(a) for a in actions]
        await env.close()
        return opening, results
    return asyncio.run(run())


def test_skyrl_gsm8k_env_runs_as_a_tracerl_env():
    asyncio.run(check_env(lambda: FromSkyRL(GSM8kEnv), TASK, ["The answer is #### 72"]))
    opening, (result,) = play(FromSkyRL(GSM8kEnv), TASK, ["so #### 72"])
    assert opening == list(TASK.messages)
    assert result.terminated and result.reward == 1.0
    _, (wrong,) = play(FromSkyRL(GSM8kEnv), TASK, ["#### 71"])
    assert wrong.terminated and wrong.reward == 0.0


def test_multi_turn_observations_and_the_summed_reward():
    task = Task(id="m", messages=TASK.messages, answer="72",
                metadata={"extra_info": {"max_turns": 3}})
    _, results = play(FromSkyRL(GSM8kMultiTurnEnv), task, ["thinking...", "#### 72"])
    first, second = results
    assert not first.terminated and first.observations[0].role == "user"
    assert "####" in first.observations[0].content and second.terminated
    traj = Trajectory(task=task, prompt_ids=[], turns=[
        Turn([], [], "a", reward=first.reward), Turn([], [], "b", reward=second.reward)])
    assert env_reward(traj) == pytest.approx(first.reward + second.reward) == 1.0
    family = skyrl_family(GSM8kMultiTurnEnv, [task], [TASK])
    assert isinstance(family.make_env(), FromSkyRL) and family.reward is env_reward


def calc_env_class():
    family = CalcFamily(calls=1)
    return family, skyrl_env_class(family.make_env, family.reward, name="CalcTextEnv")


def test_a_tracerl_env_registers_and_runs_in_skyrl_gym():
    family, cls = calc_env_class()
    skyrl_gym.register(id="tracerl-calc", entry_point=cls)
    task = family.tasks("train", 1, seed=0)[0]
    (a, b) = task.metadata["operands"]
    env = skyrl_gym.make("tracerl-calc", env_config={},
                         extras={"reward_spec": {"method": "rule", "ground_truth": task.answer},
                                 "extra_info": {"index": 7}})
    messages, meta = env.init([m.to_openai() for m in task.messages])
    assert messages == [m.to_openai() for m in task.messages] and meta == {"task_id": "7"}
    call = f'<tool_call>{{"name": "calculator", "arguments": {{"expression": "{a}*{b}"}}}}' \
           "</tool_call>"
    out = env.step(call)
    assert set(out) == {"observations", "reward", "done", "metadata", "postprocessed_action"}
    assert out["observations"][0]["role"] == "tool" and not out["done"]
    assert out["observations"][0]["content"] == str(a * b)
    final = env.step(f"Answer: {a * b}")
    assert final["done"] and final["reward"] == 1.0
    assert final["metadata"]["outcome_reward"] == 1.0
    env.close()


def test_a_wrong_answer_and_the_turn_limit():
    family = CalcFamily(calls=1)
    env = ToSkyRL(family.make_env, family.reward, extras={
        "reward_spec": {"ground_truth": "5"}, "max_turns": 2})
    env.init([{"role": "user", "content": "Compute (2*3)."}])
    out = env.step('<tool_call>{"name": "calculator", "arguments": {"expression": "2*3"}}'
                   "</tool_call>")
    assert not out["done"]
    out = env.step('<tool_call>{"name": "nope", "arguments": {}}</tool_call>')
    assert out["done"] and out["reward"] == 0.0  # max_turns reached, no answer
    env.close()

import asyncio
import random
import time

import pytest

from tracerl.envs.calc import CalcFamily
from tracerl.envs.tool_env import ToolEnv
from tracerl.tools.latency import LatencyProfile, with_latency
from tracerl.tools.tool import tool
from tracerl.types import Message, Task


def test_profiles_parse_from_text_and_reject_bad_specs():
    assert LatencyProfile.parse("") == LatencyProfile()
    assert LatencyProfile.parse(200) == LatencyProfile("fixed", 200.0)
    assert LatencyProfile.parse("fixed:50") == LatencyProfile("fixed", 50.0)
    assert LatencyProfile.parse("uniform:100:300").mean_ms == 200.0
    assert LatencyProfile.parse("exponential:80").mean_ms == 80.0
    with pytest.raises(ValueError, match="bad tool latency 'gauss:1'"):
        LatencyProfile.parse("gauss:1")
    with pytest.raises(ValueError, match="bad tool latency"):
        LatencyProfile.parse("uniform:100")
    with pytest.raises(ValueError, match="low <= high"):
        LatencyProfile.parse("uniform:300:100")


def test_samples_follow_the_distribution():
    rng = random.Random(0)
    fixed = LatencyProfile.parse("fixed:40")
    assert fixed.sample_s(rng) == pytest.approx(0.04)
    uniform = [LatencyProfile.parse("uniform:100:300").sample_s(rng) for _ in range(2000)]
    assert min(uniform) >= 0.1 and max(uniform) <= 0.3
    assert sum(uniform) / len(uniform) == pytest.approx(0.2, abs=0.01)
    expo = [LatencyProfile.parse("exponential:50").sample_s(rng) for _ in range(4000)]
    assert sum(expo) / len(expo) == pytest.approx(0.05, rel=0.1)


def test_slow_tools_wait_concurrently_and_keep_their_result():
    @tool
    def echo(text: str) -> str:
        """Echo.

        Args:
            text: anything.
        """
        return text

    slow = with_latency(echo, LatencyProfile.parse("fixed:150"))

    async def many():
        return await asyncio.gather(*(slow.acall({"text": str(i)}) for i in range(20)))

    t0 = time.perf_counter()
    out = asyncio.run(many())
    elapsed = time.perf_counter() - t0
    assert out == [str(i) for i in range(20)]
    assert 0.15 <= elapsed < 1.0  # 20 calls wait together, not 20 x 150 ms


def test_blocking_sync_tools_run_in_the_tool_pool_not_asyncios_six_threads():
    @tool
    def block(text: str) -> str:
        """Block like a synchronous HTTP client.

        Args:
            text: anything.
        """
        time.sleep(0.2)
        return text

    calls = "".join(f'<tool_call>{{"name": "block", "arguments": {{"text": "{i}"}}}}</tool_call>'
                    for i in range(8))

    async def episodes():
        envs = [ToolEnv([block]) for _ in range(4)]
        for e in envs:
            await e.reset(Task("t", (Message("user", "x"),)))
        return await asyncio.gather(*(e.step(calls) for e in envs))

    t0 = time.perf_counter()
    results = asyncio.run(episodes())
    assert all(r.ok for step in results for r in step.tool_results)
    assert time.perf_counter() - t0 < 1.2  # 32 blocking calls: ~0.2 s, not 6 at a time


def test_calc_and_maze_take_a_latency_profile_from_their_config():
    from tracerl.train import configlib
    from tracerl.train.config import TrainConfig
    from tracerl.train.runner import build_task_family

    cfg = configlib.load(TrainConfig, None, ["task.calc.tool_latency=fixed:120"])
    fam = build_task_family(cfg)
    assert isinstance(fam, CalcFamily) and fam.tool_latency.mean_ms == 120
    env = fam.make_env()
    task = fam.tasks("train", 1, seed=0)[0]
    asyncio.run(env.reset(task))
    t0 = time.perf_counter()
    step = asyncio.run(env.step('<tool_call>{"name": "calculator", "arguments": '
                                '{"expression": "2*3"}}</tool_call>'))
    assert step.tool_results[0].content == "6"
    assert time.perf_counter() - t0 >= 0.12
    maze = configlib.load(TrainConfig, None, ["task.family=maze", "task.maze.tool_latency=30"])
    assert build_task_family(maze).tool_latency == LatencyProfile("fixed", 30.0)
    with pytest.raises(configlib.ConfigError, match="bad tool latency"):
        configlib.load(TrainConfig, None, ["task.maze.tool_latency=soon"])

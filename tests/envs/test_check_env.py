import asyncio

import pytest

from tracerl.envs.base import EnvCheckError, StepResult, check_env
from tracerl.envs.calc import CalcFamily
from tracerl.types import Message, Task

TASK = Task("t", (Message("user", "hi"),))


def test_conforming_env_passes():
    fam = CalcFamily(calls=1)
    task = fam.tasks("train", 1, seed=0)[0]
    actions = [m.content for m in fam.demonstration(task, __import__("random").Random(0))
               if m.role == "assistant"]
    asyncio.run(check_env(fam.make_env, task, actions))


class BrokenEnv:
    def __init__(self) -> None:
        self.resets = 0

    async def reset(self, task):
        self.resets += 1
        return [Message("user", f"hi {self.resets}")]

    async def step(self, action_text):
        return StepResult(observations=["not a message"], reward=float("nan"),  # type: ignore[list-item]
                          terminated=0)  # type: ignore[arg-type]

    async def close(self):
        return None


def test_violations_are_all_listed():
    with pytest.raises(EnvCheckError) as e:
        asyncio.run(check_env(BrokenEnv, TASK, ["a"]))
    text = str(e.value)
    assert "observations[0] must be a tracerl.types.Message" in text
    assert "reward must be a finite float" in text
    assert "terminated must be bool" in text
    assert "did not end after 1 scripted actions" in text
    assert "not deterministic" in text


def test_non_env_is_rejected():
    with pytest.raises(EnvCheckError, match="did not return an Env"):
        asyncio.run(check_env(lambda: object(), TASK, []))  # type: ignore[arg-type,return-value]

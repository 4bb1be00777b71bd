import asyncio
import random

import pytest

from tracerl.envs.calc import CalcFamily, is_heldout
from tracerl.types import Status, Task, Trajectory, Turn


def test_splits_never_overlap():
    fam = CalcFamily(calls=1)
    train = {t.metadata["expression"] for t in fam.tasks("train", 2000, seed=0)}
    held = {t.metadata["expression"] for t in fam.tasks("heldout", 500, seed=0)}
    assert not train & held
    assert all(is_heldout(e) for e in held) and not any(is_heldout(e) for e in train)


def test_tasks_are_reproducible_from_the_seed():
    fam = CalcFamily()
    assert fam.tasks("train", 5, seed=3) == fam.tasks("train", 5, seed=3)
    assert fam.tasks("train", 5, seed=3) != fam.tasks("train", 5, seed=4)


@pytest.mark.parametrize("calls", [1, 3, 6])
def test_oracle_solves_through_the_real_env_with_k_calls(calls):
    fam = CalcFamily(calls=calls, skip_tool_prob=0.0)
    task = fam.tasks("heldout", 1, seed=1)[0]
    demo = fam.demonstration(task, random.Random(0))
    actions = [m for m in demo if m.role == "assistant"]
    assert len(actions) == calls + 1
    env = fam.make_env()

    async def play():
        await env.reset(task)
        turns = []
        for m in actions:
            r = await env.step(m.content)
            turns.append(Turn([], [], m.content, tool_results=r.tool_results))
            # the env's answer is the oracle's recorded tool result
            assert [o.content for o in r.observations] == [
                o.content for o in demo[demo.index(m) + 1:][:len(r.observations)]]
        return turns

    turns = asyncio.run(play())
    traj = Trajectory(task=task, prompt_ids=[], turns=turns, status=Status.DONE)
    assert fam.reward(traj) == 1.0


def test_whole_expression_in_one_call_is_refused():
    fam = CalcFamily(calls=2)
    task = fam.tasks("train", 1, seed=0)[0]
    env = fam.make_env()
    expr = task.metadata["expression"]

    async def go():
        await env.reset(task)
        return await env.step(
            f'<tool_call>{{"name": "calculator", "arguments": {{"expression": "{expr}"}}}}'
            "</tool_call>")

    r = asyncio.run(go())
    assert r.tool_results[0].error == "tool_raised"
    assert "at most 1 operation" in r.observations[0].content


def _final(text: str, answer: str = "42") -> Trajectory:
    task = Task("t", (), answer=answer)
    return Trajectory(task=task, prompt_ids=[], turns=[Turn([], [], text)])


def test_reward_exact_numeric_match():
    fam = CalcFamily()
    assert fam.reward(_final("Answer: 42<|im_end|>")) == 1.0
    assert fam.reward(_final("Answer: 42.0")) == 1.0
    assert fam.reward(_final("Answer: 43")) == 0.0
    assert fam.reward(_final("42")) == 0.0
    assert fam.reward(_final("Answer: 42 and more")) == 0.0


def test_format_term():
    fam = CalcFamily(format_weight=0.2)
    assert fam.reward(_final("Answer: 41")) == pytest.approx(0.2)
    assert fam.reward(_final("so Answer: 42")) == pytest.approx(0.8)


def test_bad_family_options_are_named():
    with pytest.raises(ValueError, match="calls must be between 1 and 6"):
        CalcFamily(calls=7)
    with pytest.raises(ValueError, match="skip_tool_prob"):
        CalcFamily(skip_tool_prob=2.0)


def test_a_pretrained_model_is_told_the_tool_and_the_answer_format():
    bare, told = CalcFamily(), CalcFamily(describe_tools=True)
    (a,), (b,) = bare.tasks("train", 1, seed=0), told.tasks("train", 1, seed=0)
    expr = a.metadata["expression"]
    assert a.messages[0].content == f"Compute {expr}."
    assert b.messages[0].content.startswith(f"Compute {expr}. Use the calculator tool")
    assert '"Answer: <number>"' in b.messages[0].content
    assert told.make_env().tool_schemas == [told.calculator.schema]

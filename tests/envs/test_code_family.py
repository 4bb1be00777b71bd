import asyncio
import random

from tracerl.envs.code.family import CodeFamily
from tracerl.types import Status, Trajectory, Turn


def _play(fam, task, actions):
    env = fam.make_env()

    async def go():
        messages = await env.reset(task)
        turns = []
        for a in actions:
            r = await env.step(a)
            turns.append(Turn([], [], a, tool_results=r.tool_results,
                              observations=r.observations))
            if r.terminated:
                break
        return messages, turns, r

    return asyncio.run(go())


def test_reference_submission_scores_one_through_the_env():
    fam = CodeFamily()
    task = fam.tasks("heldout", 1, seed=0)[0]
    demo = fam.demonstration(task, random.Random(0))
    messages, turns, last = _play(fam, task, [demo[0].content])
    assert messages == list(task.messages)
    assert last.terminated
    traj = Trajectory(task=task, prompt_ids=[], turns=turns, status=Status.DONE)
    assert fam.reward(traj) == 1.0


def test_scratch_runs_are_sandboxed_and_wrong_code_scores_zero(monkeypatch):
    monkeypatch.setenv("TRACERL_TEST_SECRET", "s3cr3t-value")
    fam = CodeFamily()
    task = fam.tasks("train", 1, seed=1)[0]
    probe = ('<tool_call>{"name": "run_python", "arguments": {"code": '
             '"import os; print(sorted(os.environ)); print(42)"}}</tool_call>')
    wrong = '<tool_call>{"name": "submit", "arguments": {"code": "pass"}}</tool_call>'
    _, turns, last = _play(fam, task, [probe, wrong])
    assert "status: ok" in turns[0].observations[0].content
    assert "42" in turns[0].observations[0].content
    assert "TRACERL_TEST_SECRET" not in turns[0].observations[0].content
    traj = Trajectory(task=task, prompt_ids=[], turns=turns, status=Status.DONE)
    assert last.terminated and fam.reward(traj) == 0.0


def test_splits_do_not_overlap():
    fam = CodeFamily()
    train = {t.id for t in fam.tasks("train", 200, seed=0)}
    held = {t.id for t in fam.tasks("heldout", 200, seed=0)}
    assert train and held and not train & held

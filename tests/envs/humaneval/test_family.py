import asyncio
import os
import random

import pytest

from tracerl.envs.humaneval.data import data_path
from tracerl.envs.humaneval.family import HumanEvalConfig, HumanEvalFamily
from tracerl.envs.registry import FamilyContext, build_family
from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.types import Status, Trajectory, Turn


def _play(fam, task, actions):
    env = fam.make_env()

    async def go():
        messages = await env.reset(task)
        turns, last = [], None
        for a in actions:
            last = await env.step(a)
            turns.append(Turn([], [], a, tool_calls=last.tool_calls,
                              tool_results=last.tool_results, observations=last.observations))
            if last.terminated:
                break
        await env.close()
        return messages, turns, last

    return asyncio.run(go())


def _run(code):
    return ('<tool_call>{"name": "run_python", "arguments": {"code": '
            + __import__("json").dumps(code) + '}}</tool_call>')


def test_the_prompt_is_humanevals_and_the_tests_stay_in_metadata():
    fam = HumanEvalFamily()
    task = fam.eval_tasks("heldout", 1)[0]
    text = task.messages[0].content
    assert task.id == "HumanEval/1" and task.metadata["prompt"].strip() in text
    assert "check" not in text and "METADATA" not in text


def test_a_plain_episode_ends_on_its_one_reply_and_scores_it():
    fam = HumanEvalFamily()
    task = fam.tasks("train", 1, seed=0)[0]
    demo = fam.demonstration(task, random.Random(0))
    _, turns, last = _play(fam, task, ["<tool_call>{}</tool_call>" + demo[0].content])
    assert last.terminated and len(turns) == 1 and not last.observations
    _, turns, _ = _play(fam, task, [demo[0].content])
    assert fam.reward(Trajectory(task=task, prompt_ids=[], turns=turns,
                                 status=Status.DONE)) == 1.0


def test_demonstrations_are_train_only_and_pass():
    fam = HumanEvalFamily(tools=("run_python",))
    task = fam.tasks("train", 1, seed=3)[0]
    demo = fam.demonstration(task, random.Random(0))
    assert [m.role for m in demo] == ["assistant", "tool", "assistant"]
    assert "status: ok" in demo[1].content
    with pytest.raises(ValueError, match="train ids only"):
        fam.demonstration(fam.tasks("heldout", 1, seed=0)[0], random.Random(0))


def test_the_agent_runs_code_then_answers():
    fam = HumanEvalFamily(tools=("run_python",))
    task = fam.tasks("train", 1, seed=0)[0]
    answer = fam.demonstration(task, random.Random(0))[-1].content
    _, turns, last = _play(fam, task, [_run("print(6 * 7)"), answer])
    assert "42" in turns[0].observations[0].content
    assert last.terminated and len(turns) == 2
    traj = Trajectory(task=task, prompt_ids=[], turns=turns, status=Status.DONE)
    assert fam.reward(traj) == 1.0


PROBE = """\
import os, glob
NEEDLE = b'def ' + b'check(candidate'  # the tests' entry point, spelled so this source lacks it
found = []
for root in ('/', os.path.expanduser('~')):
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in ('proc', 'sys', 'dev')]
        for f in files:
            if 'humaneval' in f.lower() or f.endswith('.jsonl.gz'):
                found.append(os.path.join(dirpath, f))
for p in glob.glob('/proc/*/environ') + glob.glob('/proc/*/cmdline'):
    try:
        if NEEDLE in open(p, 'rb').read(): found.append(p)
    except OSError:
        pass
found += [k for k in os.environ if 'TRACERL' in k]
print('FOUND', found)
for path in PATHS:
    try:
        open(path, 'rb').read(); print('READ', path)
    except OSError as e:
        print('DENIED', path, type(e).__name__)
"""


def test_a_tool_call_cannot_reach_the_hidden_tests(monkeypatch):
    """The agent's code searches the filesystem, every process's environment and command
    line, and its own environment for the tests (the parent holds them and a marker in
    its environment), and opens the dataset's file by its host path: nothing. (The
    sandbox worker is a fresh interpreter, not a fork of the parent, so its memory never
    held them.)"""
    monkeypatch.setenv("TRACERL_HIDDEN_PROBE", "def check(candidate): pass")
    fam = HumanEvalFamily(tools=("run_python",), tool_timeout_s=120.0)  # walks every file
    task = fam.tasks("train", 1, seed=0)[0]
    paths = [str(data_path()), os.path.expanduser("~/.cache/tracerl")]
    _, turns, _ = _play(fam, task, [_run(f"PATHS = {paths!r}\n" + PROBE)])
    out = turns[0].observations[0].content
    assert "FOUND []" in out, out
    assert "READ" not in out and out.count("DENIED") == 2
    assert task.metadata["tests"][-200:] not in out


def test_the_config_section_reaches_the_family():
    cfg = configlib.load(TrainConfig, None, ["task.family=humaneval",
                                             "task.humaneval.tools=[run_python]",
                                             "task.humaneval.held_out_fraction=0.25"])
    fam = build_family("humaneval", cfg.task.section(), FamilyContext())
    assert fam.tools == ("run_python",) and fam.max_turns == 4
    assert len(fam.eval_tasks("heldout", 1000)) < 78
    with pytest.raises(configlib.ConfigError, match="run_python"):
        configlib.load(TrainConfig, None, ["task.family=humaneval",
                                           "task.humaneval.tools=[shell]"])
    with pytest.raises(ValueError, match="unknown tools"):
        build_family("humaneval", HumanEvalConfig(tools=["shell"]),  # type: ignore[list-item]
                     FamilyContext())

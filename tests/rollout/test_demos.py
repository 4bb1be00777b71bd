"""Demonstrations have the token layout of rollouts: an action ends where the policy is
asked to end it (right after `</tool_call>`'s tokens, however many), the rest of the
template is masked observation, and the prompt is what the env opens the episode with."""

import random

import pytest

from tracerl.envs.calc import CalcFamily
from tracerl.rollout.demos import action_text, episode_openings, trajectory_from_messages
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner
from tracerl.types import Message, Task

STOPS = ("</tool_call>", "<|im_end|>")


@pytest.mark.parametrize("name", [
    "tiny", "qwen", "spelt", pytest.param("smollm2", marks=pytest.mark.slow)])
def test_demonstrations_equal_rollouts_of_the_oracle(chat_tokenizer, oracle_sampler, name):
    tok = chat_tokenizer(name)
    renderer = ChatRenderer(tok)
    fam = CalcFamily(calls=2, skip_tool_prob=0.0, describe_tools=True)
    tasks = fam.tasks("train", 2, 0)
    runner = RolloutRunner(oracle_sampler(tok, fam, tasks), renderer, (), fam.make_env,
                           fam.reward, RolloutConfig(group_size=1))
    rolled = [g.trajectories[0] for g in runner.run(tasks)]
    openings = episode_openings(fam.make_env, tasks)
    for task, (prompt, tools), r in zip(tasks, openings, rolled, strict=True):
        demo = trajectory_from_messages(renderer, task, prompt,
                                        fam.demonstration(task, random.Random(0)), tools)
        assert demo.prompt_ids == r.prompt_ids and demo.tools == r.tools
        assert [t.action_ids for t in demo.turns] == [t.action_ids for t in r.turns]
        assert [t.observation_ids for t in demo.turns] == [t.observation_ids for t in r.turns]
        call = demo.turns[0]
        assert renderer.decode(call.action_ids).endswith("</tool_call>")
        assert renderer.decode(call.observation_ids).startswith("<|im_end|>")


def test_an_action_ends_at_its_stop_string_or_gets_the_turn_end():
    assert action_text("<tool_call>{}</tool_call>", STOPS, "<|im_end|>") == \
        "<tool_call>{}</tool_call>"
    assert action_text("Answer: 6", STOPS, "<|im_end|>") == "Answer: 6<|im_end|>"


def test_a_demonstration_past_a_stop_string_is_refused(chat_tokenizer):
    renderer = ChatRenderer(chat_tokenizer("tiny"))
    task = Task("t", (Message("user", "hi"),))
    late = Message("assistant", "<tool_call>{}</tool_call> and then some")
    with pytest.raises(ValueError, match="continues after a stop string"):
        trajectory_from_messages(renderer, task, list(task.messages), [late])


def test_openings_are_the_env_reset_and_its_tools():
    fam = CalcFamily(describe_tools=True)
    tasks = fam.tasks("train", 2, 0)
    (messages, tools), _ = episode_openings(fam.make_env, tasks)
    assert messages == list(tasks[0].messages)
    assert [t["function"]["name"] for t in tools] == ["calculator"]
    assert episode_openings(CalcFamily().make_env, tasks)[0][1] == []

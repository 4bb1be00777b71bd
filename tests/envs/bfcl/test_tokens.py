"""Token-in, token-out across BFCL's user turns: the runner's ids are the chat template's
rendering of the finished conversation, user turns and added functions included."""

import random

import pytest

from tracerl.envs.bfcl.family import BfclFamily
from tracerl.rollout.demos import episode_openings, trajectory_from_messages
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner

REAL = [pytest.param(n, marks=pytest.mark.slow) for n in ("smollm2", "gemma3")]


def _render_exactly(tok, oracle_sampler, family, tasks):
    """Roll the tasks' demonstrations through the runner; returns the trajectories after
    checking each against the template's rendering and the demonstration's own ids."""
    renderer = ChatRenderer(tok)
    config = RolloutConfig(group_size=1, max_turns=80, max_turn_tokens=4096,
                           max_response_tokens=200_000)
    runner = RolloutRunner(oracle_sampler(tok, family, tasks), renderer, (), family.make_env,
                           family.reward, config)
    rolled = [g.trajectories[0] for g in runner.run(tasks)]
    openings = episode_openings(family.make_env, tasks)
    for task, (prompt, tools), traj in zip(tasks, openings, rolled, strict=True):
        assert traj.outcome_reward == 1.0, (task.id, traj.error)
        full = renderer.render(traj.messages(), add_generation_prompt=False, tools=tools)
        assert renderer.encode(full) == traj.token_ids(), task.id
        demo = trajectory_from_messages(renderer, task, prompt,
                                        family.demonstration(task, random.Random(0)), tools)
        assert demo.token_ids() == traj.token_ids()
        assert demo.loss_mask() == traj.loss_mask()
    return rolled


@pytest.mark.parametrize("name", ["tiny", *REAL])
@pytest.mark.parametrize(("form", "single_turn"), [("one_per_action", "acknowledged"),
                                                  ("one_reply", "acknowledged"),
                                                  ("one_reply", "one_reply")])
def test_single_turn_rollouts_render_exactly(chat_tokenizer, oracle_sampler, name, form,
                                            single_turn):
    tok = chat_tokenizer(name)
    family = BfclFamily(("parallel_multiple",), demo_format=form, single_turn=single_turn)
    # prompts the tokenizer keeps as they are (the tiny one's characters are few; the
    # oracle finds its task by the prompt's text)
    tasks = [t for t in family.tasks("train", 20, 0) if tok.decode(
        tok.encode(t.messages[0].content, add_special_tokens=False)) == t.messages[0].content]
    rolled = _render_exactly(tok, oracle_sampler, family, tasks[:2])
    per_action = [len(t.tool_calls) for traj in rolled for t in traj.turns if t.tool_calls]
    if form == "one_per_action":
        assert set(per_action) == {1}
    else:  # one action per episode holds all of its calls (parallel_multiple: 2 or more)
        assert len(per_action) == 2 and min(per_action) >= 2
    if single_turn == "one_reply":  # and nothing else: the first reply ends the episode
        assert [len(traj.turns) for traj in rolled] == [1, 1]


@pytest.mark.parametrize("name", ["tiny", *REAL])
def test_multi_turn_rollouts_render_exactly(chat_tokenizer, oracle_sampler, name):
    tok = chat_tokenizer(name)
    family = BfclFamily(("multi_turn_miss_func",))
    tasks = family.tasks("train", 2, 0)
    rolled = _render_exactly(tok, oracle_sampler, family, tasks)
    for traj in rolled:
        users = [m for t in traj.turns for m in t.observations if m.role == "user"]
        assert any("I have updated some more functions" in m.content for m in users)

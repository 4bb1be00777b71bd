"""Token-in, token-out across BFCL's user turns: the runner's ids are the chat template's
rendering of the finished conversation, user turns and added functions included."""

import random

import pytest

from tracerl.envs.bfcl.family import BfclFamily
from tracerl.rollout.demos import episode_openings, trajectory_from_messages
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner


@pytest.mark.parametrize("name", ["tiny", pytest.param("smollm2", marks=pytest.mark.slow)])
def test_multi_turn_rollouts_render_exactly(chat_tokenizer, oracle_sampler, name):
    tok = chat_tokenizer(name)
    renderer = ChatRenderer(tok)
    family = BfclFamily(("multi_turn_miss_func",))
    tasks = family.tasks("train", 2, 0)
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
        users = [m for t in traj.turns for m in t.observations if m.role == "user"]
        assert any("I have updated some more functions" in m.content for m in users)

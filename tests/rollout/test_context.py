"""The model's context is a hard limit: a prompt that does not fit is refused with a
message naming both lengths, and an episode whose context fills up ends truncated;
nothing is cut short silently."""

from tracerl.envs.calc import CalcFamily
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner
from tracerl.types import Status


def run(chat_tokenizer, oracle_sampler, context):
    tok = chat_tokenizer("tiny")
    fam = CalcFamily(calls=2, skip_tool_prob=0.0, describe_tools=True)
    tasks = fam.tasks("train", 1, 0)
    runner = RolloutRunner(oracle_sampler(tok, fam, tasks), ChatRenderer(tok), (),
                           fam.make_env, fam.reward, RolloutConfig(group_size=1),
                           context_tokens=context)
    return runner, runner.run(tasks)[0].trajectories[0]


def test_a_prompt_longer_than_the_context_is_refused(chat_tokenizer, oracle_sampler):
    runner, full = run(chat_tokenizer, oracle_sampler, 0)
    prompt = len(full.prompt_ids)
    runner, traj = run(chat_tokenizer, oracle_sampler, prompt)
    assert traj.status is Status.ERROR and traj.outcome_reward is None and not traj.turns
    assert f"({prompt} tokens" in traj.error and f"context of {prompt} tokens" in traj.error
    assert runner.stats.env_errors == 1 and runner.stats.unjudged == 1


def test_an_episode_that_fills_the_context_ends_truncated(chat_tokenizer, oracle_sampler):
    _, full = run(chat_tokenizer, oracle_sampler, 0)
    assert full.outcome_reward == 1.0
    limit = len(full.prompt_ids) + len(full.turns[0].action_ids) + 5
    _, traj = run(chat_tokenizer, oracle_sampler, limit)
    assert traj.status is Status.TRUNCATED and "context of" in traj.error
    assert len(traj.token_ids()) <= limit + len(traj.turns[-1].observation_ids)

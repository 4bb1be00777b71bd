
from tracerl.envs.maze import MazeFamily, positions
from tracerl.rollout.runner import Prefix
from tracerl.types import Status


def test_branches_continue_from_the_prefix_state(maze_runner, play, toward):
    family = MazeFamily(min_moves=8, max_moves=8, slack=2)
    good, bad = toward(family)
    traj = play(family, good + bad + good)
    runner, _ = maze_runner(noise=0.0, family=family)
    (group,) = runner.run_from([Prefix(traj, 2)], samples=3)
    for branch in group.trajectories:
        assert branch.turns[:2] == traj.turns[:2]
        assert positions(branch)[:3] == positions(traj)[:3]
        assert branch.token_ids()[:len(traj.prompt_ids)] == traj.prompt_ids
        assert branch.outcome_reward == 1.0  # the oracle finishes from there


def test_branch_token_stream_extends_the_prefix_tokens(maze_runner, play):
    family = MazeFamily(min_moves=8, max_moves=8, slack=2)
    traj = play(family, "NN")
    runner, _ = maze_runner(noise=0.0, family=family)
    (group,) = runner.run_from([Prefix(traj, 2)], samples=1)
    prefix_ids = traj.prompt_ids + [i for t in traj.turns for i in t.action_ids +
                                    t.observation_ids]
    assert group.trajectories[0].token_ids()[:len(prefix_ids)] == prefix_ids


def test_a_non_reproducible_prefix_is_a_contained_error(maze_runner, play):
    family = MazeFamily(min_moves=8, max_moves=8, slack=2)
    traj = play(family, "NN")
    traj.turns[0].observations[0] = type(traj.turns[0].observations[0])("tool", "9,9 +0+0")
    runner, _ = maze_runner(noise=0.0, family=family)
    (group,) = runner.run_from([Prefix(traj, 2)], samples=2)
    assert all(t.status is Status.ERROR and t.outcome_reward is None for t in group.trajectories)
    assert "different observations" in group.trajectories[0].error


def test_monte_carlo_values_favour_progress(maze_runner, play, toward):
    from tracerl.credit.montecarlo import MonteCarloEvaluator

    family = MazeFamily(min_moves=8, max_moves=8, slack=2)
    good, bad = toward(family)
    traj = play(family, bad + bad + good)
    runner, _ = maze_runner(noise=0.0, family=family)
    mc = MonteCarloEvaluator(runner, samples=2)
    # after one detour the slack is spent on the way back; after two, it is gone
    assert mc.values([Prefix(traj, 0), Prefix(traj, 1), Prefix(traj, 2)]) == [1.0, 1.0, 0.0]
    assert mc(traj, 1) == 0.0  # advantage -1 -> score 0

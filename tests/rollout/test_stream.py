import threading
import time

import pytest

from tracerl.envs.calc import CalcFamily
from tracerl.policy.sampler import TransformersSampler
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner
from tracerl.rollout.stream import Job, StreamingRollout, length_buckets
from tracerl.tools.latency import LatencyProfile


@pytest.fixture
def synced_oracle(oracle_sampler):
    class SyncedOracle(oracle_sampler):
        """The oracle plus the WeightSync method: it records what it was sent."""

        loaded: list = []
        sampled = threading.Event()  # set once a generate call has returned

        def load_weights(self, weights):
            self.loaded.append(list(weights))

        def generate(self, *args, **kwargs):
            out = super().generate(*args, **kwargs)
            self.sampled.set()
            return out

    return SyncedOracle


def _stream(tiny_policy, sampler, family, max_groups=4, group_size=2):
    runner = RolloutRunner(sampler, ChatRenderer(tiny_policy.tokenizer), (), family.make_env,
                           family.reward, RolloutConfig(group_size=group_size, max_turns=4))
    return StreamingRollout(runner, max_groups)


def _wait(stream, n, timeout_s=20.0):
    out, t0 = [], time.perf_counter()
    while len(out) < n and time.perf_counter() - t0 < timeout_s:
        out += stream.drain(0.05)
    return out


@pytest.mark.slow
def test_a_group_submitted_while_tools_wait_is_sampled_at_once(tiny_policy, synced_oracle):
    fam = CalcFamily(calls=2, tool_latency=LatencyProfile.parse("fixed:400"))
    tasks = fam.tasks("train", 2, seed=0)
    stream = _stream(tiny_policy, synced_oracle(tiny_policy.tokenizer, fam, tasks), fam)
    stream.start()
    try:
        stream.submit([Job(0, tasks[0])])
        time.sleep(0.15)  # group 0's first tool calls are in flight now
        stream.submit([Job(1, tasks[1])])
        done = {f.index: f.group for f in _wait(stream, 2)}
    finally:
        stream.stop()
    assert sorted(done) == [0, 1]
    first, second = done[0].trajectories[0], done[1].trajectories[0]
    # group 1 sampled its first action while group 0's tool call was still waiting
    assert second.turns[0].started_at < first.turns[0].ended_at
    assert all(t.outcome_reward == 1.0 for g in done.values() for t in g.trajectories)
    assert [t.group_index for t in done[1].trajectories] == [1, 1]


def test_an_episode_in_flight_continues_with_the_synced_weights(tiny_policy, synced_oracle):
    fam = CalcFamily(calls=2, tool_latency=LatencyProfile.parse("fixed:600"))
    tasks = fam.tasks("train", 1, seed=1)
    sampler = synced_oracle(tiny_policy.tokenizer, fam, tasks)
    stream = _stream(tiny_policy, sampler, fam)
    stream.start()
    try:
        stream.submit([Job(7, tasks[0])])
        assert sampler.sampled.wait(20)  # turn 0 sampled by version 0; its tool call waits
        stream.sync([("w", 1)], version=1)
        (finished,) = _wait(stream, 1)
    finally:
        stream.stop()
    traj = finished.group.trajectories[0]
    assert [t.policy_version for t in traj.turns] == [0, 1, 1]
    assert traj.policy_version == 0  # the oldest turn: what staleness is measured by
    assert sampler.loaded[-1] == [("w", 1)] and stream.stats.weight_syncs == 1


def test_a_sampler_without_weight_sync_is_refused(tiny_policy, oracle_sampler):
    fam = CalcFamily(calls=1)
    with pytest.raises(TypeError, match="no load_weights"):
        _stream(tiny_policy, oracle_sampler(tiny_policy.tokenizer, fam, []), fam)


def test_a_group_whose_env_cannot_start_is_handed_out_empty_and_counted(tiny_policy):
    class Broken(CalcFamily):
        def make_env(self):
            raise ConnectionError("sandbox pool is down")

    fam = Broken(calls=1)
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=0,
                                  tokenizer=tiny_policy.tokenizer)
    stream = _stream(tiny_policy, sampler, fam)
    stream.start()
    try:
        stream.submit([Job(3, fam.tasks("train", 1, seed=0)[0])])
        (finished,) = _wait(stream, 1)
    finally:
        stream.stop()
    assert finished.index == 3 and finished.group.trajectories == []
    assert stream.stats.failed_groups == 1 and "sandbox pool is down" in stream.stats.errors[0]
    assert stream.error is None


def test_a_call_mixing_first_turns_with_long_contexts_is_split_longest_first():
    first, after_tool = 36, 125
    assert length_buckets([first, after_tool, first, first, after_tool]) == [[1, 4], [0, 2, 3]]
    assert length_buckets([first] * 8) == [list(range(8))]  # one length: one call
    # a few short rows among long ones pad little: a second call would cost more
    assert length_buckets([after_tool] * 16 + [first] * 2) == [list(range(18))]
    assert length_buckets([]) == [] and length_buckets([7]) == [[0]]

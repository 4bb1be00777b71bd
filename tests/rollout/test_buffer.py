import pytest

from tracerl.rollout.buffer import GroupBuffer
from tracerl.rollout.stream import Finished, group_version
from tracerl.types import Group, Message, Task, Trajectory

TASK = Task("t", (Message("user", "x"),))


def _finished(index: int, *versions: int) -> Finished:
    trajs = [Trajectory(TASK, [1], policy_version=v) for v in versions]
    return Finished(index, Group(TASK, trajs))


def test_the_buffer_is_bounded():
    buf = GroupBuffer(2)
    buf.put(_finished(0, 0))
    buf.put(_finished(1, 0))
    with pytest.raises(OverflowError, match="buffer full"):
        buf.put(_finished(2, 0))


def test_groups_come_out_oldest_first():
    buf = GroupBuffer(4)
    for i in range(3):
        buf.put(_finished(i, 0))
    assert [f.index for f in buf.take(2)] == [0, 1]
    assert [f.index for f in buf.items()] == [2]


def test_a_group_sampled_earlier_comes_out_first_even_if_it_finished_later():
    buf = GroupBuffer(4)
    buf.put(_finished(0, 3))
    buf.put(_finished(1, 2, 4))  # finished after 0, but its first turn is older
    buf.put(_finished(2, 3))
    assert [f.index for f in buf.take(2)] == [1, 0]
    assert [f.index for f in buf.items()] == [2]


def test_a_group_is_as_old_as_its_oldest_trajectory_and_stale_ones_are_dropped():
    assert group_version(_finished(0, 3, 1, 2).group) == 1
    buf = GroupBuffer(4)
    buf.put(_finished(0, 1, 4))
    buf.put(_finished(1, 3, 3))
    buf.put(_finished(2, 4))
    stale = buf.drop_stale(version=4, max_staleness=1)
    assert [f.index for f in stale] == [0]  # 4 - 1 > 1; 4 - 3 is within the bound
    assert [f.index for f in buf.items()] == [1, 2]
    assert buf.drop_stale(version=4, max_staleness=1) == []

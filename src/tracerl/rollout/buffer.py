"""The bounded buffer between rollout workers and the learner (async training).

Finished groups wait here until the learner takes a batch, the oldest first (lowest
policy version, then first finished). The bound is the point: the learner's owner
assigns new groups only while in-flight plus buffered groups stay under `capacity`, so
memory is bounded and a slow learner slows sampling (back-pressure) instead of piling up
ever staler trajectories. A group whose oldest turn was sampled more than
`max_staleness` versions before the learner's is dropped when taken, and returned so
the caller can count it.
"""

from __future__ import annotations

from collections import deque

from tracerl.rollout.stream import Finished, group_version


class GroupBuffer:
    """Finished groups, oldest first, at most `capacity`."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"buffer capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._items: deque[Finished] = deque()

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: Finished) -> None:
        if len(self._items) >= self.capacity:
            raise OverflowError(f"group buffer full ({self.capacity} groups): more groups "
                                "were assigned than the buffer bound allows")
        self._items.append(item)

    def drop_stale(self, version: int, max_staleness: int) -> list[Finished]:
        """Remove and return every group with `version - group_version > max_staleness`."""
        stale = [f for f in self._items if version - group_version(f.group) > max_staleness]
        if stale:
            self._items = deque(f for f in self._items
                                if version - group_version(f.group) <= max_staleness)
        return stale

    def take(self, n: int) -> list[Finished]:
        """The `n` oldest groups (fewer if fewer are here): the lowest policy version
        first, then the first finished. A group sampled early that finished late (a
        longer episode) goes before younger ones, rather than ageing past the staleness
        bound behind them."""
        order = sorted(range(len(self._items)),
                       key=lambda i: (group_version(self._items[i].group), i))[:n]
        taken = [self._items[i] for i in order]
        chosen = set(order)
        self._items = deque(f for i, f in enumerate(self._items) if i not in chosen)
        return taken

    def items(self) -> list[Finished]:
        """The buffered groups, oldest first (what a checkpoint saves)."""
        return list(self._items)

"""`maze`: a long-horizon grid walk, one move tool call per step (8 to 20 calls).

The agent starts at one cell of a `size` x `size` grid and must reach a goal cell by
calling the move tools `N` (y+1), `E` (x+1), `S` (y-1) or `W` (x-1), which take no
arguments. Every call answers with the new position and the offset still to go
("4,5 +3-2"), so progress is verifiable after each step. Calls are written without
the empty arguments object (`<tool_call>{"name": "E"}</tool_call>`, which the Hermes
parser accepts): about 45 tokens per turn for the character-level tiny policy, whose
cost grows with every character (measured: ~420 tokens per 10-step episode).

The episode ends when the goal is reached (reward 1) or when the move budget, the
distance plus `slack`, runs out (truncated, reward 0): a few wasted moves fail the
episode, which is what makes credit assignment matter.

`subgoal(trajectory, k)` is the task-provided intermediate check: 1.0 when turn k's
move brought the agent closer to the goal, 0.0 when it did not (a detour, a wall, a
malformed call, or stopping early). `state_key(trajectory, k)` names the cell the
agent stood on before turn k (GiGPO's anchor state).

Splits: a task is held out iff the first byte of the SHA-256 of "start->goal" is below
256 * HELDOUT_FRACTION, a pure function of the task (no overlap, whatever the seeds).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from tracerl.envs.base import StepResult
from tracerl.envs.family import Split
from tracerl.envs.registry import FamilyContext, register_family
from tracerl.envs.tool_env import ToolEnv, ToolEnvConfig
from tracerl.guard.pipeline import Guard
from tracerl.tools.hermes import CLOSE, OPEN
from tracerl.tools.latency import LatencyProfile, with_latency
from tracerl.tools.tool import Tool, tool
from tracerl.types import Message, Task, ToolCall, Trajectory

HELDOUT_FRACTION = 0.2
STEPS = {"N": (0, 1), "E": (1, 0), "S": (0, -1), "W": (-1, 0)}
Cell = tuple[int, int]


def cell_text(cell: Cell) -> str:
    return f"{cell[0]},{cell[1]}"


def parse_cell(text: str) -> Cell | None:
    parts = text.strip().split(",")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def view(cell: Cell, goal: Cell) -> str:
    """What the agent sees of a cell: the position and the offset still to go ("4,5 +3-2")."""
    return f"{cell_text(cell)} {goal[0] - cell[0]:+d}{goal[1] - cell[1]:+d}"


def distance(a: Cell, b: Cell) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _is_heldout(start: Cell, goal: Cell) -> bool:
    digest = hashlib.sha256(f"{cell_text(start)}->{cell_text(goal)}".encode()).digest()
    return digest[0] < int(256 * HELDOUT_FRACTION)


class MazeEnv(ToolEnv):
    """ToolEnv with the agent's position, the goal and a move budget."""

    def __init__(self, size: int, slack: int, guard: Guard | None = None,
                 describe_tools: bool = False,
                 tool_latency: LatencyProfile | None = None) -> None:
        self.size = size
        self.slack = slack
        self.position: Cell = (0, 0)
        self.goal: Cell = (0, 0)
        self.moves_left = 0
        latency = tool_latency or LatencyProfile()
        super().__init__([with_latency(self._move_tool(d), latency) for d in STEPS],
                         ToolEnvConfig(guard=guard, describe_tools=describe_tools))

    def _move_tool(self, direction: str) -> Tool:
        dx, dy = STEPS[direction]

        def move() -> str:
            x, y = self.position[0] + dx, self.position[1] + dy
            if not (0 <= x < self.size and 0 <= y < self.size):
                raise ValueError(f"wall at {view(self.position, self.goal)}")
            self.position = (x, y)
            return view(self.position, self.goal)

        move.__doc__ = f"Move one cell {direction}; returns the new position and the offset."
        return tool(move, name=direction)

    async def reset(self, task: Task) -> list[Message]:
        start, goal = parse_cell(task.metadata["start"]), parse_cell(task.metadata["goal"])
        if start is None or goal is None:
            raise ValueError(f"maze task {task.id}: bad start/goal {task.metadata!r}")
        self.position, self.goal = start, goal
        self.moves_left = distance(start, goal) + self.slack
        return await super().reset(task)

    async def step(self, action_text: str) -> StepResult:
        result = await super().step(action_text)
        if result.terminated:
            return result
        self.moves_left -= 1
        if self.position == self.goal:
            result.terminated = True
        elif self.moves_left <= 0:
            result.truncated = True
        return result


def positions(trajectory: Trajectory) -> list[Cell]:
    """The agent's cell before turn 0 and after each turn (from the tool results)."""
    start = parse_cell(trajectory.task.metadata["start"])
    if start is None:
        raise ValueError(f"maze task {trajectory.task.id}: bad start")
    out = [start]
    for turn in trajectory.turns:
        here = out[-1]
        for r in turn.tool_results:
            cell = parse_cell(r.content.split(" ")[0]) if r.ok else None
            here = cell if cell is not None else here
        out.append(here)
    return out


@dataclass
class MazeReward:
    """1.0 when the trajectory's last position is the goal, else 0.0."""

    name: str = "maze_goal"

    def __call__(self, trajectory: Trajectory) -> float | None:
        goal = parse_cell(str(trajectory.task.answer))
        return float(goal is not None and positions(trajectory)[-1] == goal)


@dataclass
class MazeFamily:
    """The `maze` task family (see module docstring)."""

    size: int = 10
    min_moves: int = 8
    max_moves: int = 12
    slack: int = 2
    detour_prob: float = 0.1
    guard: Guard | None = None
    """Guardrails on every tool call and tool output (None = none)."""
    describe_tools: bool = False
    """Describe the tools to the policy in its prompt (pretrained models need it)."""
    tool_latency: LatencyProfile = LatencyProfile()
    """Added latency of every move call (tracerl.tools.latency)."""
    name: str = "maze"

    def __post_init__(self) -> None:
        if not 2 <= self.size <= 10:
            raise ValueError(f"maze: size must be 2..10 (one digit a coordinate), got {self.size}")
        if not 1 <= self.min_moves <= self.max_moves <= 2 * (self.size - 1):
            raise ValueError(f"maze: need 1 <= min_moves <= max_moves <= {2 * (self.size - 1)}, "
                             f"got {self.min_moves}..{self.max_moves}")
        if self.slack < 0 or not 0.0 <= self.detour_prob <= 1.0:
            raise ValueError("maze: slack must be >= 0 and detour_prob in [0, 1]")
        self.reward = MazeReward()

    @property
    def max_turns(self) -> int:
        """Turns the longest episode can take (max_moves + slack)."""
        return self.max_moves + self.slack

    def tasks(self, split: Split, n: int, seed: int) -> list[Task]:
        if split not in ("train", "heldout"):
            raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
        rng = random.Random(f"maze/{split}/{self.size}/{seed}")
        out: list[Task] = []
        while len(out) < n:
            start = (rng.randrange(self.size), rng.randrange(self.size))
            goal = (rng.randrange(self.size), rng.randrange(self.size))
            if not self.min_moves <= distance(start, goal) <= self.max_moves:
                continue
            if _is_heldout(start, goal) != (split == "heldout"):
                continue
            s, g = cell_text(start), cell_text(goal)
            prompt = f"Go from {s} to {g} ({view(start, goal)[len(s) + 1:]})."
            out.append(Task(id=f"maze-{split}-{seed}-{len(out)}",
                            messages=(Message("user", prompt),),
                            answer=g, metadata={"start": s, "goal": g}))
        return out

    def make_env(self) -> MazeEnv:
        return MazeEnv(self.size, self.slack, self.guard, self.describe_tools,
                       self.tool_latency)

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        """Oracle walk (x first, then y); before each step, with `detour_prob`, a wasted
        step out and back (at most slack // 2 of them, so the demonstration still
        succeeds). SFT alone then imitates detours and RL has something to fix."""
        here, goal = parse_cell(task.metadata["start"]), parse_cell(task.metadata["goal"])
        assert here is not None and goal is not None
        oracle = self._oracle_moves(here, goal)
        moves: list[str] = []
        budget = self.slack // 2
        for d in oracle:
            detour = rng.random() < self.detour_prob
            wrong = _detour(here, moves, self.size, rng) if detour else None
            if budget and wrong is not None:
                moves += wrong
                budget -= 1
            moves.append(d)
        messages: list[Message] = []
        for i, d in enumerate(moves):
            dx, dy = STEPS[d]
            here = (here[0] + dx, here[1] + dy)
            call = ToolCall(d, {}, id=f"call_{i}")
            text = f'{OPEN}{{"name": "{d}"}}{CLOSE}'
            messages.append(Message("assistant", text, tool_calls=(call,)))
            messages.append(Message("tool", view(here, goal), tool_call_id=call.id, name=d))
        return messages

    @staticmethod
    def _oracle_moves(here: Cell, goal: Cell) -> list[str]:
        dx, dy = goal[0] - here[0], goal[1] - here[1]
        return ["E" if dx > 0 else "W"] * abs(dx) + ["N" if dy > 0 else "S"] * abs(dy)

    def subgoal(self, trajectory: Trajectory, turn_index: int) -> float | None:
        """1.0 if turn `turn_index` moved the agent closer to the goal, else 0.0."""
        goal = parse_cell(str(trajectory.task.answer))
        if goal is None or not 0 <= turn_index < len(trajectory.turns):
            return None
        cells = positions(trajectory)
        return float(distance(cells[turn_index + 1], goal) < distance(cells[turn_index], goal))

    def state_key(self, trajectory: Trajectory, turn_index: int) -> str:
        """The cell before turn `turn_index` (GiGPO anchor state)."""
        return cell_text(positions(trajectory)[turn_index])


def _detour(start: Cell, done: list[str], size: int, rng: random.Random) -> tuple[str, str] | None:
    """A step that stays on the grid followed by the step back, from where `done` leads."""
    x, y = start
    for d in done:
        x, y = x + STEPS[d][0], y + STEPS[d][1]
    back = {"N": "S", "S": "N", "E": "W", "W": "E"}
    options = [d for d, (dx, dy) in STEPS.items() if 0 <= x + dx < size and 0 <= y + dy < size]
    if not options:
        return None
    d = rng.choice(options)
    return d, back[d]


@dataclass(frozen=True)
class MazeConfig:
    """`task.maze.*`: the long-horizon grid walk's knobs."""

    size: int = 10
    """Grid side (coordinates 0..size-1)."""
    min_moves: int = 8
    """Shortest start-to-goal distance of a task."""
    max_moves: int = 12
    """Longest start-to-goal distance (set rl.max_turns >= this + slack)."""
    slack: int = 2
    """Moves allowed beyond the distance before the episode is truncated."""
    detour_prob: float = 0.1
    """Chance per demonstration step of a wasted step out and back (imperfect SFT)."""
    tool_latency: str | float = ""
    """Added latency of every move call, in ms: 200, uniform:100:300, exponential:200 or
    lognormal:200:0.5 ('' = none; models a slow API)."""

    def __post_init__(self) -> None:
        LatencyProfile.parse(self.tool_latency)


@register_family("maze", MazeConfig)
def build_maze(section: MazeConfig, context: FamilyContext) -> MazeFamily:
    """A grid walk to a goal, one move call per step (8-14 calls; set rl.max_turns=14)."""
    return MazeFamily(section.size, section.min_moves, section.max_moves, section.slack,
                      section.detour_prob, guard=context.guard,
                      describe_tools=context.describe_tools,
                      tool_latency=LatencyProfile.parse(section.tool_latency))

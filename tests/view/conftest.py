"""A real run directory for the viewer's tests, made by a short training run.

The family is a search box: the agent's first action is its query, which the env runs
through the `search` tool (guarded like any tool call), and its next action is the
answer. The search result carries HTML and a script (the page must show them as text)
and, for one word in three, an e-mail address that the Guard redacts from what the
agent reads (a guard decision to find and highlight). The reward is shaped (the share
of the word's letters in the answer), so a random tiny policy earns different rewards
within a group and GRPO gives its tokens non-zero advantages. Training is the real
Trainer on the tiny policy: a few RL steps with a KL reference, two runs.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from tracerl.envs import TaskListFamily, ToolEnv
from tracerl.envs.base import StepResult
from tracerl.envs.tool_env import ToolEnvConfig
from tracerl.guard import Guard
from tracerl.tools.tool import tool
from tracerl.train import TrainConfig, Trainer, configlib
from tracerl.types import Message, Task, ToolCall, Trajectory

WORDS = ("amber", "cobalt", "ivory")
PROMPT = "Search, then answer with the word. <b>bold</b> <img src=x onerror=alert(1)>"
SCRIPT = '<script>document.title="pwned"</script>'
RUN = ["log.progress=false", "log.tensorboard=false", "stages=[rl]", "rl.steps=3",
       "rl.tasks_per_step=2", "rl.group_size=4", "rl.max_turns=2", "rl.max_turn_tokens=24",
       "rl.max_response_tokens=400", "rl.kl_coef=0.05", "eval.tasks=2", "eval.samples=2",
       "tiny.hidden_size=32", "tiny.layers=1", "tiny.heads=2", "tiny.intermediate_size=64",
       "trace.process=false"]


@tool
def search(query: str) -> str:
    """Search the notes.

    Args:
        query: what to look for.
    """
    word = random.choice(WORDS)
    mail = " Questions: john.smith@gmail.com" if word == "ivory" else ""
    return f"{SCRIPT}<b>Result</b> for {query[:20]!r}: the word is {word}.{mail}"


class SearchBoxEnv(ToolEnv):
    """The first action is the query (run as a `search` call); then tool calls or the answer."""

    def __init__(self, guard: Guard) -> None:
        super().__init__([search], ToolEnvConfig(guard=guard))
        self.searched = False

    async def reset(self, task: Task) -> list[Message]:
        self.searched = False
        return await super().reset(task)

    async def step(self, action_text: str) -> StepResult:
        if self.searched:
            return await super().step(action_text)
        self.searched = True
        result = await self._run(ToolCall("search", {"query": action_text}, id="search_0"))
        return StepResult(observations=[Message("tool", result.content, tool_call_id="search_0",
                                                name="search")],
                          tool_calls=[result.call], tool_results=[result])


def letters_of_the_word(trajectory: Trajectory) -> float:
    """Share of the searched word's letters that the final answer contains."""
    found = [re.search(r"the word is (\w+)", r.content)
             for t in trajectory.turns for r in t.tool_results if r.ok]
    words = [m.group(1) for m in found if m]
    if not words:
        return 0.0
    answer = trajectory.final_text.lower()
    return sum(ch in answer for ch in words[-1]) / len(words[-1])


def _tasks(split: str, n: int) -> list[Task]:
    return [Task(f"search-{split}-{i}", (Message("user", PROMPT),)) for i in range(n)]


def train_run(out: Path, name: str, seed: int, *overrides: str) -> Path:
    guard = Guard()
    family = TaskListFamily(lambda: SearchBoxEnv(guard), _tasks("train", 4), _tasks("heldout", 2),
                            letters_of_the_word, name="searchbox")
    config = configlib.load(TrainConfig, None,
                            [f"out_dir={out}", f"name={name}", f"seed={seed}", *RUN, *overrides])
    Trainer(config, family=family).run()
    return out / name


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    """Two real run directories of the search-box family (read-only): GRPO (seed 0), and
    REINFORCE++ with the KL penalty in the reward (seed 1), whose advantages differ token
    by token."""
    out = tmp_path_factory.mktemp("view-runs")
    return (train_run(out, "search", 0),
            train_run(out, "search-b", 1, "rl.advantage=reinforce_pp", "rl.kl_placement=reward"))

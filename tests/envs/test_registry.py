"""The task-family registry: built-ins register themselves, outside families are named by
reference, every family is built with the guard, and bad names get clear errors."""

import sys
import textwrap

import pytest

from tracerl.envs.registry import FamilyContext, build_family, families, register_family, resolve
from tracerl.guard.pipeline import Guard
from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.configlib import ConfigError
from tracerl.train.runner import build_task_family
from tracerl.types import Message, Task

USER_FAMILY = textwrap.dedent('''
    import random
    from dataclasses import dataclass

    from tracerl.envs.registry import FamilyContext, register_family
    from tracerl.envs.tool_env import ToolEnv, ToolEnvConfig
    from tracerl.types import Message, Task


    @dataclass(frozen=True)
    class EchoConfig:
        word: str = "hello"
        """The word to say."""


    class EchoFamily:
        name = "echo"

        def __init__(self, word, guard):
            self.word, self.guard = word, guard
            self.reward = lambda t: float(self.word in t.final_text)

        def tasks(self, split, n, seed):
            return [Task(f"{split}-{i}", (Message("user", f"say {self.word}"),))
                    for i in range(n)]

        def make_env(self):
            return ToolEnv([], ToolEnvConfig(guard=self.guard))

        def demonstration(self, task, rng):
            return [Message("assistant", self.word)]


    @register_family("echo_{suffix}", EchoConfig)
    def build(section, context):
        """Say the word."""
        return EchoFamily(section.word, context.guard)
''')


@pytest.fixture
def user_module(tmp_path, monkeypatch, request):
    name = f"user_family_{request.node.name.replace('[', '_').replace(']', '')}"
    (tmp_path / f"{name}.py").write_text(USER_FAMILY.replace("{suffix}", name[-8:]))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_the_built_in_families_register_themselves():
    assert {"calc", "code", "maze", "secret"} <= set(families())
    assert families()["calc"].section().calls == 1


@pytest.mark.parametrize("name", ["calc", "code", "maze", "secret"])
def test_every_family_gets_the_guard(name):
    guard = Guard()
    family = build_family(name, None, FamilyContext(guard=guard))
    assert family.make_env().config.guard is guard


def test_a_family_section_is_set_from_key_value():
    cfg = configlib.load(TrainConfig, None, ["task.family=maze", "task.maze.size=6",
                                             "task.maze.min_moves=2", "task.maze.max_moves=4"])
    family = build_task_family(cfg)
    assert (family.name, family.size, family.max_moves) == ("maze", 6, 4)


def test_old_flat_task_keys_move_into_their_section():
    cfg = configlib.load(TrainConfig, None, ["task.calls=3", "task.maze_slack=5"])
    assert cfg.task.calc.calls == 3 and cfg.task.maze.slack == 5


def test_a_family_outside_the_package_by_reference(user_module):
    cfg = configlib.load(TrainConfig, None, [f"task.family={user_module}:build"])
    family = build_task_family(cfg)
    assert family.name == "echo" and family.guard is not None
    task = family.tasks("train", 1, 0)[0]
    assert task.messages == (Message("user", "say hello"),)
    assert resolve(f"{user_module}:build").summary == "Say the word."


def test_an_unknown_family_is_named():
    with pytest.raises(ConfigError, match="unknown task family 'calk'.*calc"):
        configlib.load(TrainConfig, None, ["task.family=calk"])


def test_a_reference_that_cannot_be_imported_is_named():
    cfg = configlib.load(TrainConfig, None, ["task.family=no_such_pkg.tasks:build"])
    with pytest.raises(ValueError, match="cannot import 'no_such_pkg.tasks'"):
        build_task_family(cfg)


def test_a_family_class_by_reference_gets_the_guard(user_module):
    """A plain TaskFamily class works too: called with the context fields it accepts."""
    cfg = configlib.load(TrainConfig, None, [f"task.family={user_module}:EchoFamily"])
    with pytest.raises(ConfigError, match="calling it with"):  # `word` has no default
        build_task_family(cfg)


def test_a_reference_to_something_that_is_not_a_family_is_named(user_module, tmp_path):
    (tmp_path / "not_a_family.py").write_text("WORD = 'x'\n")
    with pytest.raises(ValueError, match="expected a TaskFamily class, factory or instance"):
        resolve("not_a_family:WORD")


def test_a_name_cannot_be_registered_twice():
    class Section:
        pass

    from dataclasses import dataclass
    section = dataclass(frozen=True)(Section)
    with pytest.raises(ValueError, match="already registered"):
        @register_family("calc", section)
        def other(section, context):  # pragma: no cover - never built
            return Task("x", ())

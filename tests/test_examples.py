"""Every example config loads: its keys exist and its values are valid."""

from pathlib import Path

import pytest

from tracerl.train import TrainConfig, configlib

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.yaml"))


def test_there_are_examples():
    assert EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_an_example_config_loads(path):
    config = configlib.load(TrainConfig, str(path))
    assert config.name == path.stem

import importlib.util
import sys
from pathlib import Path

import pytest

from tracerl.serve.engine import ServeConfig
from tracerl.serve.server import Served, Server, build_service
from tracerl.train.config import TrainConfig

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "byo_agent.py"


@pytest.fixture
def serve(fresh_tiny_policy):
    """`serve(sampler=None, train=False, config=None, run_dir=None, reward=None,
    **ServeConfig fields)` -> (service, running Server)
    over a fresh tiny policy on 127.0.0.1; every server is stopped after the test."""
    servers = []

    def start(sampler=None, train=False, config=None, run_dir=None, reward=None, **fields):
        served = Served(fresh_tiny_policy, config or TrainConfig(), "tiny", "tiny")
        cfg = ServeConfig(**{"model_name": "tiny", "describe_tools": False, **fields})
        service = build_service(served, cfg, train=train, run_dir=run_dir, reward=reward,
                                sampler=sampler)
        server = Server(service.app).start()
        servers.append((service, server))
        return service, server

    yield start
    for service, server in servers:
        server.stop()
        service.engine.close()


@pytest.fixture(scope="session")
def byo_agent():
    """examples/byo_agent.py, loaded as a module (the agent and its training loop)."""
    spec = importlib.util.spec_from_file_location("byo_agent", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module

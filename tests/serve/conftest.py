import importlib.util
import sys
from pathlib import Path

import pytest

from tracerl.serve.engine import ServeConfig
from tracerl.serve.server import Served, Server, build_service
from tracerl.train.config import TrainConfig

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "byo_agent.py"
FUZZ = ROOT / "benchmarks" / "serve_fuzz.py"
CLIENTS = ROOT / "benchmarks" / "serve_clients.py"


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


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def byo_agent():
    """examples/byo_agent.py, loaded as a module (the agent and its training loop)."""
    return _load("byo_agent", EXAMPLE)


@pytest.fixture(scope="session")
def serve_fuzz():
    """benchmarks/serve_fuzz.py, loaded as a module: the request strategy and driver
    the 10,000-operation benchmark runs, for a short run in CI."""
    return _load("serve_fuzz", FUZZ)


@pytest.fixture(scope="session")
def serve_clients():
    """benchmarks/serve_clients.py, loaded as a module: the scripted calc sampler and one
    check per client (the benchmark runs them in a throwaway venv)."""
    return _load("serve_clients", CLIENTS)

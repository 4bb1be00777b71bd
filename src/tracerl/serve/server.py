"""Running the served policy: what to load, and uvicorn on 127.0.0.1.

`load_served(source)` resolves what `tracerl serve SOURCE` names: `tiny` (a fresh
built-in tiny policy, for plumbing), a model name of the zoo (`smollm2-135m`), a local
model directory, or a run directory (its latest checkpoint, and its config for
training). `Server` runs the app in a background thread (`with Server(app) as s:
s.url`), which is how tests, benchmarks and examples/byo_agent.py host it beside a
learner; `tracerl serve` runs the same server in the foreground.
"""

from __future__ import annotations

import asyncio
import socket
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn

from tracerl.policy.model import Policy, load_policy, write_tiny
from tracerl.policy.precision import weights_dtype
from tracerl.policy.sampling import Sampler
from tracerl.policy.zoo import MODELS
from tracerl.serve.app import build_app
from tracerl.serve.engine import Engine, ServeConfig
from tracerl.serve.episodes import RewardFn
from tracerl.serve.learner import ServedLearner
from tracerl.train import configlib
from tracerl.train.checkpoint import latest_checkpoint, load_checkpoint_policy
from tracerl.train.config import TrainConfig
from tracerl.train.model_setup import prepare_policy
from tracerl.train.runner import describe_tools

HOST = "127.0.0.1"


@dataclass
class Served:
    policy: Policy
    config: TrainConfig
    """The run's config (a run directory), or the defaults for the model given, with
    the overrides applied: the learner's `rl.*` settings come from here."""
    source: str
    """What was loaded (a checkpoint directory, a model directory or name)."""
    name: str
    """The model id clients ask for: the run's, the directory's or the model's name."""


def load_served(source: str, overrides: list[str] | None = None) -> Served:
    """The policy `source` names, and the training config that goes with it."""
    path = Path(source)
    overrides = list(overrides or [])
    if (path / "config.yaml").is_file() and (path / "checkpoints").is_dir():
        ckpt = latest_checkpoint(path)
        if ckpt is None:
            raise FileNotFoundError(f"run directory {path} has no complete checkpoint")
        base = configlib.to_dict(configlib.load(TrainConfig, str(path / "config.yaml")))
        config = configlib.load(TrainConfig, None, overrides, base=base)
        policy = load_checkpoint_policy(ckpt, config.device, weights_dtype(config.dtype),
                                        name=config.model)
        return Served(policy, config, str(ckpt), path.resolve().name)
    config = configlib.load(TrainConfig, None, overrides, base={"model": source})
    dtype = weights_dtype(config.dtype)
    if source == "tiny":
        where = Path(tempfile.mkdtemp(prefix="tracerl-serve-tiny-"))
        policy = load_policy(write_tiny(where, config.tiny, config.seed), config.device,
                             dtype, name="tiny")
        return Served(policy, config, "tiny", "tiny")
    if not path.is_dir() and source not in MODELS:
        raise FileNotFoundError(f"{source} is neither a run directory, a model directory "
                                f"nor a model name (tiny, {', '.join(MODELS)})")
    return Served(load_policy(source, config.device, dtype), config, source,
                  path.resolve().name if path.is_dir() else source)


@dataclass
class Service:
    """An engine, its learner (None: serving only) and the app over both."""

    engine: Engine
    learner: ServedLearner | None
    app: Any


def build_service(served: Served, config: ServeConfig | None = None, train: bool = False,
                  run_dir: Path | None = None, reward: RewardFn | None = None,
                  sampler: Sampler | None = None) -> Service:
    """The engine over `served.policy` (tools described as the model records, as in
    training), with a learner when `train` (its checkpoints into `run_dir`, if given)."""
    config = config or ServeConfig(model_name=served.name,
                                   describe_tools=describe_tools(served.config, served.policy))
    policy = prepare_policy(served.policy, served.config) if train else served.policy
    engine = Engine(policy, config, reward, sampler)
    learner = ServedLearner(engine, served.config, run_dir) if train else None
    return Service(engine, learner, build_app(engine, learner))


def bind(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 (`port` 0: a free one).

    Made with proto IPPROTO_TCP so that asyncio sets TCP_NODELAY on every accepted
    connection (it checks the proto; with 0 it does not): without it a reply on a
    kept-alive connection waited ~40 ms for the client's delayed ACK (Nagle), 41 ms
    against 4 ms per GET /v1/models measured here."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(2048)
    return sock


def _uvicorn(app: Any) -> uvicorn.Server:
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            timeout_keep_alive=30, backlog=2048)
    return uvicorn.Server(config)


def serve_forever(app: Any, port: int | socket.socket) -> None:
    """Serve on 127.0.0.1:`port` (or a socket from `bind`) in the foreground until
    interrupted."""
    sock = port if isinstance(port, socket.socket) else bind(port)
    asyncio.run(_uvicorn(app).serve(sockets=[sock]))


class Server:
    """The app served on 127.0.0.1 from a background thread (a free port by default)."""

    def __init__(self, app: Any, port: int = 0) -> None:
        self.sock = bind(port)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://{HOST}:{self.port}/v1"
        self.server = _uvicorn(app)
        self.thread = threading.Thread(target=self._run, name="tracerl-serve", daemon=True)

    def _run(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    def start(self, timeout_s: float = 30.0) -> Server:
        self.thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the server on {self.url} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

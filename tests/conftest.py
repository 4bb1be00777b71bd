import pytest
import torch

from tracerl.policy.model import Policy, TinySpec, load_policy, write_tiny

# The test models are tiny: one thread is as fast as two and never oversubscribes the
# cores that the sandbox workers and subprocess tests share.
torch.set_num_threads(1)

SMALL = TinySpec(hidden_size=64, layers=2, heads=2, intermediate_size=128)


@pytest.fixture(scope="session")
def tiny_policy(tmp_path_factory) -> Policy:
    """A randomly initialised built-in tiny policy (seed 0), shared: do not train it."""
    return load_policy(write_tiny(tmp_path_factory.mktemp("tiny"), SMALL, 0))


@pytest.fixture
def fresh_tiny_policy(tmp_path) -> Policy:
    """A tiny policy of the test's own, free to train."""
    return load_policy(write_tiny(tmp_path / "tiny", SMALL, 0))

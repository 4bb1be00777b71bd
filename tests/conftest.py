import pytest
import torch

from tracerl.policy.lora import apply_lora
from tracerl.policy.model import Policy, TinySpec, load_policy, write_tiny
from tracerl.policy.settings import LoraSettings

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


@pytest.fixture
def lora_policy(fresh_tiny_policy) -> Policy:
    """A tiny policy with a rank-4 adapter on q_proj and v_proj whose B matrices are
    random (seeded), as if trained: the adapter changes the function."""
    policy = apply_lora(fresh_tiny_policy, LoraSettings(r=4, targets=["q_proj", "v_proj"]))
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in policy.model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    return policy

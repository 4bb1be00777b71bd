"""Real clients against the real server (benchmarks/serve_clients.py's checks): each
plays calc episodes with a calculator tool, the episode id in a header, and the server
must record every call with 0 history mismatches. The `openai` checks always run; the
others skip with a reason where their client is not installed (the benchmark installs
all four into a throwaway venv)."""

import importlib.util

import pytest

pytestmark = pytest.mark.slow  # starts a server


@pytest.fixture
def scripted(serve, serve_clients, fresh_tiny_policy):
    _, server = serve(sampler=serve_clients.CalcScript(fresh_tiny_policy.tokenizer))
    return server


@pytest.mark.parametrize("name", ["openai", "openai-async", "langchain", "agents", "litellm"])
def test_a_client_plays_tool_episodes_end_to_end(scripted, serve_clients, name):
    module = serve_clients.CLIENTS[name]
    if importlib.util.find_spec(module) is None:
        assert name not in ("openai", "openai-async"), "the openai client is a dev extra"
        pytest.skip(f"{module} is not installed (benchmarks/serve_clients.py installs it "
                    "into a throwaway venv)")
    report = serve_clients.play(name, scripted.url)
    for r in report["results"]:
        assert r["ok"], r
        assert r["mismatches"] == 0 and r["calls"] >= 2 and r["trajectories"] >= 1, r

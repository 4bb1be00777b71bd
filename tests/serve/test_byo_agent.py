"""examples/byo_agent.py: an openai-client agent trained on calc through the real server."""

import pytest

from tracerl.serve.server import Server, build_service, load_served


@pytest.mark.slow  # a few RL steps of real episodes over HTTP
def test_the_example_trains_through_the_server(byo_agent):
    served = load_served("tiny", ["tiny.hidden_size=64", "tiny.intermediate_size=128",
                                  "tiny.heads=2", "rl.drop_uniform_groups=false"])
    service = build_service(served, train=True)
    with Server(service.app) as server:
        reports, evals = byo_agent.train(server.url, "tiny", steps=2, tasks_per_step=2,
                                         group_size=3, eval_tasks=2, workers=6, log=False)
    assert [r.step for r in reports] == [1, 2]
    assert all(r.updated and r.record["trajectories"] == 6.0 for r in reports)
    assert evals is not None and all(0.0 <= e <= 1.0 for e in evals)
    assert service.engine.policy_version == 2
    stats = service.engine.recorder.stats
    assert stats.finished == 12 and stats.mismatches == 0

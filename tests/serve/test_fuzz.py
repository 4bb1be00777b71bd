"""Property-based fuzzing of the request schema (hypothesis, the strategy of
benchmarks/serve_fuzz.py): whatever a client sends, no 500, the server stays up, and
nothing recorded is lost. A short derandomized run keeps CI to a few seconds; the
benchmark runs 10,000 operations (docs/benchmarks.md)."""

import httpx
import pytest

pytestmark = pytest.mark.slow  # starts a server

EXAMPLES = 40


def test_no_generated_request_gets_a_500_or_loses_an_episode(serve, serve_fuzz):
    _, server = serve(default_max_tokens=4)
    fuzzer = serve_fuzz.Fuzzer(server.url)
    fuzzer.open_kept()

    def no_server_error(op, status):
        assert 0 < status < 500, op

    serve_fuzz.fuzz(fuzzer, EXAMPLES, 0, no_server_error)
    tally = fuzzer.check()
    assert tally.operations == EXAMPLES and tally.server_errors == 0
    assert tally.lost_calls == 0 and tally.lost_kept == 0
    assert set(tally.statuses) & {200} and set(tally.statuses) & {400}  # both kinds ran
    assert httpx.get(f"{server.url}/models").status_code == 200

"""Fuzzing `tracerl serve` over its request schema: no 500, the server up, nothing lost.

Hypothesis generates operations against a live server: chat completions whose every
field is mostly well-formed and sometimes any other JSON value (wrong types, NaN,
huge numbers, strings for booleans, tool calls of strings, image parts, ...), raw
bodies (100k-deep nesting, lone surrogate escapes, 1e400, NaN literals, bytes that are
not UTF-8, truncated JSON), and reward posts with any body. Before the fuzz, 8 named
episodes are opened that the fuzz never touches; during it, every call answered 200
with an episode id is expected to stay recorded until a reward post for that episode
is answered 200.

Counted: responses by status, 500s (and errors sent in-band inside a 200 stream),
transport errors (the server gone), recorded calls lost, kept episodes lost. The
server runs as its own `tracerl serve tiny --max-tokens 4` process; its log is scanned
for tracebacks ("Exception in ASGI application", "request failed").

    python benchmarks/serve_fuzz.py                       # 10,000 operations
    python benchmarks/serve_fuzz.py --examples 2000 --seed 1

tests/serve/test_fuzz.py runs the same strategy (a few dozen derandomized examples)
against the in-process server in CI.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

KEPT = [f"keep-{i}" for i in range(8)]
FUZZ_IDS = [f"fz-{i}" for i in range(12)]
ROLES = ["system", "developer", "user", "assistant", "tool", "wizard"]

# -- the strategy ---------------------------------------------------------------------

JUNK: st.SearchStrategy[Any] = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["true", "false", "1", "", "auto", "NaN", 1e160, -1e308]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(),
                                                         max_size=2))


def requests(junk: bool) -> st.SearchStrategy[dict[str, Any]]:
    """Chat request bodies. `junk`: every field, at every level, is sometimes any other
    JSON value (1 in 7); without it, only well-typed values (which still combine into
    refusals: a tool_choice naming a tool not given, an image part, ...)."""
    def m(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(*[valid] * 6, JUNK) if junk else valid

    def alt(*options: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(*options, JUNK) if junk else st.one_of(*options)

    text = st.text(max_size=24)
    part = alt(
        st.fixed_dictionaries({"type": st.just("text"), "text": m(text)}),
        st.fixed_dictionaries({"type": st.sampled_from(["image_url", "input_audio", "file",
                                                        "refusal", "video"]),
                               "image_url": st.just({"url": "data:image/png;base64,AAAA"})}))
    content = alt(text, text, st.none(), st.lists(part, max_size=3))
    function = st.fixed_dictionaries({
        "name": m(st.sampled_from(["calculator", "f", "bad name", ""])),
        "arguments": m(st.sampled_from(['{"x": 1}', "[1]", "not json", "", "{}",
                                        '{"a": {"b": [1, 2]}}']))})
    tool_call = alt(st.fixed_dictionaries({"id": m(st.text(max_size=8)),
                                           "type": st.just("function"),
                                           "function": m(function)}))
    roles = ROLES if junk else ["system", "developer", "user", "user", "assistant", "tool"]
    message = st.fixed_dictionaries(
        {"role": m(st.sampled_from(roles)), "content": content},
        optional={"tool_calls": alt(st.lists(tool_call, max_size=2)),
                  "tool_call_id": m(st.text(max_size=8)), "name": m(st.text(max_size=8))})
    schemas = st.sampled_from([{"type": "object", "properties": {"x": {"type": "number"}}},
                               {"type": "string"}, {"type": 7}, {}, {"properties": []}])
    tool = alt(st.fixed_dictionaries({
        "type": m(st.just("function")), "function": st.fixed_dictionaries(
            {"name": m(st.sampled_from(["calculator", "f", "bad name"]))},
            optional={"description": m(text), "parameters": m(schemas)})}))
    tool_choice = alt(
        st.sampled_from(["auto", "none", "required"]),
        st.fixed_dictionaries({"type": st.just("function"), "function": alt(
            st.fixed_dictionaries({"name": st.sampled_from(["calculator", "f", "nope"])}))}))
    return st.fixed_dictionaries(
        {"model": m(st.just("tiny")),
         "messages": alt(st.lists(message, min_size=1, max_size=3))},
        optional={
            "tools": alt(st.lists(tool, max_size=2)), "tool_choice": tool_choice,
            "temperature": m(st.floats(0, 2)), "top_p": m(st.floats(0.05, 1)),
            "n": m(st.integers(1, 3)), "max_tokens": m(st.integers(1, 3)),
            "max_completion_tokens": m(st.integers(1, 3)),
            "stop": m(st.lists(st.text(min_size=1, max_size=3), max_size=2)),
            "stream": m(st.booleans()),
            "stream_options": m(st.fixed_dictionaries(
                {}, optional={"include_usage": m(st.booleans())})),
            "logprobs": m(st.booleans()), "top_logprobs": m(st.just(0)),
            "episode_id": m(st.sampled_from(FUZZ_IDS)),
            "task_id": m(st.sampled_from(["t0", "t1"])),
            "presence_penalty": m(st.just(0)), "logit_bias": m(st.just({})),
            "response_format": m(st.just({"type": "text"})),
            **({"seed": JUNK, "user": JUNK, "metadata": JUNK, "parallel_tool_calls": JUNK}
               if junk else {})})


VALID_HEAD = b'{"model": "tiny", "max_tokens": 2, "messages": [{"role": "user", "content": '
RAW = st.one_of(
    st.builds(lambda d: b"[" * d + b"]" * d, st.integers(900, 100_000)),
    st.builds(lambda d: b'{"a":' * d + b"1" + b"}" * d, st.integers(900, 20_000)),
    st.sampled_from([
        VALID_HEAD + b'"\\ud800"}]}', VALID_HEAD + b'"a\\udfffb"}]}',
        VALID_HEAD + b'"\\ud83d\\ude00"}]}',  # a surrogate pair: valid (one emoji)
        VALID_HEAD + b'"\xff\xfe"}]}', VALID_HEAD + b'"x"}], "temperature": 1e400}',
        VALID_HEAD + b'"x"}], "temperature": NaN}', VALID_HEAD + b'"x"}], "n": Infinity}',
        VALID_HEAD, b"", b"null", b'"text"', b"{", b"[]", b"{}", b"1e999"]),
    st.binary(max_size=48))
REWARD_BODY = st.one_of(
    st.fixed_dictionaries({"reward": st.one_of(
        st.floats(allow_nan=True, allow_infinity=True), st.none(), JUNK,
        st.sampled_from([1e160, -1e7, 0.0, 1.0, 0.5]))}),
    st.just({}), JUNK)
WELL_TYPED, ANY_TYPE = requests(junk=False), requests(junk=True)
OPERATION = st.one_of(
    st.tuples(st.just("chat"), WELL_TYPED), st.tuples(st.just("chat"), WELL_TYPED),
    st.tuples(st.just("chat"), ANY_TYPE), st.tuples(st.just("chat"), ANY_TYPE),
    st.tuples(st.just("raw"), RAW),
    st.tuples(st.just("reward"), st.tuples(st.sampled_from(FUZZ_IDS), REWARD_BODY)))


# -- the driver -----------------------------------------------------------------------

@dataclass
class Tally:
    statuses: Counter[int] = field(default_factory=Counter)
    in_band_errors: int = 0
    """Errors sent inside a stream that had answered 200."""
    transport_errors: int = 0
    tracked_calls: int = 0
    """Calls answered 200 with a fuzz episode id (each must stay recorded)."""
    lost_calls: int = 0
    lost_kept: int = 0

    @property
    def operations(self) -> int:
        return sum(self.statuses.values()) + self.transport_errors

    @property
    def server_errors(self) -> int:
        return sum(n for s, n in self.statuses.items() if s >= 500) + self.in_band_errors


class Fuzzer:
    """Sends operations to `url` and keeps what must stay recorded."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(timeout=120)
        self.tally = Tally()
        self.expected: dict[str, set[str]] = {}
        """Episode id -> ids of calls answered 200 since its last accepted reward."""

    def open_kept(self) -> None:
        for episode in KEPT:
            r = self.http.post(f"{self.url}/chat/completions", json={
                "model": "tiny", "max_tokens": 2, "episode_id": episode, "task_id": "kept",
                "messages": [{"role": "user", "content": f"hello {episode}"}]})
            r.raise_for_status()

    def send(self, op: tuple[str, Any]) -> int:
        """One operation; its HTTP status (0: transport error)."""
        kind, payload = op
        try:
            if kind == "reward":
                status = self._reward(*payload)
            else:
                content = payload if kind == "raw" else json.dumps(payload).encode()
                status = self._chat(content, payload if kind == "chat" else None)
        except httpx.TransportError:
            self.tally.transport_errors += 1
            return 0
        self.tally.statuses[status] += 1
        return status

    def _chat(self, content: bytes, body: Any) -> int:
        headers = {"Content-Type": "application/json"}
        with self.http.stream("POST", f"{self.url}/chat/completions", content=content,
                              headers=headers) as r:
            text = r.read().decode("utf-8", "replace")
        if r.status_code != 200:
            return r.status_code
        if r.headers.get("content-type", "").startswith("text/event-stream"):
            events = [json.loads(line[6:]) for line in text.splitlines()
                      if line.startswith("data: {")]
            self.tally.in_band_errors += sum("error" in e for e in events)
            call_id = next((e["id"] for e in events if "id" in e), None)
        else:
            call_id = json.loads(text)["id"]
        episode = body.get("episode_id") if isinstance(body, dict) else None
        if isinstance(episode, str) and episode in FUZZ_IDS and call_id is not None:
            self.expected.setdefault(episode, set()).add(call_id)
            self.tally.tracked_calls += 1
        return r.status_code

    def _reward(self, episode: str, body: Any) -> int:
        r = self.http.post(f"{self.url}/episodes/{episode}/reward",
                           content=json.dumps(body).encode(),
                           headers={"Content-Type": "application/json"})
        if r.status_code == 200:
            self.expected.pop(episode, None)
        return r.status_code

    def check(self) -> Tally:
        """Count what was lost: calls answered 200 and not recorded, kept episodes gone
        (each kept one is then finished with a reward, as a client would)."""
        for episode, calls in self.expected.items():
            r = self.http.get(f"{self.url}/episodes/{episode}")
            have = {c["id"] for c in r.json().get("calls", [])} if r.status_code == 200 else set()
            self.tally.lost_calls += len(calls - have)
        for episode in KEPT:
            r = self.http.post(f"{self.url}/episodes/{episode}/reward", json={"reward": 1.0})
            self.tally.lost_kept += r.status_code != 200 or r.json()["trajectories"] < 1
        return self.tally


def fuzz(fuzzer: Fuzzer, examples: int, at_seed: int, on_result: Any = None) -> None:
    """Run `examples` generated operations through `fuzzer` (`on_result(op, status)`
    after each: a test asserts there)."""
    @seed(at_seed)
    @settings(max_examples=examples, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(OPERATION)
    def one(op: tuple[str, Any]) -> None:
        status = fuzzer.send(op)
        if on_result is not None:
            on_result(op, status)

    one()


# -- the benchmark --------------------------------------------------------------------

def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--examples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    from serve_process import start  # beside this script (a test loads it by path)

    proc, url = start("--max-tokens", "4")
    try:
        fuzzer = Fuzzer(url)
        fuzzer.open_kept()
        t0 = time.perf_counter()
        fuzz(fuzzer, args.examples, args.seed)
        seconds = time.perf_counter() - t0
        tally = fuzzer.check()
        alive = proc.poll() is None and httpx.get(f"{url}/models").status_code == 200
        stats = httpx.get(f"{url}/stats").json()
    finally:
        proc.terminate()
        log = proc.communicate(timeout=30)[0]
    tracebacks = log.count("Exception in ASGI application") + log.count("request failed")
    print(f"{tally.operations} operations in {seconds:.0f} s (seed {args.seed}); statuses "
          + ", ".join(f"{s}: {n}" for s, n in sorted(tally.statuses.items())))
    print(f"500s (and in-band stream errors): {tally.server_errors}  transport errors: "
          f"{tally.transport_errors}  server up after: {alive}  tracebacks in its log: "
          f"{tracebacks}")
    print(f"recorded calls lost: {tally.lost_calls} of {tally.tracked_calls} answered 200 "
          f"with an episode id  kept episodes lost: {tally.lost_kept} of {len(KEPT)}")
    rec = stats["recorder"]
    print(f"server: {rec['calls']} calls recorded, {rec['episodes']} episodes, evicted "
          f"{rec['evicted']} named / {rec['evicted_anonymous']} anonymous")


if __name__ == "__main__":
    main()

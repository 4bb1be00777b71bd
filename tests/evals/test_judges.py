"""Judges against a deterministic OpenAI-compatible server on 127.0.0.1.

The server is a biased judge on purpose: in group mode it adds a bonus to whichever
transcript is shown first, so the tests can show the shuffled aggregate cancels it.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tracerl.evals import ExactMatch, GroupJudge, JudgeConfig, RubricJudge, evaluate
from tracerl.evals.judges import JudgeParseError, parse_json_reply
from tracerl.types import Group, Trajectory
from tracerl.util.http import EndpointError

POSITION_BONUS = 4.0


def group_reply(user: str) -> str:
    blocks = re.split(r"\[id: (t\d+)\]", user)[1:]  # id, text, id, text, ...
    scores = {}
    for pos, (item_id, text) in enumerate(zip(blocks[::2], blocks[1::2], strict=True)):
        scores[item_id] = (6.0 if "GOOD" in text else 2.0) + (POSITION_BONUS if pos == 0 else 0)
    return "Scores follow.\n" + json.dumps({"scores": scores})


def rubric_reply(user: str) -> str:
    if "GARBAGE" in user:
        return "I think it is fine."
    if "HUGE" in user:
        return '{"score": 11}'
    return json.dumps({"score": 9 if "42" in user else 2, "explanation": "checked"})


class JudgeHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        text = group_reply(user) if "compare several" in system else rubric_reply(user)
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(data.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def config() -> Iterator[JudgeConfig]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), JudgeHandler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    yield JudgeConfig(f"http://127.0.0.1:{server.server_port}/v1", model="judge")
    server.shutdown()
    server.server_close()


@pytest.fixture
def group(make_trajectory) -> Callable[..., list[Trajectory]]:
    """`group(*texts)`: one one-turn trajectory per text, all of one task."""
    return lambda *texts: [make_trajectory((t, []), task_id="g") for t in texts]


def test_single_order_shows_the_position_bias(config, group):
    judgement = GroupJudge(config, "be right", samples=1, seed=3).judge(group("a", "a", "a"))
    first = judgement.orders[0][0]
    assert judgement.scores[first] == pytest.approx(0.6)
    assert sorted(judgement.scores) == pytest.approx([0.2, 0.2, 0.6])


def test_rotated_orders_cancel_the_position_bias(config, group):
    judgement = GroupJudge(config, "be right", seed=3).judge(group("a", "a", "a"))
    assert judgement.scores == pytest.approx((0.2 + 0.4 / 3,) * 3)


def test_every_trajectory_is_shown_in_every_position(config):
    orders = GroupJudge(config, "r", samples=6, seed=1).orders(3)
    for position in range(3):
        assert sorted(o[position] for o in orders) == [0, 0, 1, 1, 2, 2]


def test_quality_ranking_survives_bias_and_scores_map_back_by_id(config, group):
    judgement = GroupJudge(config, "r", seed=0).judge(group("bad", "bad", "GOOD"))
    assert judgement.scores == pytest.approx((0.2 + 0.4 / 3, 0.2 + 0.4 / 3, 0.6 + 0.4 / 3))


def test_random_shuffles_when_samples_not_a_multiple(config, group):
    judgement = GroupJudge(config, "r", samples=5, seed=0).judge(group("x", "y", "z"))
    assert len(set(judgement.orders)) > 1 and len(judgement.raw) == 5


def test_group_rewards_for_a_rollout_group(config, group):
    trajs = group("GOOD", "bad")
    rewards = GroupJudge(config, "r").rewards(Group(trajs[0].task, trajs))
    assert rewards[0] > rewards[1]


def test_group_rewards_are_none_when_endpoint_is_down(group):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    judge = GroupJudge(JudgeConfig(f"http://127.0.0.1:{port}/v1", "m", timeout_s=2), "r")
    trajs = group("a", "b")
    assert judge.rewards(Group(trajs[0].task, trajs)) == [None, None]
    assert judge.failures == 1


def test_rubric_judge_scores_and_explains(config, make_trajectory):
    report = evaluate([RubricJudge(config, "give the right answer")],
                      [make_trajectory(("it is 42", [])), make_trajectory(("no", []))])
    assert [r.scores["rubric_judge"] for r in report.items] == [0.9, 0.2]
    assert report.items[0].details["rubric_judge"]["explanation"] == "checked"


def test_unparseable_and_out_of_range_replies_are_counted_failures(config, make_trajectory):
    trajs = [make_trajectory(("GARBAGE", [])), make_trajectory(("HUGE", []))]
    report = evaluate([RubricJudge(config, "r"), ExactMatch(reference_key="answer")], trajs)
    errors = [f.error for f in report.failures if f.metric == "rubric_judge"]
    assert errors[0].startswith("JudgeParseError: judge reply holds no JSON")
    assert "outside [0, 10]" in errors[1]


def test_parse_json_reply_finds_object_in_prose():
    assert parse_json_reply('Sure! ```json\n{"score": 3}\n``` done') == {"score": 3}


def test_parse_json_reply_rejects_non_json():
    with pytest.raises(JudgeParseError):
        parse_json_reply("score: 3")


def test_endpoint_error_names_the_url():
    config = JudgeConfig("http://127.0.0.1:9/v1", "m", timeout_s=1)
    with pytest.raises(EndpointError, match="127.0.0.1:9/v1/chat/completions"):
        config.ask("s", "u")

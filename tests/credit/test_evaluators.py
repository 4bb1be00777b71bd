from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tracerl.credit.evaluators import JudgeStepEvaluator, SubgoalEvaluator, ToolValidityEvaluator
from tracerl.envs.maze import MazeFamily
from tracerl.evals.judges import JudgeConfig
from tracerl.types import Message, Task, ToolCall, ToolResult, Trajectory, Turn


def _turn(results: list[ToolResult]) -> Turn:
    return Turn([1], [0.0], "x", tool_results=results)


def test_tool_validity_scores_each_turn():
    call = ToolCall("f", {})
    traj = Trajectory(Task("t", (Message("user", "q"),)), [0], turns=[
        _turn([ToolResult(call, "ok")]),
        _turn([ToolResult(call, "ok"), ToolResult(call, "Error", ok=False, error="timeout")]),
        _turn([])])
    ev = ToolValidityEvaluator()
    assert [ev(traj, k) for k in range(3)] == [1.0, 0.0, None]


def test_tool_validity_rejects_a_turn_index_out_of_range():
    traj = Trajectory(Task("t", (Message("user", "q"),)), [0], turns=[_turn([])])
    with pytest.raises(IndexError, match="turn_index 3"):
        ToolValidityEvaluator()(traj, 3)


def test_maze_subgoal_marks_progress_and_detours(play, toward):
    family = MazeFamily(min_moves=8, max_moves=8)
    good, bad = toward(family)
    traj = play(family, good + bad + good)
    ev = SubgoalEvaluator(family.subgoal)
    assert [ev(traj, k) for k in range(3)] == [1.0, 0.0, 1.0]


class _Judge(BaseHTTPRequestHandler):
    reply = '{"score": 8, "explanation": "moves closer"}'
    seen: list[str] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body["messages"][1]["content"])
        out = json.dumps({"choices": [{"message": {"content": type(self).reply}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def judge_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Judge)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_judge_scores_a_step_through_an_openai_endpoint(judge_url, play):
    traj = play(MazeFamily(min_moves=8, max_moves=8), "NN")
    ev = JudgeStepEvaluator(JudgeConfig(judge_url, "judge-model"))
    assert ev(traj, 1) == pytest.approx(0.8)
    prompt = _Judge.seen[-1]
    assert "Step to judge" in prompt and prompt.count('{"name": "N"}') == 2


def test_judge_abstains_and_counts_unparseable_replies(judge_url, monkeypatch, play):
    monkeypatch.setattr(_Judge, "reply", "no idea")
    ev = JudgeStepEvaluator(JudgeConfig(judge_url, "judge-model"))
    assert ev(play(MazeFamily(min_moves=8, max_moves=8), "N"), 0) is None
    assert ev.failures == [1]  # type: ignore[attr-defined]


def test_judge_abstains_when_the_endpoint_is_down(play):
    ev = JudgeStepEvaluator(JudgeConfig("http://127.0.0.1:9/v1", "m", timeout_s=2.0))
    assert ev(play(MazeFamily(min_moves=8, max_moves=8), "N"), 0) is None

"""The readable transcript of a recorded trajectory (trace/transcript.py)."""

from __future__ import annotations

from tracerl.trace import Tracer, TraceStore
from tracerl.trace.transcript import Style, clip, format_transcript
from tracerl.types import Message, ToolCall, ToolResult, Trajectory, Turn


def test_clip_keeps_short_text_whole():
    assert clip("one\ntwo\n") == "one\ntwo\n"


def test_clip_cuts_lines_and_says_how_much():
    text = "\n".join(f"line {i}" for i in range(30))
    out = clip(text, max_lines=3)
    assert out.startswith("line 0\nline 1\nline 2\n[... ")
    assert "27 more lines; --full shows all]" in out


def test_clip_cuts_one_long_line():
    out = clip("x" * 2000, max_chars=100)
    assert out == "x" * 100 + "\n[... 1900 more characters; --full shows all]"


def _recorded(tmp_path, traj: Trajectory) -> str:
    with Tracer.for_run(tmp_path) as tracer:
        tracer.record_trajectory(traj, run="exp")
    with TraceStore(tmp_path) as store:
        (row,) = store.trajectories()
        return format_transcript(store.spans(row.trace_id), Style(), full=False)


def test_a_malformed_call_shows_the_raw_text(tmp_path, build_trajectory):
    traj = build_trajectory(broken_tool=False)
    bad = ToolCall("", {}, id="malformed_0")
    result = ToolResult(bad, "Error: unterminated <tool_call>", ok=False, error="malformed_call")
    traj.turns[0] = Turn([1], [-0.1], "<tool_call>{calc", tool_calls=[bad],
                         tool_results=[result],
                         observations=[Message("tool", result.content, tool_call_id=bad.id)])
    out = _recorded(tmp_path, traj)
    assert "[assistant] turn 0\n  <tool_call>{calc\n  -> (malformed call) {}" in out
    assert "[tool] (malformed call): error (malformed_call)" in out


def test_long_tool_output_is_clipped(tmp_path, build_trajectory):
    traj = build_trajectory(broken_tool=False)
    long = "\n".join(str(i) for i in range(100))
    traj.turns[0].observations = [Message("tool", long, tool_call_id="call_1")]
    out = _recorded(tmp_path, traj)
    assert "  11\n  [... 264 more characters, 88 more lines" in out and "  12\n" not in out

"""Tracing overhead: cost of `Tracer.record_trajectory` per trajectory.

The rollout runner calls record_trajectory once per finished trajectory. The real
runner was not available when this was written, so the figures are per-trajectory
costs expressed as a fraction of an assumed rollout time per trajectory (20-50 ms,
the lead's measured range on the CPU dev machine; override with --rollout-ms).

Measured in one run, on the same trajectory (turns x (action tokens, half as many
observation tokens, two tool calls), a 300-token prompt):
  baseline  building the Trajectory object itself (the runner's own bookkeeping)
  no-export spans created with no processor attached (pure span construction)
  batch     BatchSpanProcessor -> SQLite store: hot-path cost, then the exporter
            thread's drain time (flush) and total process CPU per trajectory
  sync      SimpleSpanProcessor -> SQLite: what recording would cost on the hot path
            without batching

    python benchmarks/trace.py [--n 2000] [--turns 4] [--tokens 200] [--rollout-ms 20 50]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider

from tracerl.trace import Tracer
from tracerl.trace.emit import RunContext, emit_trajectory
from tracerl.types import Message, Task, ToolCall, ToolResult, Trajectory, Turn


def make_trajectory(turns: int, i: int, tokens: int = 200) -> Trajectory:
    t0 = time.time()
    task = Task(f"task-{i}", (Message("system", "You are a careful agent. " * 20),
                              Message("user", "Solve the problem step by step. " * 10)), "42")
    out = []
    for k in range(turns):
        calls = [ToolCall("python", {"code": f"print({k} * {j})"}, id=f"c{k}{j}")
                 for j in range(2)]
        results = [ToolResult(c, "output line\n" * 5, started_at=t0, ended_at=t0 + 0.01)
                   for c in calls]
        out.append(Turn(
            action_ids=list(range(tokens)), action_logprobs=[-0.5] * tokens,
            action_text="reasoning about the next step " * (tokens // 10),
            observation_ids=list(range(tokens // 2)),
            observations=[Message("tool", r.content, tool_call_id=r.call.id) for r in results],
            tool_calls=calls, tool_results=results, reward=0.1,
            started_at=t0, ended_at=t0 + 0.02))
    return Trajectory(task=task, prompt_ids=list(range(300)), turns=out, outcome_reward=1.0,
                      reward_parts={"correct": 1.0, "format": 1.0},
                      advantages=[0.1] * (turns * tokens * 3 // 2), group_index=i // 8,
                      sample_index=i % 8)


def per_traj_us(seconds: float, n: int) -> float:
    return seconds / n * 1e6


def bench_baseline(n: int, turns: int, tokens: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        make_trajectory(turns, i, tokens)
    return per_traj_us(time.perf_counter() - start, n)


def bench_no_export(trajs: list[Trajectory]) -> float:
    tracer = TracerProvider().get_tracer("bench")
    start = time.perf_counter()
    for t in trajs:
        emit_trajectory(tracer, t, RunContext("bench", 0, "tiny"))
    return per_traj_us(time.perf_counter() - start, len(trajs))


def bench_store(trajs: list[Trajectory], batch: bool, path: Path) -> tuple[float, float, float]:
    """(hot-path us, flush us, process CPU us) per trajectory."""
    tracer = Tracer(path, batch=batch)
    cpu0, start = time.process_time(), time.perf_counter()
    for t in trajs:
        tracer.record_trajectory(t, run="bench", step=0, model_name="tiny")
    hot = time.perf_counter() - start
    tracer.flush()
    drained = time.perf_counter() - start - hot
    cpu = time.process_time() - cpu0
    tracer.close()
    n = len(trajs)
    return per_traj_us(hot, n), per_traj_us(drained, n), per_traj_us(cpu, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="trajectories per measurement")
    parser.add_argument("--turns", type=int, default=4, help="turns per trajectory")
    parser.add_argument("--tokens", type=int, default=200, help="action tokens per turn")
    parser.add_argument("--rollout-ms", type=float, nargs="+", default=[20.0, 50.0],
                        help="assumed rollout time per trajectory (ms)")
    args = parser.parse_args()
    trajs = [make_trajectory(args.turns, i, args.tokens) for i in range(args.n)]
    spans = 1 + args.turns * 3 + 2
    print(f"{args.n} trajectories x {args.turns} turns x {args.tokens} action tokens "
          f"({spans} spans each)")
    rows = [("baseline: build Trajectory", bench_baseline(args.n, args.turns, args.tokens),
             None, None),
            ("spans, no exporter", bench_no_export(trajs), None, None)]
    with tempfile.TemporaryDirectory() as d:
        rows.append(("batch -> SQLite", *bench_store(trajs, True, Path(d) / "b.sqlite")))
        rows.append(("sync  -> SQLite", *bench_store(trajs, False, Path(d) / "s.sqlite")))
        size_kb = (Path(d) / "b.sqlite").stat().st_size / 1024 / args.n
    print(f"{'measurement':28s} {'hot path us':>12s} {'drain us':>9s} {'cpu us':>8s}  "
          + "  ".join(f"% of {ms:g} ms" for ms in args.rollout_ms))
    for name, hot, drain, cpu in rows:
        fracs = "  ".join(f"{hot / (ms * 10):10.2f}%" for ms in args.rollout_ms)
        drain_s = f"{drain:9.0f}" if drain is not None else f"{'-':>9s}"
        cpu_s = f"{cpu:8.0f}" if cpu is not None else f"{'-':>8s}"
        print(f"{name:28s} {hot:12.0f} {drain_s} {cpu_s}  {fracs}")
    batch_cpu = rows[2][3]
    print("total CPU of batched tracing per trajectory: "
          + ", ".join(f"{batch_cpu / (ms * 10):.2f}% of {ms:g} ms" for ms in args.rollout_ms))
    print(f"store size: {size_kb:.1f} KiB per trajectory")


if __name__ == "__main__":
    main()

"""Train the agent you already have: an `openai`-client agent on `calc`, trained from outside.

The agent below is ordinary chat-completions code: it sends the conversation and a
`calculator` tool, runs the tool calls it gets back, and stops at a final answer. It
knows nothing of tracerl except three things the server asks of it:

1. `extra_body={"episode_id": ..., "task_id": ...}` on each call (which episode, which
   task: episodes of one task form a group for the group baseline);
2. `POST /v1/episodes/{episode_id}/reward` with the reward once the episode is over;
3. `POST /v1/train` between batches: the server updates the policy on the finished
   episodes (the same RL update `tracerl train` runs) and serves the new weights.

    python examples/byo_agent.py                         # a fresh tiny policy, in-process
    python examples/byo_agent.py --serve runs/calc-sft --steps 30
    tracerl serve runs/calc-sft --train --port 8000 &    # or any server of your own
    python examples/byo_agent.py --base-url http://127.0.0.1:8000/v1 --model calc-sft

Without --base-url the server runs in this process (a background thread), on the policy
that --serve names. docs/serve.md walks through it; docs/benchmarks.md ("Serving") has
a measured run.
"""

from __future__ import annotations

import argparse
import json
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import httpx
from openai import OpenAI

from tracerl.envs.calc import CalcFamily
from tracerl.tools.calculator import CalculatorError, evaluate, format_number
from tracerl.types import Task

CALCULATOR = {"type": "function", "function": {
    "name": "calculator", "description": "Evaluate one arithmetic operation exactly.",
    "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                   "required": ["expression"]}}}
ANSWER = re.compile(r"Answer:\s*(-?\d+(?:\.\d+)?)\s*$")


# -- the agent: plain openai-client code ---------------------------------------------------

def run_tool(name: str, arguments: str) -> str:
    if name != "calculator":
        return f"Error: unknown tool {name!r}"
    try:
        return format_number(evaluate(str(json.loads(arguments)["expression"]), 1))
    except (CalculatorError, ValueError, KeyError, TypeError) as e:
        return f"Error: {e}"


def play(client: OpenAI, model: str, task: Task, episode_id: str | None,
         max_turns: int = 4, temperature: float = 1.0) -> str:
    """One episode; returns the final answer text."""
    messages: list[Any] = [m.to_openai() for m in task.messages]
    extra = {"episode_id": episode_id, "task_id": task.id} if episode_id else {}
    text = ""
    for _ in range(max_turns):
        reply = client.chat.completions.create(
            model=model, messages=messages, tools=[CALCULATOR], temperature=temperature,
            max_tokens=96, extra_body=extra).choices[0].message
        messages.append(reply)
        text = reply.content or ""
        if not reply.tool_calls:
            break
        for call in reply.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "name": "calculator",
                             "content": run_tool(call.function.name, call.function.arguments)})
    return text


def score(task: Task, text: str) -> float:
    m = ANSWER.search(text.strip())
    return float(m is not None and Fraction(m.group(1)) == Fraction(str(task.answer)))


# -- the loop: play a batch, post rewards, train, repeat -----------------------------------

@dataclass(frozen=True)
class StepReport:
    step: int
    reward_mean: float
    updated: bool
    record: dict[str, Any]


def play_batch(client: OpenAI, http: httpx.Client, model: str, tasks: list[Task],
               group_size: int, workers: int) -> list[float]:
    def one(job: tuple[Task, int]) -> float:
        task, _ = job
        episode = f"{task.id}-{uuid.uuid4().hex[:8]}"
        reward = score(task, play(client, model, task, episode))
        http.post(f"/episodes/{episode}/reward", json={"reward": reward}).raise_for_status()
        return reward

    jobs = [(t, g) for t in tasks for g in range(group_size)]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, jobs))


def heldout_success(client: OpenAI, model: str, tasks: list[Task], workers: int) -> float:
    """Episodes without an episode id or reward: recorded, never trained on."""
    with ThreadPoolExecutor(workers) as pool:
        wins = pool.map(lambda t: score(t, play(client, model, t, None)), tasks)
        return sum(wins) / len(tasks)


def train(base_url: str, model: str, steps: int, tasks_per_step: int = 8,
          group_size: int = 8, calls: int = 1, eval_tasks: int = 0, workers: int = 64,
          log: bool = True) -> tuple[list[StepReport], tuple[float, float] | None]:
    """`steps` rounds of play + update; with `eval_tasks`, held-out success before and
    after (sampled at temperature 1, as training evaluates)."""
    client = OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=600)
    http = httpx.Client(base_url=base_url, timeout=600)
    family = CalcFamily(calls=calls)
    heldout = family.tasks("heldout", eval_tasks, seed=0) if eval_tasks else []
    before = heldout_success(client, model, heldout, workers) if heldout else None
    reports = []
    for step in range(steps):
        tasks = family.tasks("train", tasks_per_step, seed=step + 1)
        rewards = play_batch(client, http, model, tasks, group_size, workers)
        record = http.post("/train", json={}).raise_for_status().json()
        report = StepReport(step + 1, sum(rewards) / len(rewards), bool(record["updated"]),
                            record)
        reports.append(report)
        if log:
            loss = record.get("loss")
            print(f"step {report.step}: reward {report.reward_mean:.2f}  updated "
                  f"{report.updated}" + (f"  loss {loss:.4f}" if loss is not None else ""),
                  flush=True)
    after = heldout_success(client, model, heldout, workers) if heldout else None
    if log:
        rec = http.get("/stats").raise_for_status().json()["recorder"]
        print(f"server: {rec['calls']} calls, {rec['finished']} episodes finished, "
              f"{rec['mismatches']} history mismatches", flush=True)
    return reports, (before, after) if heldout else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-url", help="a running `tracerl serve --train` (default: start one "
                                      "in this process)")
    p.add_argument("--model", help="model id on that server (default: the served name)")
    p.add_argument("--serve", default="tiny", help="in-process: what to serve (tiny, a "
                                                   "model directory or a run directory)")
    p.add_argument("overrides", nargs="*", help="in-process: train-config keys, e.g. rl.lr=5e-5")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--tasks", type=int, default=8, help="tasks per step")
    p.add_argument("--group", type=int, default=8, help="episodes per task")
    p.add_argument("--calls", type=int, default=1, help="calculator calls per problem")
    p.add_argument("--eval-tasks", type=int, default=0, help="held-out tasks, before and after")
    args = p.parse_args(argv)
    if args.base_url:
        reports, evals = train(args.base_url, args.model or "tiny", args.steps, args.tasks,
                               args.group, args.calls, args.eval_tasks)
    else:
        from tracerl.serve.server import Server, build_service, load_served

        served = load_served(args.serve, args.overrides)
        service = build_service(served, train=True)
        with Server(service.app) as server:
            reports, evals = train(server.url, args.model or served.name, args.steps,
                                   args.tasks, args.group, args.calls, args.eval_tasks)
    if evals is not None:
        print(f"held-out success: {evals[0]:.3f} -> {evals[1]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

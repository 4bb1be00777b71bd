"""Four real clients against `tracerl serve`: the `openai` SDK (sync, async, streaming,
`n`), LangChain's `ChatOpenAI` with `bind_tools`, the OpenAI Agents SDK over
`OpenAIChatCompletionsModel`, and LiteLLM.

Each client plays calc episodes end to end with a calculator tool: the model calls the
tool, the client runs it and sends the result back, the model answers; the episode id
travels in the `X-Episode-Id` header (every client can set headers), the reward is
posted, and the recorded episode must hold every call with 0 history mismatches.

The server is the tiny policy with a scripted sampler (`CalcScript`: the first turn
calls the calculator on the task's expression, the next one answers), so the figures
test the HTTP surface and the clients, not a model's skill.

    python benchmarks/serve_clients.py            # installs the four clients into a
                                                  # throwaway venv under /tmp, runs each
    python benchmarks/serve_clients.py --venv /tmp/tracerl-clients --keep

In driver mode (the default) the server runs in this process (the project's venv) and
each client runs in the throwaway venv as `python serve_clients.py --check CLIENT --url
URL`: that mode imports only the client and httpx. tests/serve/test_clients.py runs the
same checks in the project's venv (each skipped with a reason where its client is not
installed; the `openai` one always runs).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import operator
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import httpx

MODEL = "tiny"
CLIENTS = {"openai": "openai", "openai-async": "openai", "langchain": "langchain_openai",
           "agents": "agents", "litellm": "litellm"}
"""Check name -> the module it needs."""
PACKAGES = ["openai", "langchain-openai", "openai-agents", "litellm", "httpx"]
CALCULATOR = {"type": "function", "function": {
    "name": "calculator", "description": "Evaluate one arithmetic operation exactly.",
    "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                   "required": ["expression"]}}}
TASKS = ["(662*64)", "(17+25)", "(90-7)"]
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv}


def calculate(expression: str) -> str:
    """The calculator tool: + - * / on numbers, exactly."""
    def ev(node: ast.AST) -> Fraction:
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return Fraction(node.value)
        raise ValueError(f"not arithmetic: {expression!r}")
    value = ev(ast.parse(expression, mode="eval").body)
    return str(value.numerator if value.denominator == 1 else float(value))


def prompt(task: str) -> str:
    return f"Compute {task}."


def answer(task: str) -> str:
    return f"Answer: {calculate(task.strip('()'))}"


# -- the server side: a scripted sampler ----------------------------------------------

class CalcScript:
    """A Sampler for the tiny tokenizer's ChatML: turn 0 calls the calculator on the
    prompt's expression, later turns answer (the right answer, so checks can verify
    the tool result went round)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tok = tokenizer

    def generate(self, contexts: list[list[int]], params: Any,
                 budgets: list[int] | None = None) -> list[Any]:
        from tracerl.policy.sampling import Sample

        out = []
        for ctx in contexts:
            text = self.tok.decode(ctx, skip_special_tokens=False)
            user = text.split("<|im_start|>user\n")[1].split("<|im_end|>")[0]
            task = user.removeprefix("Compute ").removesuffix(".")
            if text.count("<|im_start|>assistant") > 1:  # the tool result is in
                action = answer(task) + "<|im_end|>"
            else:
                call = {"name": "calculator", "arguments": {"expression": task.strip("()")}}
                action = f"<tool_call>{json.dumps(call)}</tool_call>"
            ids = self.tok.encode(action, add_special_tokens=False)
            out.append(Sample(ids, [0.0] * len(ids), "stop"))
        return out


# -- the client side: one check per client ---------------------------------------------

def _openai(url: str, episode: str) -> Any:
    from openai import OpenAI
    return OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=120,
                  default_headers={"X-Episode-Id": episode, "X-Task-Id": "clients"})


def _tool_results(calls: list[Any]) -> list[dict[str, Any]]:
    return [{"role": "tool", "tool_call_id": c.id,
             "content": calculate(json.loads(c.function.arguments)["expression"])}
            for c in calls]


def check_openai(url: str, task: str, episode: str) -> str:
    """Sync SDK: a tool round trip, streamed, then the answer with n=2."""
    client = _openai(url, episode)
    messages: list[Any] = [{"role": "user", "content": prompt(task)}]
    first = client.chat.completions.create(model=MODEL, messages=messages, tools=[CALCULATOR])
    reply = first.choices[0].message
    assert first.choices[0].finish_reason == "tool_calls" and reply.tool_calls, reply
    streamed: dict[int, list[str]] = {}
    for chunk in client.chat.completions.create(model=MODEL, messages=messages,
                                                tools=[CALCULATOR], stream=True):
        for c in chunk.choices:
            for d in c.delta.tool_calls or ():
                streamed.setdefault(d.index, []).append(d.function.arguments or "")
    assert "".join(streamed[0]) == reply.tool_calls[0].function.arguments
    messages += [reply.model_dump(exclude_none=True), *_tool_results(reply.tool_calls)]
    final = client.chat.completions.create(model=MODEL, messages=messages,
                                           tools=[CALCULATOR], n=2)
    texts = {c.message.content for c in final.choices}
    assert texts == {answer(task)}, texts
    return answer(task)


def check_openai_async(url: str, task: str, episode: str) -> str:
    from openai import AsyncOpenAI

    async def play() -> str:
        client = AsyncOpenAI(base_url=url, api_key="unused", max_retries=0, timeout=120,
                             default_headers={"X-Episode-Id": episode})
        messages: list[Any] = [{"role": "user", "content": prompt(task)}]
        reply = (await client.chat.completions.create(
            model=MODEL, messages=messages, tools=[CALCULATOR])).choices[0].message
        messages += [reply.model_dump(exclude_none=True), *_tool_results(reply.tool_calls)]
        text = ""
        async for chunk in await client.chat.completions.create(
                model=MODEL, messages=messages, tools=[CALCULATOR], stream=True):
            text += "".join(c.delta.content or "" for c in chunk.choices)
        await client.close()
        return text
    return asyncio.run(play())


def check_langchain(url: str, task: str, episode: str) -> str:
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model=MODEL, base_url=url, api_key="unused", max_retries=0,
                     default_headers={"X-Episode-Id": episode}).bind_tools([CALCULATOR])
    messages: list[Any] = [HumanMessage(prompt(task))]
    reply = llm.invoke(messages)
    assert reply.tool_calls, reply
    messages.append(reply)
    messages += [ToolMessage(calculate(c["args"]["expression"]), tool_call_id=c["id"])
                 for c in reply.tool_calls]
    return str(llm.invoke(messages).content)


def check_agents(url: str, task: str, episode: str) -> str:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)

    @function_tool
    def calculator(expression: str) -> str:
        """Evaluate one arithmetic operation exactly."""
        return calculate(expression)

    client = AsyncOpenAI(base_url=url, api_key="unused", max_retries=0,
                         default_headers={"X-Episode-Id": episode})
    agent = Agent(name="calc", instructions="Use the calculator.", tools=[calculator],
                  model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client))
    return str(Runner.run_sync(agent, prompt(task)).final_output)


def check_litellm(url: str, task: str, episode: str) -> str:
    import litellm

    ask = dict(model=f"openai/{MODEL}", api_base=url, api_key="unused", tools=[CALCULATOR],
               extra_headers={"X-Episode-Id": episode})
    messages: list[Any] = [{"role": "user", "content": prompt(task)}]
    reply = litellm.completion(messages=messages, **ask).choices[0].message
    assert reply.tool_calls, reply
    messages += [reply.model_dump(exclude_none=True), *_tool_results(reply.tool_calls)]
    return str(litellm.completion(messages=messages, **ask).choices[0].message.content)


CHECKS: dict[str, Callable[[str, str, str], str]] = {
    "openai": check_openai, "openai-async": check_openai_async,
    "langchain": check_langchain, "agents": check_agents, "litellm": check_litellm}


def play(name: str, url: str) -> dict[str, Any]:
    """Every task through client `name`: the answers, and what the server recorded."""
    http = httpx.Client(base_url=url, timeout=60)
    results = []
    for task in TASKS:
        episode = f"{name}-{uuid.uuid4().hex[:8]}"
        text = CHECKS[name](url, task, episode).strip()
        recorded = http.get(f"/episodes/{episode}").json()
        reward = http.post(f"/episodes/{episode}/reward",
                           json={"reward": float(text == answer(task))}).json()
        results.append({"task": task, "ok": text == answer(task), "text": text,
                        "calls": len(recorded.get("calls", [])),
                        "mismatches": recorded.get("mismatches"),
                        "trajectories": reward.get("trajectories", 0)})
    return {"client": name, "results": results,
            "ok": all(r["ok"] and r["mismatches"] == 0 and r["trajectories"] > 0
                      for r in results)}


# -- driver: a throwaway venv, a live server ------------------------------------------

def make_venv(where: Path) -> tuple[Path, dict[str, str]]:
    """`where` with the four clients installed; per package, its version or the error."""
    python = where / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    versions = {}
    for package in PACKAGES:
        r = subprocess.run([str(python), "-m", "pip", "install", "-q", package],
                           capture_output=True, text=True)
        if r.returncode:
            versions[package] = "install failed: " + r.stderr.strip().splitlines()[-1]
            continue
        show = subprocess.run([str(python), "-m", "pip", "show", package],
                              capture_output=True, text=True).stdout
        versions[package] = next((line.split(": ", 1)[1] for line in show.splitlines()
                                  if line.startswith("Version: ")), "?")
    return python, versions


def serve_script() -> tuple[Any, Any]:
    """The tiny policy behind a live server with the scripted sampler; (service, server)."""
    from tracerl.serve.engine import ServeConfig
    from tracerl.serve.server import Server, build_service, load_served

    served = load_served("tiny")
    config = ServeConfig(model_name=MODEL, describe_tools=False)
    service = build_service(served, config, sampler=CalcScript(served.policy.tokenizer))
    return service, Server(service.app).start()


def drive(args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    python, versions = make_venv(Path(args.venv))
    print(f"venv {args.venv} ({time.perf_counter() - t0:.0f} s): "
          + ", ".join(f"{k} {v}" for k, v in versions.items()), flush=True)
    service, server = serve_script()
    try:
        for name in CHECKS:
            r = subprocess.run([str(python), __file__, "--check", name, "--url", server.url],
                               capture_output=True, text=True, timeout=600)
            out = r.stdout.strip().splitlines()
            if r.returncode or not out:
                tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
                print(f"{name:>13}: FAILED ({tail})", flush=True)
                continue
            report = json.loads(out[-1])
            calls = sum(x["calls"] for x in report["results"])
            print(f"{name:>13}: {'ok' if report['ok'] else 'FAILED'}  "
                  f"{sum(x['ok'] for x in report['results'])}/{len(TASKS)} answers right, "
                  f"{calls} calls recorded, mismatches "
                  f"{sum(x['mismatches'] or 0 for x in report['results'])}", flush=True)
        stats = service.engine.recorder.stats
        print(f"server: {stats.calls} calls, {stats.episodes} episodes, {stats.mismatches} "
              f"mismatches, {stats.finished} finished")
    finally:
        server.stop()
        service.engine.close()
        if not args.keep:
            subprocess.run(["rm", "-rf", args.venv], check=False)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--venv", default=f"/tmp/tracerl-clients-{os.getpid()}")
    p.add_argument("--keep", action="store_true", help="keep the venv afterwards")
    p.add_argument("--check", choices=list(CHECKS), help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.check:
        print(json.dumps(play(args.check, args.url)))
    else:
        drive(args)


if __name__ == "__main__":
    main()

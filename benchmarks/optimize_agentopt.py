"""agent-opt's optimizers on the benchmark's task, offline, metered like ours.

Run by benchmarks/optimize.py with agent-opt's own interpreter (it needs litellm,
pydantic and ai-evaluation, kept out of tracerl's venv):

    /path/to/agentopt-venv/bin/python benchmarks/optimize_agentopt.py JOB.json

JOB.json gives the endpoint (`tracerl serve` on 127.0.0.1 serving the same SmolLM2),
the optimizer (`bayesian` or `gepa`), the seed, the budget in calls, the search and
held-out tasks (`question`, `answer`) and the starting template `{question}` (the
family's own message, the same start as ours). It prints one JSON line: the best
template, the calls and tokens spent, and the held-out replies of the starting and the
best template (scored by the caller with the family's reward).

Every model call goes through `litellm.completion`, which this driver wraps: the model
id becomes `openai/<served name>` with `api_base` at the local server and a dummy key
(LiteLLM's OpenAI-compatible route), task-model calls get greedy sampling and the
benchmark's reply length, teacher calls the teacher's. The wrapper counts a call per
request and its tokens from the reply's `usage` (prompt plus completion), as our ledger
counts, and refuses a request once the budget in calls is spent (an exception agent-opt
does not catch, so the search ends there; the best template scored so far stands).
An exception of agent-opt's own (its GEPA formats the reflection model's template with
str.format, so a proposal holding "{task description}" raises KeyError out of the
search) also ends the search; the reply says so in `stopped`, and the best template
scored before it stands (agent-opt itself would lose them: it returns no result).
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import litellm
from fi.opt.datamappers import BasicDataMapper
from fi.opt.generators import LiteLLMGenerator
from fi.opt.optimizers import BayesianSearchOptimizer, GEPAOptimizer
from fi.opt.optimizers.gepa import _InternalGEPAAdapter as gepa_adapter
from fi.opt.types import EvaluationResult

from tracerl.envs.sentiment import normalize_label

TASK_MODEL, TEACHER_MODEL = "openai/task", "openai/teacher"


class OutOfBudget(BaseException):  # noqa: N818 - not an Exception: agent-opt must not catch it
    """The budget in calls is spent."""


class Meter:
    """litellm.completion behind the local endpoint, counted and bounded."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.job, self.calls, self.tokens, self.limit = job, 0, 0, job["budget_calls"]
        self.inner = litellm.completion

    def __call__(self, model: str, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        if self.calls >= self.limit:
            raise OutOfBudget(f"budget of {self.limit} calls spent")
        task = model != TEACHER_MODEL
        kwargs.pop("response_format", None)  # the local server has no JSON mode
        kwargs.update(api_base=self.job["url"], api_key="unused",
                      max_tokens=self.job["task_tokens"] if task else self.job["teacher_tokens"],
                      temperature=0.0 if task else kwargs.get("temperature", 1.0))
        reply = self.inner(model=f"openai/{self.job['served']}", messages=messages, **kwargs)
        self.calls += 1
        self.tokens += reply.usage.prompt_tokens + reply.usage.completion_tokens
        return reply


class ExactLabel:
    """The family's reward (tracerl.envs.sentiment.LabelReward) as agent-opt's evaluator."""

    def evaluate(self, inputs: list[dict[str, str]]) -> list[EvaluationResult]:
        return [EvaluationResult(score=float(normalize_label(i["output"] or "") == i["label"]))
                for i in inputs]


def _score(template: str, data: list[dict[str, str]], mapper: BasicDataMapper) -> float:
    """The mean reward of `template` on `data` (agent-opt's Bayesian search never scores
    its starting prompt; ours and the gepa package do, so it is scored here, on budget)."""
    gen = LiteLLMGenerator(TASK_MODEL, template)
    inputs = [mapper.map(gen.generate({"question": d["question"]}), d) for d in data]
    return sum(r.score for r in ExactLabel().evaluate(inputs)) / len(data)


def main() -> None:
    job = json.loads(open(sys.argv[1]).read())
    meter = Meter(job)
    litellm.completion = meter  # agent-opt and gepa call it through the module
    litellm.suppress_debug_info = True
    train = [{"question": t["question"], "label": t["answer"]} for t in job["train"]]
    mapper = BasicDataMapper({"output": "generated_output", "label": "label"})
    start = "{question}"
    scored: list[tuple[float, str]] = []  # (mean score, template) of full scorings
    try:
        if job["optimizer"] == "bayesian":
            opt = BayesianSearchOptimizer(
                min_examples=1, max_examples=job["max_examples"], n_trials=10**6,
                seed=job["seed"], inference_model_name=TASK_MODEL,
                example_template="{question}\n{label}", few_shot_position="prepend")
            score_prompt = opt._score_prompt

            def recorded(prompt: str, *args: Any) -> Any:
                entry = score_prompt(prompt, *args)
                if entry is not None:
                    scored.append((entry.average_score, prompt))
                return entry

            opt._score_prompt = recorded  # type: ignore[method-assign]
            scored.append((_score(start, train, mapper), start))
            opt.optimize(ExactLabel(), mapper, train, [start])
        else:
            evaluate = gepa_adapter.evaluate

            def recorded_batch(self: Any, batch: list[Any], candidate: dict[str, str],
                               capture_traces: bool = False) -> Any:
                out = evaluate(self, batch, candidate, capture_traces)
                if len(batch) == len(train):
                    scored.append((sum(out.scores) / len(batch), next(iter(candidate.values()))))
                return out

            gepa_adapter.evaluate = recorded_batch  # type: ignore[method-assign]
            GEPAOptimizer(reflection_model=TEACHER_MODEL, generator_model=TASK_MODEL).optimize(
                ExactLabel(), mapper, train, [start], max_metric_calls=job["budget_calls"])
        stopped = "finished"
    except OutOfBudget as e:
        stopped = str(e)  # the budget ended the search: the scorings so far stand
    except Exception as e:  # agent-opt's own failure ends its search; it is reported
        stopped = f"crashed: {type(e).__name__}: {e}"
    spent = {"calls": meter.calls, "tokens": meter.tokens}
    top = max((s for s, _ in scored), default=None)
    best = next(t for s, t in scored if s == top) if scored else start
    meter.limit = 10**9  # held-out scoring is outside the budget, as ours is
    replies = {}
    with ThreadPoolExecutor(8) as pool:  # concurrent requests: the server batches them
        for name, template in (("start", start), ("best", best)):
            gen = LiteLLMGenerator(TASK_MODEL, template)
            replies[name] = list(pool.map(lambda t, g=gen: g.generate(
                {"question": t["question"]}), job["heldout"]))
    print(json.dumps({"best": best, "best_score": top, "entries": len(scored), "spent": spent,
                      "stopped": stopped,
                      "replies": replies}), flush=True)


if __name__ == "__main__":
    main()

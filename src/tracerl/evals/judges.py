"""LLM judges through any OpenAI-compatible endpoint: a rubric judge (one trajectory)
and a group judge (a group of trajectories scored relative to each other).

Group judges (RULER-style relative scoring) are prone to position bias: LLM judges
favour whichever candidate is shown first (Zheng et al., 2023, "Judging LLM-as-a-Judge",
sec. 3.3). GroupJudge shows the group in several orders and averages each
trajectory's score by its id. With `samples` a multiple of the group size it uses the
rotations of one random order (a cyclic Latin square), so every trajectory sits in
every position equally often and an additive position bias cancels exactly; otherwise
it draws independent shuffles, which cancel it in expectation.
"""

from __future__ import annotations

import json
import logging
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracerl.evals.items import EvalItem, item_from_trajectory
from tracerl.evals.metric import MetricResult
from tracerl.types import Group, Message, Trajectory
from tracerl.util.http import EndpointError, OpenAIHTTPClient, first_message_text

log = logging.getLogger(__name__)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class JudgeParseError(ValueError):
    """The judge's reply did not hold the score(s) asked for."""


def render_transcript(messages: Sequence[Message]) -> str:
    """A conversation as plain text for a judge (tool calls as JSON)."""
    lines = []
    for m in messages:
        text = f"{m.role}: {m.content}"
        for call in m.tool_calls:
            text += f"\n  -> call {call.name}({json.dumps(call.arguments, sort_keys=True)})"
        lines.append(text)
    return "\n".join(lines)


def parse_json_reply(text: str) -> dict[str, Any]:
    """The first JSON object in a judge reply (judges wrap JSON in prose or fences)."""
    found = _JSON_OBJECT.search(text)
    if found is None:
        raise JudgeParseError(f"judge reply holds no JSON object: {text[:200]!r}")
    try:
        value = json.loads(found.group(0))
    except json.JSONDecodeError as exc:
        raise JudgeParseError(f"judge reply JSON is invalid ({exc.msg}): {text[:200]!r}") from exc
    if not isinstance(value, dict):
        raise JudgeParseError(f"judge reply JSON is not an object: {text[:200]!r}")
    return value


@dataclass(frozen=True)
class JudgeConfig:
    """Where and how to ask: the endpoint, the model, and the score scale."""

    base_url: str
    model: str
    api_key: str | None = None
    low: float = 0.0
    high: float = 10.0
    temperature: float = 0.0
    timeout_s: float = 60.0

    def client(self) -> OpenAIHTTPClient:
        return OpenAIHTTPClient(self.base_url, self.api_key, self.timeout_s)

    def normalise(self, raw: Any) -> float:
        """A raw judge score -> [0, 1]; outside the scale is a parse error."""
        try:
            value = float(raw)
        except (TypeError, ValueError) as exc:
            raise JudgeParseError(f"judge score {raw!r} is not a number") from exc
        if not self.low <= value <= self.high:
            raise JudgeParseError(f"judge score {value:g} outside [{self.low:g}, {self.high:g}]")
        return (value - self.low) / (self.high - self.low)

    def ask(self, system: str, user: str) -> str:
        response = self.client().chat.completions.create(
            model=self.model, temperature=self.temperature,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}])
        return first_message_text(response)


RUBRIC_SYSTEM = ("You grade one AI agent transcript against a rubric. Reply with only a JSON "
                 'object {{"score": <number from {low:g} to {high:g}>, "explanation": "..."}}.')


@dataclass(frozen=True)
class RubricJudge:
    """Score one trajectory against `rubric` (a Metric; the reference answer, if any,
    is shown to the judge). Unparseable replies and endpoint failures raise, so
    evaluate() counts them as failures and MetricReward turns them into None."""

    config: JudgeConfig
    rubric: str
    name: str = "rubric_judge"

    def prompt(self, item: EvalItem) -> str:
        parts = [f"Rubric:\n{self.rubric}", f"Transcript:\n{render_transcript(item.messages())}"]
        if item.reference.get("answer") is not None:
            parts.append(f"Reference answer:\n{item.reference['answer']}")
        return "\n\n".join(parts)

    def __call__(self, item: EvalItem) -> MetricResult:
        system = RUBRIC_SYSTEM.format(low=self.config.low, high=self.config.high)
        reply = parse_json_reply(self.config.ask(system, self.prompt(item)))
        if "score" not in reply:
            raise JudgeParseError(f"judge reply has no 'score': {reply!r:.200}")
        value = self.config.normalise(reply["score"])
        return MetricResult(value, details={"explanation": str(reply.get("explanation", ""))})


GROUP_SYSTEM = ("You compare several AI agent transcripts for the same task and score each "
                "against the rubric, relative to the others. Reply with only a JSON object "
                '{{"scores": {{"<id>": <number from {low:g} to {high:g}>, ...}}}} with every id.')


@dataclass(frozen=True)
class GroupJudgement:
    scores: tuple[float | None, ...]
    """Mean normalised score per trajectory, in the input order (None: never scored)."""
    orders: tuple[tuple[int, ...], ...]
    """The order (input indices) each sample showed."""
    raw: tuple[Mapping[str, float], ...] = field(default=())
    """Normalised scores by id, per sample."""


@dataclass
class GroupJudge:
    """Score a group of trajectories relative to each other, cancelling position bias."""

    config: JudgeConfig
    rubric: str
    samples: int = 0
    """Orders to show; 0 means one per trajectory (one full rotation)."""
    seed: int = 0
    name: str = "group_judge"
    failures: int = field(default=0, init=False)
    """Groups `rewards` could not judge (endpoint down, unparseable reply)."""

    def orders(self, n: int) -> list[list[int]]:
        rng = random.Random(self.seed)
        k = self.samples or n
        base = list(range(n))
        rng.shuffle(base)
        if k % n == 0:
            return [base[s % n:] + base[: s % n] for s in range(k)]
        out = []
        for _ in range(k):
            order = list(range(n))
            rng.shuffle(order)
            out.append(order)
        return out

    def prompt(self, items: Sequence[EvalItem], order: Sequence[int]) -> str:
        blocks = [f"[id: t{i}]\n{render_transcript(items[i].messages())}" for i in order]
        return f"Rubric:\n{self.rubric}\n\n" + "\n\n".join(blocks)

    def _sample(self, items: Sequence[EvalItem], order: Sequence[int]) -> dict[str, float]:
        system = GROUP_SYSTEM.format(low=self.config.low, high=self.config.high)
        reply = parse_json_reply(self.config.ask(system, self.prompt(items, order)))
        scores = reply.get("scores")
        if not isinstance(scores, dict):
            raise JudgeParseError(f"group judge reply has no 'scores' object: {reply!r:.200}")
        known = {f"t{i}" for i in order}
        return {k: self.config.normalise(v) for k, v in scores.items() if k in known}

    def judge(self, group: Sequence[EvalItem | Trajectory]) -> GroupJudgement:
        """Ask once per order; an id missing from one reply just skips that sample."""
        items = [g if isinstance(g, EvalItem) else item_from_trajectory(g) for g in group]
        if not items:
            raise ValueError("GroupJudge needs at least one trajectory")
        orders = self.orders(len(items))
        raw = [self._sample(items, order) for order in orders]
        means: list[float | None] = []
        for i in range(len(items)):
            got = [r[f"t{i}"] for r in raw if f"t{i}" in r]
            means.append(sum(got) / len(got) if got else None)
        return GroupJudgement(tuple(means), tuple(tuple(o) for o in orders), tuple(raw))

    def rewards(self, group: Group) -> list[float | None]:
        """One outcome reward per trajectory of a rollout Group; a judge failure gives
        None for the group (masked, as an infrastructure error), counted and logged."""
        try:
            return list(self.judge(group.trajectories).scores)
        except (EndpointError, JudgeParseError):
            self.failures += 1
            log.exception("group judge failed on task %r", group.task.id)
            return [None] * len(group.trajectories)

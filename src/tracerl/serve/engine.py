"""The served policy: requests -> contexts -> batched samples -> OpenAI replies, recorded.

`Engine.prepare` turns a checked request into the context ids to continue: a new
conversation is rendered by the ChatRenderer (tools described in the model's own
format); a continued one is the recorded call's ids, the exact sampled ids of the reply,
and the rendered delta of what the client added (tracerl.serve.history). `complete` and
`stream` sample through the Batcher, parse tool calls from the model's own format
(tracerl.tools.hermes) into OpenAI `tool_calls`, and record the call.

`tool_choice`: "auto" parses calls; "none" neither describes the tools nor parses calls;
"required" and a named function force the opening of a call (`<tool_call>`, plus
`{"name": "NAME", "arguments": ` for a named one) into the context, so the model writes
the rest. Forced text is context, not action: it is masked like any prompt token.

A request far over the context is refused before it is tokenized: no token of the
vocabulary decodes to more than `max_token_bytes` bytes, so a rendered text of n bytes
has at least n / max_token_bytes tokens, and above context_limit tokens the answer is
400 `context_length_exceeded` at the cost of rendering alone. A fast tokenizer's
`encode` holds the GIL for its whole run (3 MB: 15 s here, every thread of the server
stalled, issue 32); with the bound, what is tokenized is at most context_limit *
max_token_bytes bytes.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from tracerl.policy.model import Policy
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import Sample, Sampler, SamplingParams
from tracerl.rollout.render import ChatRenderer, TemplateMismatchError
from tracerl.serve.api import (
    APIError,
    ChatRequest,
    Choice,
    chunk_body,
    completion_body,
    tool_call_deltas,
    usage,
)
from tracerl.serve.batcher import Batcher
from tracerl.serve.episodes import Call, Link, OnMismatch, Recorder, RewardFn
from tracerl.serve.history import as_rendered, find_parent
from tracerl.tools.hermes import OPEN, parse_tool_calls
from tracerl.types import Message

T = TypeVar("T")

@dataclass(frozen=True)
class ServeConfig:
    """How `tracerl serve` answers and records."""

    model_name: str = "tracerl"
    """The model id clients pass (`/v1/models` lists it)."""
    default_max_tokens: int = 256
    """Tokens per completion when a request gives no max_tokens."""
    context_limit: int = 0
    """Context length in tokens (0 = the model's max_position_embeddings)."""
    describe_tools: bool = True
    """Describe a request's `tools` to the policy (off for the tiny policy, which learns
    its tools from demonstrations, as in training)."""
    on_mismatch: OnMismatch = "split"
    """History that does not match the recorded replies: split, drop or reject."""
    max_rows: int = 64
    """Contexts per sampler call at most (1 = no batching)."""
    batch_window_s: float = 0.005
    """How long a free sampler waits for more requests before a batch (with max_rows > 1)."""
    max_n: int = 16
    """Largest `n` a request may ask for."""
    max_open_episodes: int = 10_000
    """Open episodes with an id kept; the oldest are forgotten (counted) beyond it."""
    record_anonymous: bool = True
    """Record calls without an episode id (each an episode of its own)."""
    max_anonymous_episodes: int = 1_000
    """Open anonymous episodes kept (a cap of their own: they never evict named ones)."""
    max_body_bytes: int = 4 * 2**20
    """Largest request body accepted (HTTP 413 beyond it)."""
    cpu_threads: int = 2
    """Threads that parse, render and tokenize requests off the event loop."""

    def __post_init__(self) -> None:
        if self.default_max_tokens < 1 or self.max_n < 1 or self.context_limit < 0:
            raise ValueError("default_max_tokens and max_n must be >= 1, context_limit >= 0")
        if min(self.max_open_episodes, self.max_anonymous_episodes, self.max_body_bytes,
               self.cpu_threads) < 1:
            raise ValueError("max_open_episodes, max_anonymous_episodes, max_body_bytes and "
                             "cpu_threads must be >= 1")


@dataclass
class Prepared:
    """A request turned into what to sample and how to record it."""

    id: str
    request: ChatRequest
    episode_id: str
    """The client's episode id, or (anonymous) the completion id."""
    mismatch: bool
    """The history did not match (counted on the episode when the call is recorded)."""
    rendered: list[Message]
    tools: list[dict[str, Any]]
    context: list[int]
    parent: Link | None
    forced: str
    params: SamplingParams
    started_at: float = field(default_factory=time.time)


def forced_opening(tool_choice: str) -> str:
    if tool_choice in ("auto", "none"):
        return ""
    if tool_choice == "required":
        return OPEN
    return OPEN + '{"name": ' + json.dumps(tool_choice) + ', "arguments": '


def _stop_at(text: str, stops: Sequence[str]) -> str:
    """Text up to the first user stop sequence (OpenAI leaves the stop out)."""
    cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
    return text if cut < 0 else text[:cut]


def max_token_bytes(tokenizer: Any) -> int:
    """The most UTF-8 bytes one token adds to a decoded text (+1: a tokenizer may drop a
    lone token's leading space that it keeps inside a text)."""
    pieces = tokenizer.batch_decode([[i] for i in range(len(tokenizer))],
                                    skip_special_tokens=False)
    return max(len(p.encode("utf-8", "replace")) for p in pieces) + 1


class Engine:
    """`sampler` defaults to the transformers sampler over `policy.model` (pass another
    Sampler to serve from elsewhere); `reward` scores episodes finished without one."""

    def __init__(self, policy: Policy, config: ServeConfig | None = None,
                 reward: RewardFn | None = None, sampler: Sampler | None = None) -> None:
        self.policy = policy
        self.config = config or ServeConfig()
        self.renderer = ChatRenderer(policy.tokenizer)
        self.recorder = Recorder(self.renderer, self.config.on_mismatch, reward,
                                 self.config.max_open_episodes,
                                 self.config.max_anonymous_episodes)
        self.cpu = ThreadPoolExecutor(self.config.cpu_threads,
                                      thread_name_prefix="tracerl-serve-cpu")
        """Parsing, rendering and tokenizing requests run here, never on the event loop
        (a large request must not stall the others, issue 32)."""
        self.policy_version = 0
        if sampler is None:
            sampler = TransformersSampler(policy.model, policy.pad_id,
                                          tokenizer=policy.tokenizer, merge_lora=True)
        self.batcher = Batcher(sampler, self.config.max_rows, lambda: self.policy_version,
                               self.config.batch_window_s)
        limit = self.config.context_limit or getattr(
            policy.model.config, "max_position_embeddings", 0) or 2048
        self.context_limit = int(limit)
        self.max_token_bytes = max_token_bytes(policy.tokenizer)

    def close(self) -> None:
        """Stop the sampler thread (the engine serves no more requests)."""
        self.batcher.close()
        self.cpu.shutdown(wait=False, cancel_futures=True)

    async def offload(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` on the CPU threads, awaited from the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self.cpu, fn, *args)

    @property
    def fingerprint(self) -> str:
        return f"tracerl-v{self.policy_version}"

    # -- request -> context ---------------------------------------------------------------
    def prepare(self, req: ChatRequest) -> Prepared:
        if req.model != self.config.model_name:
            raise APIError(404, f"The model '{req.model}' does not exist; this server serves "
                                f"'{self.config.model_name}'", param="model",
                           code="model_not_found")
        cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        describe = self.config.describe_tools and req.tool_choice != "none"
        tools = [dict(t) for t in req.tools] if describe else []
        forced = forced_opening(req.tool_choice)
        episode_id = req.episode_id or cid
        if sum(len(m.content) for m in req.messages) > self.context_limit:
            self._check_size(self.renderer.render(as_rendered(req.messages),
                                                  add_generation_prompt=True, tools=tools))
        parent, reason = find_parent(self.recorder.calls(episode_id), req.messages)
        rendered, context = self._continue(parent, req, tools) if parent else ([], [])
        if parent is not None and not context:
            parent, reason = None, "the chat template does not extend the recorded ids"
        if reason is not None and self.config.on_mismatch == "reject":
            episode = self.recorder.get(episode_id)
            if episode is not None:
                self.recorder.mismatch(episode)
            raise APIError(409, f"history mismatch in episode {episode_id!r}: {reason}",
                           param="messages", code="history_mismatch")
        if parent is None:
            rendered = as_rendered(req.messages)
            text = self.renderer.render(rendered, add_generation_prompt=True, tools=tools)
            self._check_size(text)
            context = self.renderer.encode(text)
        if forced:
            context = context + self.renderer.encode(forced)
        room = self.context_limit - len(context)
        if room < 1:
            raise APIError(400, f"This model's maximum context length is {self.context_limit} "
                                f"tokens; the messages take {len(context)}", param="messages",
                           code="context_length_exceeded")
        budget = min(req.max_tokens or self.config.default_max_tokens, room)
        params = SamplingParams(req.temperature, req.top_p, budget, self.policy.stop_ids,
                                self.renderer.stop_strings + req.stop)
        return Prepared(cid, req, episode_id, reason is not None, rendered, tools, context,
                        parent, forced, params)

    def _check_size(self, text: str) -> None:
        """400 when `text` surely exceeds the context (see the module docstring)."""
        size = len(text.encode("utf-8", "replace"))
        if size > self.context_limit * self.max_token_bytes:
            raise APIError(400, f"This model's maximum context length is {self.context_limit} "
                                f"tokens; the messages take at least "
                                f"{size // self.max_token_bytes} ({size} bytes)",
                           param="messages", code="context_length_exceeded")

    def _continue(self, parent: Link, req: ChatRequest, tools: list[dict[str, Any]]
                  ) -> tuple[list[Message], list[int]]:
        """The rendered messages and context ids of a request that continues `parent`;
        empty ids when the template does not extend the recorded text."""
        call, k = parent.call, parent.choice
        text = call.texts[k]
        rendered = [*call.rendered, Message("assistant", self.renderer.content_of(text)),
                    *req.messages[len(call.messages) + 1:]]
        try:
            delta = self.renderer.observation_ids(call.rendered, text, rendered, final=False,
                                                  tools=tools)
        except TemplateMismatchError:
            return rendered, []
        return rendered, call.context + call.samples[k].ids + delta

    # -- samples -> replies ---------------------------------------------------------------
    def choice(self, p: Prepared, sample: Sample, index: int) -> Choice:
        text = p.forced + self.renderer.decode(sample.ids)
        content = _stop_at(self.renderer.content_of(text), p.request.stop)
        tokens = tuple(self.renderer.decode([i]) for i in sample.ids) \
            if p.request.logprobs else ()
        finish = "length" if sample.finish == "length" else "stop"
        if p.request.tools and p.request.tool_choice != "none":
            parsed = parse_tool_calls(content)
            if parsed.calls and not parsed.malformed:
                calls = tuple(replace(c, id=f"call_{p.id[9:21]}_{index}_{i}")
                              for i, c in enumerate(parsed.calls))
                return Choice(parsed.content, calls, "tool_calls", tokens,
                              tuple(sample.logprobs))
        return Choice(content, (), finish, tokens, tuple(sample.logprobs))

    def record(self, p: Prepared, samples: list[Sample], version: int,
               replies: list[Message | None]) -> Call:
        """Record a sampled call (its episode is created now, if new), unless it is
        anonymous and record_anonymous is off."""
        call = Call(id=p.id, messages=p.request.messages, rendered=p.rendered, tools=p.tools,
                    context=p.context, parent=p.parent, samples=samples,
                    texts=[p.forced + self.renderer.decode(s.ids) for s in samples],
                    replies=replies, policy_version=version, started_at=p.started_at,
                    ended_at=time.time())
        anonymous = p.request.episode_id is None
        if anonymous and not self.config.record_anonymous:
            with self.recorder.lock:
                self.recorder.stats.unrecorded += 1
            return call
        self.recorder.add(p.episode_id, p.request.task_id, call, anonymous, p.mismatch)
        return call

    async def complete(self, req: ChatRequest) -> dict[str, Any]:
        p = await self.offload(self.prepare, req)
        samples, version = await self.batcher.generate(p.context, p.params, req.n)
        choices = [self.choice(p, s, i) for i, s in enumerate(samples)]
        self.record(p, samples, version,
                    [Message("assistant", c.content, tool_calls=c.calls) for c in choices])
        return completion_body(p.id, req.model, choices, len(p.context),
                               sum(len(s.ids) for s in samples), req.logprobs, self.fingerprint)

    async def stream(self, p: Prepared) -> AsyncIterator[dict[str, Any]]:
        """Chunks of a streamed completion (`prepare` it first, so that errors come
        before the stream starts). Content is sent as it is sampled, held back while it
        may be the start of a tool call or of a stop; tool calls go out whole at the end.
        If the client leaves, the call is still recorded, its replies marked undelivered."""
        req, loop = p.request, asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[int, int]] = asyncio.Queue()

        def on_token(choice: int, token: int, _logprob: float) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (choice, token))

        ids: list[list[int]] = [[] for _ in range(req.n)]
        sent = [""] * req.n
        delivered = False
        task = asyncio.ensure_future(self.batcher.generate(p.context, p.params, req.n, on_token))
        try:
            for i in range(req.n):
                yield self._chunk(p, i, {"role": "assistant", "content": ""})
            while not (task.done() and queue.empty()):
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    continue
                choice, token = getter.result()
                ids[choice].append(token)
                piece = self._safe_prefix(p, ids[choice])[len(sent[choice]):]
                if piece:
                    sent[choice] += piece
                    yield self._chunk(p, choice, {"content": piece})
            samples, version = task.result()
            choices = [self.choice(p, s, i) for i, s in enumerate(samples)]
            for i, c in enumerate(choices):
                rest = c.content[len(sent[i]):] if c.content.startswith(sent[i]) else ""
                delta: dict[str, Any] = {"content": rest} if rest else {}
                if c.calls:
                    delta["tool_calls"] = tool_call_deltas(c.calls)
                yield self._chunk(p, i, delta, c.finish_reason)
            if req.include_usage:
                yield chunk_body(p.id, req.model, self.fingerprint, None, usage_of=usage(
                    len(p.context), sum(len(s.ids) for s in samples)))
            delivered = True
        finally:
            if task.done() and not task.cancelled() and task.exception() is None:
                samples, version = task.result()
                replies: list[Message | None] = [None] * len(samples)
                if delivered:
                    replies = [Message("assistant", sent[i] + (c.content[len(sent[i]):]
                                       if c.content.startswith(sent[i]) else ""),
                                       tool_calls=c.calls) for i, c in enumerate(choices)]
                self.record(p, samples, version, replies)
            elif not task.done():
                task.add_done_callback(lambda t: self._record_late(p, t))

    def _record_late(self, p: Prepared, task: asyncio.Future[tuple[list[Sample], int]]) -> None:
        """A stream whose client left before sampling ended: record it as undelivered."""
        if not task.cancelled() and task.exception() is None:
            samples, version = task.result()
            self.record(p, samples, version, [None] * len(samples))

    def _safe_prefix(self, p: Prepared, ids: list[int]) -> str:
        """The content that can be sent now: the text so far, up to a tool call's opening
        and without a tail that may still become a stop or an opening."""
        text = p.forced + self.renderer.decode(ids)
        if p.request.tools and p.request.tool_choice != "none" and OPEN in text:
            text = text[:text.index(OPEN)]
        elif text.endswith("\ufffd"):  # half a UTF-8 character
            return ""
        marks = [OPEN, *self.renderer.stop_strings, *p.request.stop]
        for m in marks:
            if m in text:
                text = text[:text.index(m)]
        for m in marks:
            for k in range(min(len(m) - 1, len(text)), 0, -1):
                if text.endswith(m[:k]):
                    return text[:-k]
        return text

    def _chunk(self, p: Prepared, index: int, delta: dict[str, Any],
               finish: str | None = None) -> dict[str, Any]:
        return chunk_body(p.id, p.request.model, self.fingerprint, index, delta, finish)

"""The two models of a search, metered and cached: the task model (a Sampler the
RolloutRunner drives) and the teacher (chat replies for the optimizers).

Either is a local transformers model (a directory, a zoo name such as `smollm2-135m`,
or `tiny`) or an OpenAI-compatible endpoint (base URL, model name, key from an
environment variable). Every call goes through the run's `ResponseCache` and `Ledger`:
a cached reply costs nothing; a new one is reserved at its worst case before it is
made (so the budget is never exceeded) and charged at its real size after.

A local sampler is reseeded before every uncached batch from the batch's own keys, so
a reply depends only on what was asked: a resumed search gets the same replies for the
same requests, cached or not.

An endpoint task model is driven through `/completions` with the context decoded by a
local tokenizer of the same model (the runner renders prompts with its chat template),
and the reply is encoded back with it. That re-tokenises sampled text, which training
forbids (token-in, token-out); a search only scores the text, so it is acceptable here,
and an optimized prompt is text either way.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any

from transformers import PreTrainedTokenizerBase

from tracerl.optimize.budget import Ledger
from tracerl.optimize.cache import ResponseCache, cache_key
from tracerl.optimize.teacher import TeacherSettings
from tracerl.policy.model import Policy
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import Sample, Sampler, SamplingParams
from tracerl.rollout.render import ChatRenderer
from tracerl.types import Message
from tracerl.util.http import EndpointError, OpenAIHTTPClient, first_message_text


def _settings(params: SamplingParams, budget: int) -> list[Any]:
    return [params.temperature, params.top_p, budget, list(params.stop_ids),
            list(params.stop_strings)]


def _seed_of(keys: Sequence[str]) -> int:
    return int(hashlib.sha256("".join(keys).encode()).hexdigest()[:15], 16)


class MeteredSampler:
    """A Sampler that answers from the cache when it can and charges the ledger for the
    rest (one call per context continued; tokens = context + sampled ids)."""

    def __init__(self, inner: Sampler, model_id: str, cache: ResponseCache,
                 ledger: Ledger) -> None:
        self.inner, self.model_id, self.cache, self.ledger = inner, model_id, cache, ledger

    def generate(self, contexts: list[list[int]], params: SamplingParams,
                 budgets: list[int] | None = None) -> list[Sample]:
        budgets = budgets or [params.max_new_tokens] * len(contexts)
        seen: dict[tuple[int, ...], int] = {}
        keys = []
        for ctx, budget in zip(contexts, budgets, strict=True):
            replica = seen.get(tuple(ctx), 0)
            seen[tuple(ctx)] = replica + 1
            keys.append(cache_key(self.model_id, ctx, _settings(params, budget), replica))
        out: list[Sample | None] = []
        for key in keys:
            hit = self.cache.get(key)
            out.append(None if hit is None else Sample(hit["ids"], hit["logprobs"],
                                                       hit["finish"]))
        misses = [i for i, s in enumerate(out) if s is None]
        self.ledger.charge(0, 0, cached_calls=len(contexts) - len(misses))
        if misses:
            self.ledger.reserve(len(misses), sum(len(contexts[i]) + budgets[i] for i in misses))
            generator = getattr(self.inner, "generator", None)
            if generator is not None:
                generator.manual_seed(_seed_of([keys[i] for i in misses]))
            fresh = self.inner.generate([contexts[i] for i in misses], params,
                                        [budgets[i] for i in misses])
            for i, s in zip(misses, fresh, strict=True):
                out[i] = s
                self.cache.put(keys[i], self.model_id,
                               {"ids": s.ids, "logprobs": s.logprobs, "finish": s.finish})
            self.ledger.charge(len(misses), sum(len(contexts[i]) + len(out[i].ids)  # type: ignore[union-attr]
                                                for i in misses))
        return [s for s in out if s is not None]


class CompletionsSampler:
    """A Sampler over an OpenAI-compatible `/completions` endpoint (see module doc)."""

    def __init__(self, client: OpenAIHTTPClient, model: str,
                 tokenizer: PreTrainedTokenizerBase) -> None:
        self.client, self.model = client, model
        self.renderer = ChatRenderer(tokenizer)

    def generate(self, contexts: list[list[int]], params: SamplingParams,
                 budgets: list[int] | None = None) -> list[Sample]:
        budgets = budgets or [params.max_new_tokens] * len(contexts)
        return [self._one(ctx, params, b) for ctx, b in zip(contexts, budgets, strict=True)]

    def _one(self, context: list[int], params: SamplingParams, budget: int) -> Sample:
        body = {"model": self.model, "prompt": self.renderer.decode(context),
                "max_tokens": budget, "temperature": params.temperature,
                "top_p": params.top_p, "stop": list(params.stop_strings)[:4]}
        response = self.client.post("/completions", body)
        try:
            choice = response["choices"][0]
            text, reason = str(choice.get("text") or ""), choice.get("finish_reason")
        except (KeyError, IndexError, TypeError) as exc:
            raise EndpointError(f"response has no choices[0].text: {response!r:.300}") from exc
        if reason == "stop":  # the server strips the stop string; put back the one it was
            text += _closing_stop(text, params.stop_strings)
        ids = self.renderer.encode(text)[:budget] or self.renderer.encode(self.renderer.turn_end)
        return Sample(ids, [0.0] * len(ids), "stop" if reason == "stop" else "length")


def _closing_stop(text: str, stops: Sequence[str]) -> str:
    """The stop string a stopped reply ended at: the tool-call close when a call is open,
    else the turn end (the last stop string)."""
    if not stops:
        return ""
    opened = text.rfind("<tool_call>") > text.rfind("</tool_call>")
    return stops[0] if opened and len(stops) > 1 else stops[-1]


class LocalTeacher:
    """A local transformers model as teacher, sampled through a MeteredSampler."""

    def __init__(self, policy: Policy, model_id: str, cache: ResponseCache, ledger: Ledger,
                 seed: int = 0) -> None:
        self.name = model_id
        self.renderer = ChatRenderer(policy.tokenizer)
        self.stop_ids = (policy.turn_end_id,)
        inner = TransformersSampler(policy.model, policy.pad_id, seed=seed,
                                    tokenizer=policy.tokenizer)
        self.sampler = MeteredSampler(inner, f"teacher:{model_id}", cache, ledger)

    def reply(self, messages: Sequence[Message], settings: TeacherSettings,
              replica: int = 0) -> str:
        ids = self.renderer.prompt_ids(list(messages))
        params = SamplingParams(settings.temperature, 1.0, settings.max_tokens,
                                self.stop_ids, (self.renderer.turn_end,))
        # `replica` asks for a distinct reply to the same request (several proposals).
        contexts = [ids] * (replica + 1)
        return self.renderer.readable(self.sampler.generate(contexts, params)[-1].ids).strip()


class EndpointTeacher:
    """An OpenAI-compatible chat endpoint as teacher. The worst case reserved before a
    call counts the prompt's UTF-8 bytes as tokens (no BPE token is shorter than a
    byte) plus a margin per message for the template, so even without the server's
    tokenizer the budget holds; the charge is the server's reported usage."""

    def __init__(self, client: OpenAIHTTPClient, model: str, cache: ResponseCache,
                 ledger: Ledger) -> None:
        self.client, self.model, self.cache, self.ledger = client, model, cache, ledger
        self.name = f"{client.base_url}#{model}"

    def reply(self, messages: Sequence[Message], settings: TeacherSettings,
              replica: int = 0) -> str:
        chat = [m.to_openai() for m in messages]
        key = cache_key(self.name, chat, [settings.max_tokens, settings.temperature], replica)
        hit = self.cache.get(key)
        if hit is not None:
            self.ledger.charge(0, 0, cached_calls=1)
            return str(hit)
        # Content bytes bound its tokens; the template's role markers get a margin each.
        worst = sum(len(m.content.encode()) + 16 for m in messages) + settings.max_tokens
        self.ledger.reserve(1, worst)
        response = self.client.chat.completions.create(
            model=self.model, messages=chat, max_tokens=settings.max_tokens,
            temperature=settings.temperature)
        text = first_message_text(response).strip()
        usage = response.get("usage") or {}
        used = int(usage.get("total_tokens") or worst)
        self.ledger.charge(1, used)
        self.cache.put(key, self.name, text)
        return text


def endpoint_client(url: str, key_env: str) -> OpenAIHTTPClient:
    """A client for `url` whose key is read from the environment variable `key_env`
    (empty: no key; a named variable that is unset is an error, not a silent no-key)."""
    if key_env and key_env not in os.environ:
        raise ValueError(f"the API key variable {key_env!r} is not set in the environment "
                         "(set it, or give an empty *_key_env for an endpoint without a key)")
    return OpenAIHTTPClient(url, api_key=os.environ.get(key_env, "") if key_env else "")

"""The HTTP surface (Starlette): OpenAI's routes, plus episodes, stats and training.

    GET  /v1/models                        the served model
    POST /v1/chat/completions              OpenAI chat completions (stream or not)
    POST /v1/episodes/{episode_id}/reward  {"reward": 1.0} (null: unjudged); {} scores the
                                           episode with the server's reward function
    GET  /v1/episodes/{episode_id}         an open episode: calls, tokens, mismatches
    GET  /v1/stats                         counters: calls, batches, mismatches, version
    POST /v1/train                         one RL update on the finished episodes
                                           (only when serving with a learner)

Every error is an OpenAI error body (`{"error": {"message", "type", "param", "code"}}`)
with the status OpenAI uses: 400 bad request, 404 unknown model or route, 405, 409
history mismatch (with on_mismatch=reject), 413 a body over `max_body_bytes`, 500 a
failure inside sampling or an update (the server goes on; nothing was changed).

Request bodies are read under the size limit and decoded, checked, rendered and
tokenized on the engine's CPU threads (tracerl.serve.body, Engine.offload), never on
the event loop, so one large request cannot stall the others. Every route validates
before it changes anything: a refused request leaves no episode and no reward behind.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import asdict
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tracerl.rewards.base import reward_fault
from tracerl.serve import body
from tracerl.serve.api import ChatRequest, parse_request
from tracerl.serve.engine import Engine, Prepared
from tracerl.serve.errors import APIError, bad
from tracerl.serve.learner import ServedLearner

log = logging.getLogger(__name__)
STARTED = int(time.time())


def _error(e: APIError) -> JSONResponse:
    return JSONResponse(e.body(), status_code=e.status)


def _no_episode(episode_id: str) -> APIError:
    return APIError(404, f"no open episode {episode_id!r} (unknown, already finished, or "
                         "forgotten)", param="episode_id", code="episode_not_found")


class Routes:
    """The handlers over one engine (and its learner, if it trains)."""

    def __init__(self, engine: Engine, learner: ServedLearner | None) -> None:
        self.engine = engine
        self.learner = learner
        self.name = engine.config.model_name

    async def _json(self, request: Request) -> Any:
        raw = await body.read(request, self.engine.config.max_body_bytes)
        return await self.engine.offload(body.decode, raw)

    def _card(self) -> dict[str, Any]:
        return {"id": self.name, "object": "model", "created": STARTED, "owned_by": "tracerl"}

    async def models(self, _: Request) -> Response:
        return JSONResponse({"object": "list", "data": [self._card()]})

    async def model(self, request: Request) -> Response:
        wanted = request.path_params["model"]
        if wanted != self.name:
            raise APIError(404, f"The model '{wanted}' does not exist", param="model",
                           code="model_not_found")
        return JSONResponse(self._card())

    def _parse(self, raw: bytes, headers: Mapping[str, str]) -> ChatRequest:
        return parse_request(body.decode(raw), headers, self.engine.config.max_n)

    async def chat(self, request: Request) -> Response:
        raw = await body.read(request, self.engine.config.max_body_bytes)
        req = await self.engine.offload(self._parse, raw, dict(request.headers))
        if not req.stream:
            return JSONResponse(await self.engine.complete(req))
        prepared = await self.engine.offload(self.engine.prepare, req)  # errors get a status
        return StreamingResponse(self._events(prepared), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    async def _events(self, prepared: Prepared) -> AsyncIterator[str]:
        try:
            async for chunk in self.engine.stream(prepared):
                yield f"data: {json.dumps(chunk)}\n\n"
        except Exception as e:  # the status is sent: report in-band, as OpenAI does
            log.exception("stream failed")
            err = APIError(500, f"sampling failed: {type(e).__name__}: {e}",
                           kind="server_error")
            yield f"data: {json.dumps(err.body())}\n\n"
        yield "data: [DONE]\n\n"

    async def reward(self, request: Request) -> Response:
        """Validated in full before the episode is closed: a refused post keeps it open."""
        episode_id = request.path_params["episode_id"]
        payload = await self._json(request)
        if not isinstance(payload, dict):
            raise bad("the body must be a JSON object like {'reward': 1.0}")
        value = payload.get("reward")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise bad(f"'reward' must be a number or null, got {value!r}", "reward")
        fault = reward_fault(value)
        if fault is not None:
            raise bad(f"'reward' {value!r} is refused: {fault}", "reward", "invalid_reward")
        recorder = self.engine.recorder
        if recorder.get(episode_id) is None:
            raise _no_episode(episode_id)
        use_fn = "reward" not in payload
        try:
            trajs = await self.engine.offload(recorder.finish, episode_id, value, use_fn)
        except KeyError:  # finished by a concurrent post meanwhile
            raise _no_episode(episode_id) from None
        except ValueError as e:
            raise bad(str(e), "reward") from e
        return JSONResponse({"episode_id": episode_id, "trajectories": len(trajs),
                             "rewards": [t.outcome_reward for t in trajs]})

    async def episode(self, request: Request) -> Response:
        episode_id = request.path_params["episode_id"]
        ep = self.engine.recorder.get(episode_id)
        if ep is None:
            raise _no_episode(episode_id)
        return JSONResponse({
            "episode_id": ep.id, "task_id": ep.task_id, "mismatches": ep.mismatches,
            "dropped": ep.dropped,
            "calls": [{"id": c.id, "parent": c.parent.call.id if c.parent else None,
                       "prompt_tokens": len(c.context),
                       "completion_tokens": [len(s.ids) for s in c.samples],
                       "policy_version": c.policy_version} for c in list(ep.calls)]})

    async def stats(self, _: Request) -> Response:
        engine = self.engine
        batch = asdict(engine.batcher.stats)
        batch["errors"] = len(batch["errors"])
        with engine.recorder.lock:
            recorder = {**asdict(engine.recorder.stats), "open": len(engine.recorder.open),
                        "open_anonymous": len(engine.recorder.anonymous)}
        out = {"policy_version": engine.policy_version, "recorder": recorder,
               "batcher": batch, "ready_trajectories": len(engine.recorder.ready)}
        if self.learner is not None:
            out["learner"] = asdict(self.learner.stats)
        return JSONResponse(out)

    async def train(self, request: Request) -> Response:
        if self.learner is None:
            raise APIError(404, "this server does not train (start it with --train)",
                           code="training_disabled")
        payload = await self._json(request)
        least = payload.get("min_trajectories", 1) if isinstance(payload, dict) else None
        if isinstance(least, bool) or not isinstance(least, int) or least < 1:
            raise bad("the body must be {} or {'min_trajectories': k} with k >= 1",
                      "min_trajectories")
        try:  # a thread of its own: the CPU threads keep serving requests meanwhile
            result = await asyncio.get_running_loop().run_in_executor(
                None, self.learner.step, least)
        except Exception as e:  # the learner restored weights, version and episodes
            log.exception("update failed")
            raise APIError(500, f"the update failed and was rolled back (weights, version "
                                f"and episodes as before): {type(e).__name__}: {e}",
                           kind="server_error") from e
        if result is None:
            return JSONResponse({"step": self.learner.steps, "updated": False,
                                 "reason": "not enough finished episodes"})
        return JSONResponse(result.reply())

    def routes(self) -> list[Route]:
        return [
            Route("/v1/models", self.models, methods=["GET"]),
            Route("/v1/models/{model:path}", self.model, methods=["GET"]),
            Route("/v1/chat/completions", self.chat, methods=["POST"]),
            Route("/v1/episodes/{episode_id:path}/reward", self.reward, methods=["POST"]),
            Route("/v1/episodes/{episode_id:path}", self.episode, methods=["GET"]),
            Route("/v1/stats", self.stats, methods=["GET"]),
            Route("/v1/train", self.train, methods=["POST"]),
        ]


async def _api_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, APIError)
    return _error(exc)


async def _http_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
    return _error(APIError(exc.status_code, str(exc.detail), kind=kind))


async def _server_error(_: Request, exc: Exception) -> Response:
    log.exception("request failed")
    return _error(APIError(500, f"{type(exc).__name__}: {exc}", kind="server_error"))


def build_app(engine: Engine, learner: ServedLearner | None = None) -> Starlette:
    """The ASGI app serving `engine` (and training with `learner`, if given)."""
    return Starlette(routes=Routes(engine, learner).routes(), exception_handlers={
        APIError: _api_error, HTTPException: _http_error, Exception: _server_error})

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
history mismatch (with on_mismatch=reject), 500 a failure inside sampling (the server
goes on).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tracerl.serve.api import APIError, bad, parse_request
from tracerl.serve.engine import Engine
from tracerl.serve.learner import ServedLearner

log = logging.getLogger(__name__)
STARTED = int(time.time())


def _error(e: APIError) -> JSONResponse:
    return JSONResponse(e.body(), status_code=e.status)


async def _json(request: Request) -> Any:
    raw = await request.body()
    try:
        return json.loads(raw) if raw.strip() else {}
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise bad(f"the request body is not valid JSON: {e}") from e


def build_app(engine: Engine, learner: ServedLearner | None = None) -> Starlette:
    """The ASGI app serving `engine` (and training with `learner`, if given)."""
    name = engine.config.model_name

    async def models(_: Request) -> Response:
        card = {"id": name, "object": "model", "created": STARTED, "owned_by": "tracerl"}
        return JSONResponse({"object": "list", "data": [card]})

    async def model(request: Request) -> Response:
        wanted = request.path_params["model"]
        if wanted != name:
            raise APIError(404, f"The model '{wanted}' does not exist", param="model",
                           code="model_not_found")
        return JSONResponse({"id": name, "object": "model", "created": STARTED,
                             "owned_by": "tracerl"})

    async def chat(request: Request) -> Response:
        req = parse_request(await _json(request), request.headers, engine.config.max_n)
        if not req.stream:
            return JSONResponse(await engine.complete(req))
        prepared = engine.prepare(req)  # errors before the stream starts get a status

        async def events() -> AsyncIterator[str]:
            try:
                async for chunk in engine.stream(prepared):
                    yield f"data: {json.dumps(chunk)}\n\n"
            except Exception as e:  # the status is sent: report in-band, as OpenAI does
                log.exception("stream failed")
                err = APIError(500, f"sampling failed: {type(e).__name__}: {e}",
                               kind="server_error")
                yield f"data: {json.dumps(err.body())}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    async def reward(request: Request) -> Response:
        episode_id = request.path_params["episode_id"]
        body = await _json(request)
        if not isinstance(body, dict):
            raise bad("the body must be a JSON object like {'reward': 1.0}")
        value = body.get("reward")
        if "reward" in body and value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float)):
            raise bad(f"'reward' must be a number or null, got {value!r}", "reward")
        try:
            trajs = engine.recorder.finish(episode_id, None if value is None else float(value),
                                           use_reward_fn="reward" not in body)
        except KeyError:
            raise APIError(404, f"no open episode {episode_id!r} (unknown, already finished, "
                                "or forgotten)", param="episode_id",
                           code="episode_not_found") from None
        except ValueError as e:
            raise bad(str(e), "reward") from e
        return JSONResponse({"episode_id": episode_id, "trajectories": len(trajs),
                             "rewards": [t.outcome_reward for t in trajs]})

    async def episode(request: Request) -> Response:
        episode_id = request.path_params["episode_id"]
        ep = engine.recorder.get(episode_id)
        if ep is None:
            raise APIError(404, f"no open episode {episode_id!r}", param="episode_id",
                           code="episode_not_found")
        return JSONResponse({
            "episode_id": ep.id, "task_id": ep.task_id, "mismatches": ep.mismatches,
            "dropped": ep.dropped,
            "calls": [{"id": c.id, "parent": c.parent.call.id if c.parent else None,
                       "prompt_tokens": len(c.context),
                       "completion_tokens": [len(s.ids) for s in c.samples],
                       "policy_version": c.policy_version} for c in ep.calls]})

    async def stats(_: Request) -> Response:
        batch = asdict(engine.batcher.stats)
        batch["errors"] = len(batch["errors"])
        return JSONResponse({"policy_version": engine.policy_version,
                             "recorder": asdict(engine.recorder.stats), "batcher": batch,
                             "ready_trajectories": len(engine.recorder.ready)})

    async def train(request: Request) -> Response:
        if learner is None:
            raise APIError(404, "this server does not train (start it with --train)",
                           code="training_disabled")
        body = await _json(request)
        least = body.get("min_trajectories", 1) if isinstance(body, dict) else None
        if isinstance(least, bool) or not isinstance(least, int) or least < 1:
            raise bad("the body must be {} or {'min_trajectories': k} with k >= 1",
                      "min_trajectories")
        result = await asyncio.get_running_loop().run_in_executor(None, learner.step, least)
        if result is None:
            return JSONResponse({"step": learner.steps, "updated": False,
                                 "reason": "not enough finished episodes"})
        return JSONResponse({"updated": True, **result.record()})

    async def api_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, APIError)
        return _error(exc)

    async def http_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
        return _error(APIError(exc.status_code, str(exc.detail), kind=kind))

    async def server_error(_: Request, exc: Exception) -> Response:
        log.exception("request failed")
        return _error(APIError(500, f"{type(exc).__name__}: {exc}", kind="server_error"))

    routes = [
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/models/{model:path}", model, methods=["GET"]),
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/episodes/{episode_id:path}/reward", reward, methods=["POST"]),
        Route("/v1/episodes/{episode_id:path}", episode, methods=["GET"]),
        Route("/v1/stats", stats, methods=["GET"]),
        Route("/v1/train", train, methods=["POST"]),
    ]
    return Starlette(routes=routes, exception_handlers={
        APIError: api_error, HTTPException: http_error, Exception: server_error})

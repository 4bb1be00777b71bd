"""A minimal client for OpenAI-compatible chat endpoints (vLLM, llama.cpp, OpenAI, ...).

Judges need one call, `POST {base_url}/chat/completions`, so we use urllib instead of
taking the `openai` package as a dependency. The object shape matches the SDK's
(`client.chat.completions.create(model=..., messages=...)`, returning a dict in the
response's JSON layout), so `tracerl.trace.instrument_openai` can wrap it too.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any


class EndpointError(RuntimeError):
    """The endpoint could not be reached or answered with an error (an infra failure)."""


@dataclass(frozen=True)
class _Completions:
    client: OpenAIHTTPClient

    def create(self, **kwargs: Any) -> dict[str, Any]:
        return self.client.post("/chat/completions", kwargs)


@dataclass(frozen=True)
class _Chat:
    completions: _Completions


class OpenAIHTTPClient:
    """`base_url` like `http://127.0.0.1:8000/v1`; the key defaults to $OPENAI_API_KEY."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout_s: float = 60.0):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.timeout_s = timeout_s
        self.chat = _Chat(_Completions(self))

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.base_url + path, data=json.dumps(body).encode(),
                                         headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return dict(json.loads(response.read()))
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:500]
            raise EndpointError(f"{self.base_url}{path}: HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, json.JSONDecodeError) as exc:
            raise EndpointError(f"{self.base_url}{path}: {exc}") from exc


def first_message_text(response: dict[str, Any]) -> str:
    """The text of the first choice, or a clear error when the response has none."""
    try:
        return str(response["choices"][0]["message"]["content"] or "")
    except (KeyError, IndexError, TypeError) as exc:
        raise EndpointError(
            f"response has no choices[0].message.content: {response!r:.300}"
        ) from exc

"""Request bodies: read under a size limit, decoded as strict JSON off the event loop.

Threat model: a client (hostile or careless) sends a body that is huge, deeply nested,
not UTF-8, holds JSON's non-standard NaN / Infinity literals or a lone UTF-16 surrogate
escape ("\\ud800"). Each is a 400 or a 413 with an OpenAI error body, decided before
anything is recorded:

- size: a Content-Length above the limit is refused before a byte is read; a body sent
  without one (chunked) is read only up to the limit. 413 `request_too_large`.
- depth: Python's decoder raises RecursionError past about 1,000 levels (a 100k-deep
  array was a 500 before, issue 32): a 400.
- NaN / Infinity literals: refused (they are not JSON, and a NaN temperature or reward
  poisons what follows); a number too large for a float (1e400) decodes to inf and is
  refused by the field that reads it.
- lone surrogates: valid JSON escapes that no UTF-8 text can hold; the tokenizer and
  the reply encoder fail on them, so they are refused here (a regex over the raw bytes
  finds candidate escapes; only then is the decoded value re-encoded to check).

`decode` is plain CPU work: the app runs it on the engine's CPU threads.
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request

from tracerl.serve.errors import APIError, bad

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def too_large(limit: int) -> APIError:
    return APIError(413, f"the request body exceeds this server's limit of {limit} bytes "
                         "(tracerl serve --max-body-mb)", code="request_too_large")


async def read(request: Request, limit: int) -> bytes:
    """The raw body, at most `limit` bytes (413 beyond, without reading the rest)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def decode(raw: bytes) -> Any:
    """The JSON value of a body ({} for an empty one), or a 400 saying what is wrong."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise bad("the request body is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:  # JSONDecodeError is a ValueError
        raise bad(f"the request body is not valid JSON: {e}") from None
    if _SURROGATE_ESCAPE.search(raw):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except (UnicodeEncodeError, RecursionError):
            raise bad("the request body holds a lone UTF-16 surrogate (an unpaired "
                      "\\ud800-\\udfff escape), which no text can hold") from None
    return value

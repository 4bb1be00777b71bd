"""OpenAI-shaped errors: `{"error": {"message", "type", "param", "code"}}` with a status.

Every refusal of the server is an APIError raised before any state changes, so a
client that gets one may fix its request and retry with nothing lost (issue 32).
"""

from __future__ import annotations

from typing import Any


class APIError(Exception):
    """An error the client gets as an OpenAI error body with this HTTP status."""

    def __init__(self, status: int, message: str, *, param: str | None = None,
                 code: str | None = None, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.kind = kind

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param,
                          "code": self.code}}


def bad(message: str, param: str | None = None, code: str | None = None) -> APIError:
    """A 400 naming the field (`param`) that was wrong."""
    return APIError(400, message, param=param, code=code)

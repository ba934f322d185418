"""What a failed call raises: `APIError`, carrying the server's `Status`, and the few questions
callers ask of one (not found? conflict? expired?).

Raised by `rest.RestClient` for any non-2xx answer and for an ERROR event inside a watch stream;
the reflector classifies them (`reflector.next_step`), controllers branch on them. Transport
failures stay aiohttp's own exceptions (`aiohttp.ClientError`, `asyncio.TimeoutError`).

    APIError(code, reason, message, status)
    ├── 404 NotFound          is_not_found()
    ├── 409 Conflict          is_conflict()   (AlreadyExists is 409 too: is_already_exists())
    ├── 410 Expired | Gone    is_expired()    → the reflector relists
    ├── 422 Invalid
    ├── 429 TooManyRequests   is_retriable()
    └── 5xx                   is_retriable()  (504 ResourceVersionTooLarge: is_too_large_resource_version())
"""

from __future__ import annotations

from typing import Any


class APIError(Exception):
    def __init__(self, code: int, reason: str, message: str, status: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code} {reason}: {message}" if reason else f"{code}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.status = status or {}

    @classmethod
    def from_status(cls, http_code: int, body: Any) -> "APIError":
        """Build one from a response body; a body that is not a Status still keeps the HTTP code."""
        if isinstance(body, dict) and body.get("kind") == "Status":
            return cls(int(body.get("code") or http_code), body.get("reason") or "", body.get("message") or "", body)
        text = body if isinstance(body, str) else repr(body)
        return cls(http_code, "", text[:500])

    @property
    def details(self) -> dict[str, Any]:
        return self.status.get("details") or {}


def is_not_found(err: BaseException) -> bool:
    return isinstance(err, APIError) and err.code == 404


def is_conflict(err: BaseException) -> bool:
    return isinstance(err, APIError) and err.code == 409 and err.reason != "AlreadyExists"


def is_already_exists(err: BaseException) -> bool:
    return isinstance(err, APIError) and err.reason == "AlreadyExists"


def is_expired(err: BaseException) -> bool:
    """410, or the reasons kube uses for a resourceVersion or continue token that is too old."""
    return isinstance(err, APIError) and (err.code == 410 or err.reason in ("Expired", "Gone"))


def is_too_large_resource_version(err: BaseException) -> bool:
    if not isinstance(err, APIError) or err.code != 504:
        return False
    return any(c.get("reason") == "ResourceVersionTooLarge" for c in err.details.get("causes") or [])


def has_cause(err: BaseException, reason: str) -> bool:
    """client-go's HasStatusCause: one of the Status details' causes has this reason
    (NamespaceTerminating: a create in a namespace being deleted)."""
    return isinstance(err, APIError) and any(c.get("reason") == reason for c in err.details.get("causes") or [])


def is_retriable(err: BaseException) -> bool:
    """The server is busy or broken for now: try the same call again later."""
    return isinstance(err, APIError) and (err.code == 429 or err.code >= 500)

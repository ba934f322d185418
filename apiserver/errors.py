"""Every error a client can see, as a Kubernetes `Status`, built in one place.

Handlers raise `APIError`; the app's error middleware turns it into the JSON response. Storage
errors (which speak keys and revisions) become API errors only through `from_storage()`. The
reasons, codes and message texts are kube-apiserver's (k8s.io/apimachinery/pkg/api/errors).

    APIError(code, reason, message, details)
    ├── 400 BadRequest            malformed body, bad selector, bad query value
    ├── 403 Forbidden             terminating namespace, immutable seeded objects
    ├── 404 NotFound              object, namespace or route not found
    ├── 405 MethodNotAllowed      verb not supported by the resource
    ├── 406 NotAcceptable         no acceptable response media type
    ├── 409 AlreadyExists|Conflict
    ├── 410 Expired|Gone          compacted revisions, stale continue tokens
    ├── 413 RequestEntityTooLarge bodies over 3 MiB
    ├── 415 UnsupportedMediaType  body format we cannot read
    ├── 422 Invalid               validation with one cause per field
    ├── 500 InternalError
    ├── 500 (no reason)           an object over etcd's 1.5 MiB limit: etcd's own text, as upstream
    ├── 503 ServiceUnavailable    the disk refused a commit
    └── 504 Timeout
"""

from __future__ import annotations

from typing import Any

from storage import errors as storage_errors


class APIError(Exception):
    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict[str, Any]:
        """The metav1.Status body, keys in Go's struct order (kind, apiVersion, metadata, status,
        message, reason, details, code) and omitempty applied, as kube-apiserver writes it."""
        status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
        if self.message:
            status["message"] = self.message
        if self.reason:
            status["reason"] = self.reason
        if self.details:
            status["details"] = _in_go_order(self.details, _DETAILS_ORDER)
            if isinstance(self.details.get("causes"), list):
                status["details"]["causes"] = [_in_go_order(c, _CAUSE_ORDER) if isinstance(c, dict) else c
                                               for c in self.details["causes"]]
        if self.code:
            status["code"] = self.code
        return status


# metav1.StatusDetails and metav1.StatusCause fields in Go's struct order (all omitempty).
_DETAILS_ORDER = ("name", "group", "kind", "uid", "causes", "retryAfterSeconds")
_CAUSE_ORDER = ("reason", "message", "field")


def _in_go_order(values: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    ordered = {key: values[key] for key in order if values.get(key)}
    ordered.update((key, value) for key, value in values.items() if key not in order)
    return ordered


def qualified(resource: str, group: str) -> str:
    """`pods` for core, `deployments.apps` otherwise: how kube names a resource in messages."""
    return f"{resource}.{group}" if group else resource


def _details(name: str, group: str, kind: str) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = kind
    return details


def not_found(resource: str, group: str, name: str) -> APIError:
    return APIError(404, "NotFound", f'{qualified(resource, group)} "{name}" not found', _details(name, group, resource))


def already_exists(resource: str, group: str, name: str) -> APIError:
    return APIError(
        409, "AlreadyExists", f'{qualified(resource, group)} "{name}" already exists', _details(name, group, resource)
    )


def conflict(resource: str, group: str, name: str, why: str) -> APIError:
    return APIError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {why}',
        _details(name, group, resource),
    )


MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"


def invalid(kind: str, group: str, name: str, causes: list[dict[str, str]]) -> APIError:
    """422 with one cause per field; `causes` are {"reason", "message", "field"} as field.Error renders."""
    joined = ", ".join(f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes)
    if len(causes) > 1:
        joined = f"[{joined}]"
    details = _details(name, group, kind)
    details["causes"] = causes
    return APIError(422, "Invalid", f'{kind}{"." + group if group else ""} "{name}" is invalid: {joined}', details)


def field_error(reason: str, field: str, message: str) -> dict[str, str]:
    return {"reason": reason, "message": message, "field": field}


def required(field: str) -> dict[str, str]:
    return field_error("FieldValueRequired", field, "Required value")


def bad_request(message: str) -> APIError:
    return APIError(400, "BadRequest", message)


def forbidden(resource: str, group: str, name: str, why: str) -> APIError:
    return APIError(403, "Forbidden", f'{qualified(resource, group)} "{name}" is forbidden: {why}', _details(name, group, resource))


def method_not_supported(action: str, resource: str, group: str) -> APIError:
    """The verb is not one the resource serves (kube's NewMethodNotSupported)."""
    return APIError(
        405,
        "MethodNotAllowed",
        f'{action} is not supported on resources of kind "{qualified(resource, group)}"',
        _details("", group, resource),
    )


def method_not_allowed() -> APIError:
    """The path exists but not for this HTTP method (a partial route match)."""
    return APIError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")


def route_not_found() -> APIError:
    return APIError(404, "NotFound", "the server could not find the requested resource")


def unsupported_media_type(content_type: str, accepted: tuple[str, ...]) -> APIError:
    return APIError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: {', '.join(accepted)}",
    )


def not_acceptable(accepted: tuple[str, ...]) -> APIError:
    return APIError(406, "NotAcceptable", f"only the following media types are accepted: {', '.join(accepted)}")


def too_large() -> APIError:
    return APIError(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")


def expired(message: str) -> APIError:
    return APIError(410, "Expired", message)


def gone(message: str) -> APIError:
    return APIError(410, "Gone", message)


def internal(message: str) -> APIError:
    return APIError(500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]})


def unavailable(message: str) -> APIError:
    return APIError(503, "ServiceUnavailable", message)


def from_storage(err: storage_errors.StorageError, resource: str, group: str, name: str) -> APIError:
    """The one translation from storage errors to API errors (kube's storage.Interpret*Error)."""
    if isinstance(err, storage_errors.KeyNotFound):
        return not_found(resource, group, name)
    if isinstance(err, storage_errors.KeyExists):
        return already_exists(resource, group, name)
    if isinstance(err, storage_errors.Conflict):
        if err.field == "uid":
            return conflict(
                resource, group, name,
                f"Precondition failed: UID in precondition: {err.expected}, UID in object meta: {err.actual}",
            )
        return conflict(resource, group, name, MODIFIED)
    if isinstance(err, storage_errors.Expired):
        return expired(
            "The provided continue parameter is too old to display a consistent list result. You can start a new "
            "list without the continue parameter, or use the continue token in this response to retrieve the "
            "remainder of the results. Continuing with the provided token results in an inconsistent list - "
            "objects that were created, modified, or deleted between the time the first chunk was returned and "
            "now may show up in the list."
        )
    if isinstance(err, storage_errors.TooOldResourceVersion):
        return expired(f"too old resource version: {err.revision} ({err.compacted})")
    if isinstance(err, storage_errors.InvalidContinue):
        return bad_request(f"continue key is not valid: {err.reason}")
    if isinstance(err, storage_errors.StorageUnavailable):
        return unavailable(f"storage is unavailable: {err}")
    if isinstance(err, storage_errors.RequestTooLarge):
        # Upstream passes etcd's gRPC error through unconverted (kubernetes#112152): ErrorToAPIStatus
        # makes it a 500 with StatusReasonUnknown (empty) and etcd's message.
        return APIError(500, "", "etcdserver: request is too large")
    return internal(str(err))

"""The Kubernetes CEL value types (Quantity, IP, CIDR, URL, Semver, authorizer) as protobuf messages.

cel-expr-python cannot carry opaque Python objects, but it type-checks and passes protobuf
messages, so each Kubernetes type is a small message built at import time from a hand-written
descriptor. Type names are cel-go's (`kubernetes.Quantity`, `net.IP`…), so `type(x)` and the
"found no matching overload" errors name them as Kubernetes does. The library modules in
`admission.cel.library` build and read these messages; `environment.py` hands `POOL` to cel.
Each message holds a canonical form only, so CEL's message equality is the semantic equality.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from cel_expr_python import cel

_STRING = descriptor_pb2.FieldDescriptorProto.TYPE_STRING
_INT64 = descriptor_pb2.FieldDescriptorProto.TYPE_INT64
_UINT32 = descriptor_pb2.FieldDescriptorProto.TYPE_UINT32
_BOOL = descriptor_pb2.FieldDescriptorProto.TYPE_BOOL
_BYTES = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
_REPEATED = descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
_OPTIONAL = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL

# package -> message -> [(field, type, repeated)]
_SCHEMA: dict[str, dict[str, list[tuple[str, int, bool]]]] = {
    "kubernetes": {
        # Exact decimal value in canonical fixed-point text ("1500000000", "0.001").
        "Quantity": [("decimal", _STRING, False)],
        # Parsed parts, so that equality ignores nothing url.URL.String() would keep.
        "URL": [
            ("scheme", _STRING, False), ("opaque", _STRING, False), ("userinfo", _STRING, False),
            ("host", _STRING, False), ("path", _STRING, False), ("raw_path", _STRING, False),
            ("raw_query", _STRING, False), ("fragment", _STRING, False),
            ("force_query", _BOOL, False),
        ],
        # Build metadata is left out on purpose: semver equality ignores it.
        "Semver": [
            ("major", _INT64, False), ("minor", _INT64, False), ("patch", _INT64, False),
            ("pre", _STRING, True),
        ],
    },
    "net": {
        "IP": [("address", _BYTES, False)],
        "CIDR": [("address", _BYTES, False), ("bits", _UINT32, False)],
    },
    "kubernetes.authorization": {
        # The principal travels inside the value, so checks need no per-request globals.
        "Authorizer": [
            ("user", _STRING, False), ("groups", _STRING, True), ("uid", _STRING, False),
        ],
        "PathCheck": [("authorizer", 0, False), ("path", _STRING, False)],
        "GroupCheck": [("authorizer", 0, False), ("group", _STRING, False)],
        "ResourceCheck": [
            ("authorizer", 0, False), ("group", _STRING, False), ("resource", _STRING, False),
            ("subresource", _STRING, False), ("namespace", _STRING, False),
            ("name", _STRING, False), ("field_selector", _STRING, False),
            ("label_selector", _STRING, False),
        ],
        "Decision": [
            ("decision", _STRING, False), ("reason", _STRING, False), ("error", _STRING, False),
        ],
    },
}


def _build_pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    for package, messages in _SCHEMA.items():
        file = descriptor_pb2.FileDescriptorProto(
            name=f"haru/cel/{package.replace('.', '/')}.proto", package=package, syntax="proto3"
        )
        for message_name, fields in messages.items():
            message = file.message_type.add(name=message_name)
            for number, (field, kind, repeated) in enumerate(fields, start=1):
                entry = message.field.add(
                    name=field, number=number, label=_REPEATED if repeated else _OPTIONAL
                )
                if kind == 0:  # a nested Authorizer
                    entry.type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
                    entry.type_name = ".kubernetes.authorization.Authorizer"
                else:
                    entry.type = kind
        pool.Add(file)
    return pool


POOL = _build_pool()


def _message(full_name: str) -> type:
    return message_factory.GetMessageClass(POOL.FindMessageTypeByName(full_name))


Quantity = _message("kubernetes.Quantity")
URL = _message("kubernetes.URL")
Semver = _message("kubernetes.Semver")
IP = _message("net.IP")
CIDR = _message("net.CIDR")
Authorizer = _message("kubernetes.authorization.Authorizer")
PathCheck = _message("kubernetes.authorization.PathCheck")
GroupCheck = _message("kubernetes.authorization.GroupCheck")
ResourceCheck = _message("kubernetes.authorization.ResourceCheck")
Decision = _message("kubernetes.authorization.Decision")

QUANTITY = cel.Type("kubernetes.Quantity")
URL_TYPE = cel.Type("kubernetes.URL")
SEMVER = cel.Type("kubernetes.Semver")
IP_TYPE = cel.Type("net.IP")
CIDR_TYPE = cel.Type("net.CIDR")
AUTHORIZER = cel.Type("kubernetes.authorization.Authorizer")
PATH_CHECK = cel.Type("kubernetes.authorization.PathCheck")
GROUP_CHECK = cel.Type("kubernetes.authorization.GroupCheck")
RESOURCE_CHECK = cel.Type("kubernetes.authorization.ResourceCheck")
DECISION = cel.Type("kubernetes.authorization.Decision")

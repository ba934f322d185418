"""The JSON forms of the messages whose Go types marshal themselves (the table's `sp` kinds).

Each function takes the message's fields by number, as the walker in `protobuf.py` collected them
(scalars as Python values, sub-messages already as JSON), and returns the JSON value the Go type's
MarshalJSON would write; None stands for Go's `null`, which the walker drops from objects.
`protobuf_schema.py` attaches one of these to each special message plan; raw JSON documents
(RawExtension, FieldsV1, apiextensions JSON) are embedded by `protobuf.py` itself.
"""

from __future__ import annotations

import datetime
from typing import Any, Callable

from apiserver.protobuf_wire import DecodeError

_EPOCH = datetime.datetime(1970, 1, 1)
_GO_ZERO_TIME_UNIX = -62135596800  # time.Time{} (0001-01-01T00:00:00Z) as Unix seconds: IsZero, JSON null
_NANOS = 1_000_000_000


def _utc(seconds: int, micros: int = 0) -> datetime.datetime:
    try:
        return _EPOCH + datetime.timedelta(seconds=seconds, microseconds=micros)
    except OverflowError:
        raise DecodeError(f"timestamp {seconds}s is outside the years 1-9999") from None


def _date_and_time(moment: datetime.datetime) -> str:
    # Formatted by hand: strftime's %Y does not zero-pad years below 1000 on glibc.
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
            f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}")


def rfc3339(fields: dict[int, Any]) -> str | None:
    """meta/v1 Time: second precision in UTC; Go's Unmarshal drops the nanos, a zero time is null."""
    if not fields:
        return None  # Go marshals the zero Time as an empty message
    seconds = fields.get(1, 0)
    if seconds == _GO_ZERO_TIME_UNIX:
        return None
    return _date_and_time(_utc(seconds)) + "Z"


def rfc3339_micro(fields: dict[int, Any]) -> str | None:
    """meta/v1 MicroTime: always six fractional digits (truncated, as Go's layout does)."""
    if not fields:
        return None
    seconds, nanos = divmod(fields.get(1, 0) * _NANOS + fields.get(2, 0), _NANOS)
    if seconds == _GO_ZERO_TIME_UNIX and nanos == 0:
        return None
    return f"{_date_and_time(_utc(seconds))}.{nanos // 1000:06d}Z"


def _fraction(value: int, digits: int) -> tuple[str, int]:
    """Go's fmtFrac: the low `digits` decimal digits of value as '.ddd' without trailing zeros."""
    value, low = divmod(value, 10**digits)
    text = f"{low:0{digits}d}".rstrip("0")
    return ("." + text if text else ""), value


def go_duration(fields: dict[int, Any]) -> str:
    """meta/v1 Duration as Go's time.Duration.String(): "1h2m3.5s", "250ms", "1.5µs", "0s"."""
    nanos = fields.get(1, 0)
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    size = abs(nanos)
    if size < _NANOS:
        for digits, unit in ((0, "ns"), (3, "µs"), (6, "ms")):
            if size < 1000 * 10**digits:
                fraction, whole = _fraction(size, digits)
                return f"{sign}{whole}{fraction}{unit}"
    fraction, seconds = _fraction(size, 9)
    minutes, seconds = divmod(seconds, 60)
    text = f"{seconds}{fraction}s"
    if minutes:
        hours, minutes = divmod(minutes, 60)
        text = f"{minutes}m{text}"
        if hours:
            text = f"{hours}h{text}"
    return sign + text


def int_or_string(fields: dict[int, Any]) -> int | str:
    """util/intstr IntOrString: {1 type, 2 intVal, 3 strVal} → a number or a string."""
    kind = fields.get(1, 0)
    if kind == 0:
        return fields.get(2, 0)
    if kind == 1:
        return fields.get(3, "")
    raise DecodeError(f"IntOrString has impossible type {kind}")


def quantity(fields: dict[int, Any]) -> str:
    """api/resource Quantity: its string, left for the server to canonicalize; the zero Quantity is "0"."""
    text = fields.get(1)
    if text is None:
        return "0"
    if text == "":
        # Go's Quantity.Unmarshal parses the string and rejects an empty one.
        raise DecodeError("quantity is an empty string")
    return text


def or_bool(fields: dict[int, Any]) -> Any:
    """JSONSchemaPropsOrBool: the schema when there is one, else the boolean."""
    schema = fields.get(2)
    return schema if schema is not None else fields.get(1, False)


def or_array(fields: dict[int, Any]) -> Any:
    """JSONSchemaPropsOrArray: the list of schemas when non-empty, else the single schema (or null)."""
    return fields.get(2) or fields.get(1)


def or_strings(fields: dict[int, Any]) -> Any:
    """JSONSchemaPropsOrStringArray: the string list when non-empty, else the schema (or null)."""
    return fields.get(2) or fields.get(1)


def alias_list(fields: dict[int, Any]) -> list[Any]:
    """A message that wraps a named Go slice (ExtraValue, Verbs): its JSON is the list."""
    return fields.get(1, [])


BY_NAME: dict[str, Callable[[dict[int, Any]], Any]] = {
    "rfc3339": rfc3339,
    "rfc3339micro": rfc3339_micro,
    "go-duration": go_duration,
    "intorstr": int_or_string,
    "quantity": quantity,
    "or-bool": or_bool,
    "or-array": or_array,
    "or-strings": or_strings,
    "alias-list": alias_list,
}

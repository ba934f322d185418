"""DeviceClass and request selectors: CEL expressions over one `device`, in the one CEL environment.

Programs are compiled once per expression text (the environment's cache); a result is kept on the
device for each expression (`Device.matches`), so each (expression, device, slice version) is
evaluated once however many nodes, pods and cycles ask. A compile or runtime error aborts the
allocation with upstream's texts ("class gpu: selector #0: CEL compile error: …", "claim ns/c:
selector #1 on device d/p/x: CEL runtime error: no such key: y"). Called by `allocator.py`.
"""

from __future__ import annotations

from typing import Any

from admission import cel
from scheduler.dra.devices import Device, device_id_text

ENVIRONMENT = cel.Environment({"device": cel.DYN})
_COMPILE = "\x00compile:"  # prefix of a remembered compile error, apart from runtime ones


class SelectorError(Exception):
    """A selector that cannot be evaluated: the whole allocation fails with this text."""


def _result(expression: str, device: Device) -> bool | str:
    try:
        program = ENVIRONMENT.compile(expression)
    except cel.CompileError as err:
        return _COMPILE + str(err)
    try:
        value = program.evaluate({"device": device.cel_value(program.string_constants)})
    except cel.CelError as err:
        return str(err)
    if not isinstance(value, bool):
        return f"expression must evaluate to bool, got {type(value).__name__}"
    return value


def match(selectors: list[dict[str, Any]], device: Device, owner: str) -> bool:
    """Whether every selector accepts the device. `owner` names who wrote them for error texts:
    "class <name>" or "claim <namespace>/<name>"."""
    remembered = device.matches
    for index, selector in enumerate(selectors):
        expression = ((selector or {}).get("cel") or {}).get("expression")
        if expression is None:
            raise SelectorError(f"{owner}, selector #{index}: CEL expression empty (unsupported selector type?)")
        result = remembered.get(expression)
        if result is None:
            result = remembered[expression] = _result(expression, device)
        if result is True:
            continue
        if result is False:
            return False
        if result.startswith(_COMPILE):
            raise SelectorError(f"{owner}: selector #{index}: CEL compile error: {result[len(_COMPILE):]}")
        raise SelectorError(f"{owner}: selector #{index} on device {device_id_text(device.id)}: "
                            f"CEL runtime error: {result}")
    return True

"""What a printer is: column definitions plus a function from one object to its row cells.

Owns `Column` (a `meta.k8s.io/v1` TableColumnDefinition, with its description looked up lazily in
the 1.36 schemas the way upstream reads `SwaggerDoc()`), `Printer`, and the shared column shapes
(Name, Age, Containers/Images/Selector). The per-kind printers in this package build on it;
`apiserver/tables.py` turns a `Printer` into a Table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from apiserver import schemas

Cells = Callable[[dict[str, Any], datetime], list[Any]]


@dataclass(frozen=True)
class Doc:
    """A description taken from a schema property, e.g. Doc("core.v1.PodStatus", "podIP")."""

    definition: str
    prop: str

    def text(self) -> str:
        return _schema_doc(self.definition, self.prop)


@functools.cache
def _schema_doc(definition: str, prop: str) -> str:
    if definition.startswith("meta.v1."):
        name = "io.k8s.apimachinery.pkg.apis." + definition
    else:
        name = "io.k8s.api." + definition
    node = schemas.definitions().get(name, {}).get("properties", {}).get(prop, {})
    return str(node.get("description", ""))


@dataclass(frozen=True)
class Column:
    name: str
    type: str = "string"
    format: str = ""
    priority: int = 0
    description: str | Doc = ""

    def definition(self) -> dict[str, Any]:
        desc = self.description.text() if isinstance(self.description, Doc) else self.description
        return {"name": self.name, "type": self.type, "format": self.format, "description": desc, "priority": self.priority}


@dataclass(frozen=True)
class Printer:
    """Columns, the cells of one object, optional row conditions, optional list order."""

    columns: tuple[Column, ...]
    cells: Cells
    conditions: Callable[[dict[str, Any]], list[dict[str, Any]] | None] | None = None
    order: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None


NAME = Column("Name", format="name", description=Doc("meta.v1.ObjectMeta", "name"))
AGE = Column("Age", description=Doc("meta.v1.ObjectMeta", "creationTimestamp"))
CONTAINERS = Column("Containers", priority=1, description="Names of each container in the template.")
IMAGES = Column("Images", priority=1, description="Images referenced by each container in the template.")


def selector_column(definition: str) -> Column:
    return Column("Selector", priority=1, description=Doc(definition, "selector"))


def col(name: str, description: str | Doc = "", *, type: str = "string", priority: int = 0, format: str = "") -> Column:
    return Column(name, type=type, format=format, priority=priority, description=description)

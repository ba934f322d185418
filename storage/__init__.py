"""haru's storage layer: a durable LMDB object store with etcd v3 revision semantics.

The API server (and the benchmark) use only what this package exports: `Store` (open, read, write,
watch, compact), the values it returns (`Record`, `Event`, `ListResult`), the `Retention` policy and
the `errors` module. `storage/store.py` is where to start reading; it names the module behind each
part.
"""

from storage import errors
from storage.records import Event, ListResult, Record
from storage.retention import Retention
from storage.store import Store
from storage.watch_hub import Watcher

__all__ = ["Event", "ListResult", "Record", "Retention", "Store", "Watcher", "errors"]

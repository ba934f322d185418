"""`LibraryError`: how a library function reports a CEL runtime error with the upstream text.

Raised inside a Python implementation, cel-expr-python turns it into an ERROR value whose text
is `<STATUS CODE>: <message>`; `admission.cel.errors` strips the code again.
"""

from __future__ import annotations


class LibraryError(ValueError):
    """A runtime error of a Kubernetes CEL library function; the message is upstream's."""
